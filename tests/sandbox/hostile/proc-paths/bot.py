"""Hostile bot: looks for the host's paths in /proc and its own paths at its first decision.

/proc/1/cmdline (bwrap's command line), /proc/self/mountinfo, /proc/self/cmdline and its working
folder: finding any of the paths targets.json names (the test's folders on the host) tells the
bot where the platform keeps its data: it raises BREACH.
"""

import contextlib
import json
import os
from pathlib import Path

from referee.botkit.sdk import Bot, serve

HERE = Path(__file__).resolve().parent
SOURCES = ("/proc/1/cmdline", "/proc/self/mountinfo", "/proc/self/cmdline", "/proc/1/mountinfo")


def attack() -> list[str]:
    """`host_paths` must appear nowhere; `folder_paths` (its own folder's, which a bind mount's
    root field in mountinfo does show) not in command lines nor its working folder."""
    targets = json.loads((HERE / "targets.json").read_text())
    seen = {"cwd": os.getcwd(), "here": str(HERE)}
    for source in SOURCES:
        with contextlib.suppress(OSError):
            seen[source] = Path(source).read_bytes().replace(b"\0", b" ").decode(errors="replace")
    found = [
        f"{path} in {where}" for where, text in seen.items() for path in targets["host_paths"] if path in text
    ]
    for where, text in seen.items():
        if "mountinfo" not in where:
            found += [f"{path} in {where}" for path in targets["folder_paths"] if path in text]
    return found


class ProcPaths(Bot):
    name = "hostile-proc-paths"

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
    serve(ProcPaths())
