"""Hostile bot, the receiving half of a covert channel between two sandboxes (see lock-sender).

At its first decision it probes the locks the sender would hold on the shared runtime's files: a
flock that would block, or a record lock another process holds, means a bit crossed from another
sandbox: it raises BREACH. Refused (the calls fail with EPERM), it learns nothing and plays on.
"""

import fcntl
import os
import struct

from referee.botkit.sdk import Bot, serve

LOCK_FILES = ("/usr/bin/env", "/usr/bin/true")
F_WRLCK = 1
F_UNLCK = 2


def receive() -> list[str]:
    learned = []
    flocked, recorded = (os.open(path, os.O_RDONLY) for path in LOCK_FILES)
    try:
        fcntl.flock(flocked, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        learned.append(f"flock of {LOCK_FILES[0]} is held by another sandbox")
    except OSError:
        pass
    query = struct.pack("hhqqi", F_WRLCK, os.SEEK_SET, 0, 0, 0)
    try:
        answer = fcntl.fcntl(recorded, fcntl.F_GETLK, query)
    except OSError:
        pass
    else:
        if struct.unpack("hhqqi", answer)[0] != F_UNLCK:
            learned.append(f"a record lock on {LOCK_FILES[1]} is held by another sandbox")
    return learned


class LockReceiver(Bot):
    name = "hostile-lock-receiver"

    def __init__(self) -> None:
        super().__init__()
        self.tried = False

    def decide(self, info, legal):
        if not self.tried:
            self.tried = True
            learned = receive()
            if learned:
                raise RuntimeError("BREACH: " + "; ".join(learned))
        return legal[0]


if __name__ == "__main__":
    serve(LockReceiver())
