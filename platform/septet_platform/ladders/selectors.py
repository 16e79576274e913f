"""Ladder reads: every ladder, a ladder by game, the standings a ladder page, the Arena API and
`septet ladder` show, and the rating change each match made."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from septet_platform.bots.models import BotVersion
from septet_platform.bots.selectors import did_you_mean
from septet_platform.ladders import ratings
from septet_platform.ladders.models import Ladder, Rating, RatingChange
from septet_platform.matches.models import Match


def ladders_list() -> QuerySet[Ladder]:
    """Every ladder, by game id, the sandboxed one of a game before its open one."""
    return Ladder.objects.order_by("game", "-pool")


def ladder_get(*, game: str, pool: str = Ladder.Pool.SANDBOXED) -> Ladder:
    """The ladder of `game` in `pool` (the sandboxed one unless asked); raises Ladder.DoesNotExist
    saying so."""
    if pool not in Ladder.Pool.values:
        raise Ladder.DoesNotExist(f"no ladder pool {pool!r} (the pools: {', '.join(Ladder.Pool.values)})")
    ladder = Ladder.objects.filter(game=game, pool=pool).first()
    if ladder is None:
        raise Ladder.DoesNotExist(unknown_game_message(game, pool=pool))
    return ladder


def game_ladder(game: str) -> Ladder | None:
    """The sandboxed ladder of `game`, or None: the ladder a game's unrated matches (challenges,
    tables, qualification, tournaments) hang on for their table sizes and time control."""
    return Ladder.objects.filter(game=game, pool=Ladder.Pool.SANDBOXED).first()


def unknown_game_message(game: str, *, pool: str = Ladder.Pool.SANDBOXED) -> str:
    """Why `game` has no ladder: the closest game id, then every game id that has one."""
    games = list(Ladder.objects.filter(pool=pool).order_by("game").values_list("game", flat=True))
    known = f" (the ladders: {', '.join(games)})" if games else " (this server has no ladder yet)"
    return f"no ladder for game {game!r}{did_you_mean(game, games)}{known}"


def rating_changes(matches: Iterable[Match]) -> dict[tuple[int, int], int]:
    """The change of the displayed rating each (match id, bot version id) made, one query for all
    of `matches`; a pair is missing when its match changed no rating (unrated, not yet rated, or
    a duplicate set's rotation before its last)."""
    changes = RatingChange.objects.filter(match_id__in=[match.pk for match in matches]).values_list(
        "match_id", "rating__bot_version_id", "mu_before", "sigma_before", "mu_after", "sigma_after"
    )
    return {
        (match_id, version_id): ratings.display(mu_after, sigma_after).rating
        - ratings.display(mu_before, sigma_before).rating
        for match_id, version_id, mu_before, sigma_before, mu_after, sigma_after in changes
    }


@dataclass(frozen=True)
class Standing:
    """One bot's row on a ladder: its current version's rating on the Elo-like scale."""

    rank: int
    bot: str
    owner: str
    version: int
    rating: int
    low: int
    high: int
    games: int
    last_match: datetime | None
    bot_version_id: int
    mu: float
    sigma: float

    @property
    def provisional(self) -> bool:
        """Too few rated games for its place to mean much yet (ratings.PROVISIONAL_GAMES)."""
        return self.games < ratings.PROVISIONAL_GAMES


def standing_order(*, games: int, mu: float, sigma: float, bot: str) -> tuple[bool, float, float, str]:
    """The sort key of a ladder's standings, best first, for every place that ranks a ladder
    (this module, the site's ladder page): a version that has played rated games first, by mu,
    then the surer rating (smaller sigma), then the bot's name; a version with none after all of
    them. A new version starts at the default mu (or its predecessor's) with a wide interval:
    ranked by mu alone it would sit above bots that have proven a lower mu in many games."""
    return (games == 0, -mu, sigma, bot)


def ladder_standings(*, ladder: Ladder) -> list[Standing]:
    """Each bot with an ACTIVE version rated on `ladder` (its latest such version), best first
    (`standing_order`: the unplayed last); ranks 1, 2, 3, ..."""
    rows = Rating.objects.filter(ladder=ladder, bot_version__status=BotVersion.Status.ACTIVE).select_related(
        "bot_version__bot__owner"
    )
    current: dict[int, Rating] = {}
    for rating in rows:
        bot_id = rating.bot_version.bot_id
        if bot_id not in current or rating.bot_version.number > current[bot_id].bot_version.number:
            current[bot_id] = rating
    ordered = sorted(
        current.values(),
        key=lambda r: standing_order(games=r.games, mu=r.mu, sigma=r.sigma, bot=r.bot_version.bot.name),
    )
    standings = []
    for rank, rating in enumerate(ordered, start=1):
        shown = ratings.display(rating.mu, rating.sigma)
        version = rating.bot_version
        standings.append(
            Standing(
                rank=rank,
                bot=version.bot.name,
                owner=version.bot.owner.get_username(),
                version=version.number,
                rating=shown.rating,
                low=shown.low,
                high=shown.high,
                games=rating.games,
                # Only ratings_apply saves a played rating, once per rated match: its `updated` is
                # when the last one was recorded, without an aggregate over every match.
                last_match=rating.updated if rating.games else None,
                bot_version_id=version.pk,
                mu=rating.mu,
                sigma=rating.sigma,
            )
        )
    return standings
