"""Ladder writes: two ladders per game (sandboxed and open), ratings created and updated from
finished matches.

Ratings change only in `ratings_apply` (rating_writer.py): under the ladder's row lock, in
batches of every match of the ladder waiting to be rated, in order, each match once.
"""

from __future__ import annotations

from referee.engine.games import all_games
from septet_platform.bots.models import BotVersion
from septet_platform.ladders.models import Ladder, Rating
from septet_platform.ladders.rating_writer import (
    SETS_RATED_ONCE_AT,
    RatingError,
    ratings_apply,
    ratings_apply_waiting,
    ratings_held,
)

__all__ = [
    "SETS_RATED_ONCE_AT",
    "RatingError",
    "ladders_ensure",
    "rating_get_or_create",
    "ratings_apply",
    "ratings_apply_waiting",
    "ratings_held",
]

DEFAULT_DECISION_SECONDS = 1.0
DEFAULT_BANK_SECONDS = 10.0


def ladders_ensure() -> list[Ladder]:
    """Two Ladders per game id, the sandboxed one and the open one (models.Ladder), created with
    the game's players range and the default time control; ladders that exist are left as their
    organisers set them. Returns them in the games' order, the sandboxed one of a game first."""
    ladders = []
    for game in all_games().values():
        for pool in (Ladder.Pool.SANDBOXED, Ladder.Pool.OPEN):
            ladder, _ = Ladder.objects.get_or_create(
                game=game.id,
                pool=pool,
                defaults={
                    "min_players": game.players.start,
                    "max_players": game.players.stop - 1,
                    "decision_seconds": DEFAULT_DECISION_SECONDS,
                    "bank_seconds": DEFAULT_BANK_SECONDS,
                },
            )
            ladders.append(ladder)
    return ladders


def rating_get_or_create(*, ladder: Ladder, bot_version: BotVersion) -> Rating:
    """The version's Rating on `ladder`; a new one starts from the mean of the bot's latest earlier
    version rated on this ladder (with fresh uncertainty), or from the model's defaults."""
    return ratings_held(ladder=ladder, versions=[bot_version])[bot_version.pk]
