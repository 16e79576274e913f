"""The stable public name of the engine's games for bots (`from referee.games import get_game`).

The games live in `referee.engine.games`; this package and its modules (`referee.games.oh7`,
`referee.games.base`, ...) re-export them, so bots written against `referee.games` keep working
whatever the referee's layout. The objects are the engine's own: `referee.games.get_game` is
`referee.engine.games.get_game`.
"""

from __future__ import annotations

from typing import Any

from referee.engine.games import GAME_MODULES, all_games, get_game
from referee.engine.games.base import Game, GameError

__all__ = ["GAMES", "GAME_MODULES", "Game", "GameError", "all_games", "get_game"]


def __getattr__(name: str) -> Any:
    if name == "GAMES":
        return all_games()
    raise AttributeError(name)
