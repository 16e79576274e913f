"""Hostile bot: writes outside its private /tmp at its first decision.

Into its own folder, the runtime (/usr, the Python installation), /etc, and the folders
targets.json names (the data folder beside the database). Any file it manages to create there is
a breach: it raises BREACH. Its private /tmp is allowed (and vanishes with the sandbox).
"""

import json
import os
import sys
from pathlib import Path

from referee.botkit.sdk import Bot, serve

HERE = Path(__file__).resolve().parent


def attack() -> list[str]:
    targets = json.loads((HERE / "targets.json").read_text()) if (HERE / "targets.json").exists() else {}
    folders = [*targets.get("write", []), str(HERE), "/usr", sys.prefix, sys.base_prefix, "/etc", "/"]
    breaches = []
    for folder in folders:
        path = os.path.join(folder, "hostile-was-here")
        try:
            with open(path, "w") as out:
                out.write("owned")
            breaches.append(f"wrote {path}")
        except OSError:
            pass
    with open("/tmp/allowed", "w") as out:  # its own tmpfs: allowed, must not raise
        out.write("scratch")
    return breaches


class WriteOutside(Bot):
    name = "hostile-write-outside"

    def __init__(self) -> None:
        super().__init__()
        self.tried = False

    def decide(self, info, legal):
        if not self.tried:
            self.tried = True
            breaches = attack()
            if breaches:
                raise RuntimeError("BREACH: " + "; ".join(breaches))
        return legal[0]


if __name__ == "__main__":
    serve(WriteOutside())
