"""Hostile bot: allocates memory at its first decision until refused.

Holding more than BREACH_AT bytes means no memory limit held: it raises BREACH. Refused, the
MemoryError escapes decide and the bot forfeits (ERROR) with that reason.
"""

from referee.sdk import Bot, serve

CHUNK = 64 << 20
BREACH_AT = 8 << 30


class MemoryHog(Bot):
    name = "hostile-memory-hog"

    def __init__(self) -> None:
        super().__init__()
        self.hoard: list[bytearray] = []

    def decide(self, info, legal):
        while len(self.hoard) * CHUNK < BREACH_AT:
            self.hoard.append(bytearray(CHUNK))
        raise RuntimeError(f"BREACH: holds {len(self.hoard) * CHUNK} bytes")


if __name__ == "__main__":
    serve(MemoryHog())
