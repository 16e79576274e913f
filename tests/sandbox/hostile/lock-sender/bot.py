"""Hostile bot, the sending half of a covert channel between two sandboxes of different users.

As it starts, it takes an exclusive flock and a fcntl record lock on files of the shared read-only
runtime (LOCK_FILES) and holds them while it runs: one bit each that the receiver (lock-receiver,
started at the same time for another user) would read. Refused, it plays on as if nothing happened.
"""

import contextlib
import fcntl
import os

from referee.botkit.sdk import Bot, serve

LOCK_FILES = ("/usr/bin/env", "/usr/bin/true")
held: list[int] = []


def send() -> None:
    flocked, recorded = (os.open(path, os.O_RDONLY) for path in LOCK_FILES)
    held.extend([flocked, recorded])
    with contextlib.suppress(OSError):
        fcntl.flock(flocked, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with contextlib.suppress(OSError):
        fcntl.lockf(recorded, fcntl.LOCK_SH | fcntl.LOCK_NB)


class LockSender(Bot):
    name = "hostile-lock-sender"

    def decide(self, info, legal):
        return legal[0]


if __name__ == "__main__":
    send()
    serve(LockSender())
