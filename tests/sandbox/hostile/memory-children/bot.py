"""Hostile bot: four children each touch CHILD_BYTES at its first decision.

The test's memory limit is below what the four hold together. When every child reports that it
holds its share at once, the limit was per process, not per sandbox: it raises BREACH. Contained,
the sandbox's memory group refuses (the kernel kills a process of the sandbox) and the bot plays
on or forfeits, but never holds more than the limit.
"""

import subprocess
import sys
import time

from referee.botkit.sdk import Bot, serve

CHILDREN = 4
CHILD_BYTES = 300 << 20
CHILD = f"""
import time
hold = bytearray({CHILD_BYTES})
hold[::4096] = b"x" * ({CHILD_BYTES} // 4096)
print("holding", flush=True)
time.sleep(60)
"""


def attack() -> int:
    """How many children held their share at the same time."""
    children = [
        subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        for _ in range(CHILDREN)
    ]
    holding = 0
    deadline = time.monotonic() + 20
    for child in children:
        assert child.stdout is not None
        line = child.stdout.readline() if time.monotonic() < deadline else b""
        holding += line.startswith(b"holding")
    for child in children:
        child.kill()
        child.wait()
    return holding


class MemoryChildren(Bot):
    name = "hostile-memory-children"

    def __init__(self) -> None:
        super().__init__()
        self.tried = False

    def decide(self, info, legal):
        if not self.tried:
            self.tried = True
            holding = attack()
            if holding == CHILDREN:
                raise RuntimeError(f"BREACH: {CHILDREN} children held {CHILDREN * CHILD_BYTES} bytes at once")
        return legal[0]


if __name__ == "__main__":
    serve(MemoryChildren())
