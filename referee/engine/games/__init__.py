"""The game ids Septet plays: `GAMES` maps each id to its `Game` descriptor.

The game modules are imported on first use of `GAMES` or `get_game`, so importing one game
module (`from referee.engine.games import oh_hell`) does not load the others.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from referee.engine.games.base import Game, GameError

GAME_MODULES = ("oh7", "oh_hell", "black_sevens", "seven_up_seven_down")


@cache
def all_games() -> dict[str, Game]:
    """Game id -> Game, in a stable order (the order of RULES.md)."""
    games: dict[str, Game] = {}
    for name in GAME_MODULES:
        module = importlib.import_module(f"referee.engine.games.{name}")
        for game in getattr(module, "GAMES", None) or (module.GAME,):
            games[game.id] = game
    return games


def get_game(game_id: str) -> Game:
    """The game with this id; an unknown id raises GameError naming the known ones."""
    games = all_games()
    try:
        return games[game_id]
    except KeyError:
        raise GameError(f"unknown game {game_id!r} (games: {', '.join(games)})") from None


def __getattr__(name: str) -> Any:
    if name == "GAMES":
        return all_games()
    raise AttributeError(name)
