"""Hostile bot: at its first decision, SIGKILLs the machine's processes whose pids targets.json
lists (the test starts a sacrificial one) and every pid up to 4096 but its own threads'; then plays on.
A new PID namespace shows it only its own processes, so nothing outside can be reached."""

import contextlib
import json
import os
import signal
from pathlib import Path

from referee.botkit.sdk import Bot, serve

HERE = Path(__file__).resolve().parent


def attack() -> None:
    targets = json.loads((HERE / "targets.json").read_text()) if (HERE / "targets.json").exists() else {}
    mine = {int(thread) for thread in os.listdir("/proc/self/task")}  # kill(tid) kills the process
    for pid in [*targets.get("pids", []), *range(2, 4096)]:
        if pid not in mine:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


class KillOutside(Bot):
    name = "hostile-kill-outside"

    def __init__(self) -> None:
        super().__init__()
        self.tried = False

    def decide(self, info, legal):
        if not self.tried:
            self.tried = True
            attack()
        return legal[0]


if __name__ == "__main__":
    serve(KillOutside())
