"""Hostile bot: allocates and touches memory at its first decision until refused.

Holding more than BREACH_AT bytes means no memory limit held: it raises BREACH. Refused, the
MemoryError escapes decide and the bot forfeits (ERROR) with that reason.
"""

from referee.botkit.sdk import Bot, serve

CHUNK = 64 << 20
PAGE = 4096
BREACH_AT = 8 << 30


class MemoryHog(Bot):
    name = "hostile-memory-hog"

    def __init__(self) -> None:
        super().__init__()
        self.hoard: list[bytearray] = []

    def decide(self, info, legal):
        while len(self.hoard) * CHUNK < BREACH_AT:
            chunk = bytearray(CHUNK)
            chunk[::PAGE] = b"x" * (CHUNK // PAGE)  # touch every page: resident, not just reserved
            self.hoard.append(chunk)
        raise RuntimeError(f"BREACH: holds {len(self.hoard) * CHUNK} bytes")


if __name__ == "__main__":
    serve(MemoryHog())
