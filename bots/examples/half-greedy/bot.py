"""A Septet bot that plays the greedy policy half of the time and a random legal action otherwise.

Its strength lies between `random` and `greedy`, which gives a ladder a bot in the middle: the
ratings then have an order of three to get right, not two. Each match reseeds its RNG from the
match id and its seat (`start_match`), so playing one match again plays it the same way. Run it with
`septet bot serve bots/examples/half-greedy`, or directly: `python bot.py --address 127.0.0.1:50052`.
"""

from __future__ import annotations

import random
from typing import Any

from referee.games import get_game
from referee.sdk import Action, Bot, MatchStart, serve

GREEDY_SHARE = 0.5


class HalfGreedyBot(Bot):
    """Greedy with probability GREEDY_SHARE, else uniformly random among the legal actions."""

    name = "half-greedy"

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random()

    def start_match(self, start: MatchStart) -> None:
        self.rng = random.Random(f"{start.match_id}/{start.seat}")

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        if self.rng.random() < GREEDY_SHARE:
            return get_game(info.game).greedy(info, legal)
        return legal[self.rng.randrange(len(legal))]


if __name__ == "__main__":
    serve(HalfGreedyBot())
