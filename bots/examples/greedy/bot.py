"""A Septet bot that plays the referee's greedy policy, in every game.

It bids (or bets) what its hand should win and then plays to make that exactly: wins tricks
cheaply while it needs them, sheds its highest losing card once it has enough. Each game's
policy is `greedy` in its module under referee/engine/games/. Run it with
`septet bot serve bots/examples/greedy`, or directly: `python bot.py --address 127.0.0.1:50052`.
"""

from __future__ import annotations

from typing import Any

from referee.games import get_game
from referee.sdk import Action, Bot, serve


class GreedyBot(Bot):
    """Answers with `get_game(info.game).greedy(info, legal)`: the game id is in every info state."""

    name = "greedy"

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        return get_game(info.game).greedy(info, legal)


if __name__ == "__main__":
    serve(GreedyBot())
