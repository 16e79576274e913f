"""A Septet bot that plays a uniformly random legal action, in every game.

The smallest complete bot: copy this folder to start your own (see README.md). Run it with
`septet bot serve bots/examples/random`, or directly: `python bot.py --address 127.0.0.1:50052`.
"""

from __future__ import annotations

import random
from typing import Any

from referee.sdk import Action, Bot, serve


class RandomBot(Bot):
    """Picks among the legal actions with its own RNG (never the global one)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__()
        self.rng = random.Random(seed)

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        # `info` is the seat's information state (a dataclass: info.hand, info.scores, ...);
        # `legal` lists every legal action. Return one of them.
        return legal[self.rng.randrange(len(legal))]


if __name__ == "__main__":
    serve(RandomBot())
