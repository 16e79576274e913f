"""Hostile bot: fills the folder of its own socket (and /tmp) at its first decision.

It writes files of CHUNK bytes there until refused (ENOSPC, or the file-size limit). Holding
BREACH_AT bytes in either means their total is not bounded (a disk on the host would fill): it
raises BREACH. Contained, it removes nothing and plays on: its socket still works.
"""

import os
from pathlib import Path

from referee.botkit.sdk import Bot, serve

CHUNK = b"f" * (1 << 20)
BREACH_AT = 64 << 20
FOLDERS = (
    Path(os.environ.get("SEPTET_BOT_ADDRESS", "unix:/run/septet/bot.sock").removeprefix("unix:")).parent,
)


def flood(folder: Path) -> int:
    written = 0
    index = 0
    while written < BREACH_AT:
        try:
            with open(folder / f"flood-{index}", "wb") as sink:
                for _ in range(8):
                    sink.write(CHUNK)
                    sink.flush()
                    written += len(CHUNK)
        except OSError:
            return written
        index += 1
    return written


class SocketFlood(Bot):
    name = "hostile-socket-flood"

    def __init__(self) -> None:
        super().__init__()
        self.tried = False

    def decide(self, info, legal):
        if not self.tried:
            self.tried = True
            for folder in FOLDERS:
                written = flood(folder)
                if written >= BREACH_AT:
                    raise RuntimeError(f"BREACH: wrote {written} bytes into {folder}")
        return legal[0]


if __name__ == "__main__":
    serve(SocketFlood())
