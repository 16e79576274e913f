"""Hostile bot: a fork bomb at its first decision.

Forks children that sleep for an hour until fork fails, then plays on, leaving them behind.
Forking more than BREACH_AT processes means no process limit held: it raises BREACH.
"""

import os
import time

from referee.botkit.sdk import Bot, serve

BREACH_AT = 2000


def attack() -> int:
    forked = 0
    try:
        while forked < BREACH_AT:
            if os.fork() == 0:
                time.sleep(3600)
                os._exit(0)
            forked += 1
    except OSError:
        pass
    return forked


class ForkBomb(Bot):
    name = "hostile-fork-bomb"

    def __init__(self) -> None:
        super().__init__()
        self.tried = False

    def decide(self, info, legal):
        if not self.tried:
            self.tried = True
            if attack() >= BREACH_AT:
                raise RuntimeError(f"BREACH: forked {BREACH_AT} processes")
        return legal[0]


if __name__ == "__main__":
    serve(ForkBomb())
