"""The game ids Septet plays: `GAMES` maps each id to its `Game` descriptor."""

from __future__ import annotations

from referee.games import black_sevens, oh7, oh_hell, seven_up_seven_down
from referee.games.base import GameError
from referee.games.base import Game as Game

GAMES: dict[str, Game] = {
    game.id: game
    for game in (
        *oh7.GAMES,
        oh_hell.GAME,
        black_sevens.GAME,
        seven_up_seven_down.GAME,
    )
}


def get_game(game_id: str) -> Game:
    """The game with this id; an unknown id raises GameError naming the known ones."""
    try:
        return GAMES[game_id]
    except KeyError:
        raise GameError(
            f"unknown game {game_id!r} (games: {', '.join(GAMES)})"
        ) from None
