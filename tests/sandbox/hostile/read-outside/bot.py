"""Hostile bot: reads what lies outside its folder at its first decision.

The database file, another bot's files, the project's files, /etc/shadow and /etc/passwd, the
environment of the sandbox's first process (/proc/1/environ), and secrets in its
environment (targets.json, written next to this file by the test, names them). Anything it can
read is a breach: it raises, so the test sees a forfeit whose reason starts with BREACH.
Contained, it plays on.
"""

import contextlib
import json
import os
from pathlib import Path

from referee.botkit.sdk import Bot, serve

HERE = Path(__file__).resolve().parent


def attack() -> list[str]:
    targets = json.loads((HERE / "targets.json").read_text()) if (HERE / "targets.json").exists() else {}
    paths = [*targets.get("read", []), "/etc/shadow", "/etc/passwd", "/etc/hostname", "/proc/1/environ"]
    breaches = []
    for path in paths:
        with contextlib.suppress(OSError):
            breaches.append(f"read {path}: {Path(path).read_bytes()[:40]!r}")
    for name in targets.get("secrets", []):
        if name in os.environ:
            breaches.append(f"found secret {name} in the environment")
    return breaches


class ReadOutside(Bot):
    name = "hostile-read-outside"

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
    serve(ReadOutside())
