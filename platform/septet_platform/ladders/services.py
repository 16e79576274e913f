"""Ladder writes: one ladder per game, ratings created and updated from finished matches.

Ratings change only in `ratings_apply`, which holds the Ladder row locked (SELECT ... FOR UPDATE)
for its whole transaction: workers finishing matches of one ladder at once apply them one after
the other, so none reads a rating another is about to overwrite. Matches of different ladders
never wait for each other. The match's `ratings_applied` flag is set in the same transaction, so a
task delivered twice applies a match once. Two-seat duplicate sets are rated once per set
(`SETS_RATED_ONCE_AT`).
"""

from __future__ import annotations

from django.db import transaction

from referee.games import all_games
from septet_platform.bots.models import BotVersion
from septet_platform.ladders import ratings
from septet_platform.ladders.models import Ladder, Rating, RatingChange
from septet_platform.matches.models import Match, Seat

DEFAULT_DECISION_SECONDS = 1.0
DEFAULT_BANK_SECONDS = 10.0


class RatingError(ValueError):
    """A match that cannot be rated as it stands (not finished, unranked seats, ...)."""


def ladders_ensure() -> list[Ladder]:
    """One Ladder per game id, created with the game's players range and the default time control;
    ladders that exist are left as their organisers set them. Returns them in the games' order."""
    ladders = []
    for game in all_games().values():
        ladder, _ = Ladder.objects.get_or_create(
            game=game.id,
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
    rating = Rating.objects.filter(ladder=ladder, bot_version=bot_version).first()
    if rating is not None:
        return rating
    predecessor = (
        Rating.objects.filter(
            ladder=ladder, bot_version__bot_id=bot_version.bot_id, bot_version__number__lt=bot_version.number
        )
        .order_by("-bot_version__number")
        .first()
    )
    start = ratings.initial(predecessor.mu if predecessor else None)
    rating, _ = Rating.objects.get_or_create(
        ladder=ladder, bot_version=bot_version, defaults={"mu": start.mu, "sigma": start.sigma}
    )
    return rating


SETS_RATED_ONCE_AT = frozenset({2})
"""Table sizes at which a duplicate set is rated as one result, on each bot's mean rank over its
rotations: at two seats that orders a ladder in about half the matches rating each game does; at
three and more it is slower (docs/ratings.md, benchmarks/rating_quality.py)."""


def ratings_apply(*, match: Match) -> list[RatingChange]:
    """Updates the Rating of every seated version from the match's ranks and records one
    RatingChange per seat; returns them in seat order. A match already applied, unrated, aborted
    or cancelled changes nothing (returns []); one not finished, or finished without ranks, raises
    RatingError and changes nothing.

    A two-seat match of a duplicate set is rated with its set instead (SETS_RATED_ONCE_AT): once
    no rotation is left to play, on each version's mean rank over the finished rotations, by
    whichever call comes last; the calls before return []."""
    with transaction.atomic():
        ladder = Ladder.objects.select_for_update().get(pk=match.ladder_id)  # one writer per ladder
        current = Match.objects.select_for_update().get(pk=match.pk)
        if current.ratings_applied or not current.rated:
            return []
        if current.status in (Match.Status.SCHEDULED, Match.Status.RUNNING):
            raise RatingError(f"match {current.pk} is {current.status}, not finished: nothing to rate yet")
        seats = list(Seat.objects.filter(match=current).select_related("bot_version").order_by("seat"))
        if current.duplicate_set and len(seats) in SETS_RATED_ONCE_AT:
            changes = _duplicate_set_apply(ladder, current)
        elif current.status != Match.Status.FINISHED:
            return []  # aborted or cancelled: nothing to rate
        else:
            _check_rateable(current, seats)
            results = [(seat.bot_version, int(seat.rank or 0)) for seat in seats]
            changes = _results_apply(ladder, current, results, games=1)
            current.ratings_applied = True
            current.save(update_fields=["ratings_applied"])
    match.ratings_applied = current.ratings_applied
    return changes


def _duplicate_set_apply(ladder: Ladder, current: Match) -> list[RatingChange]:
    """Rates `current`'s duplicate set as one result once none of its rotations waits to be
    played; marks every finished rotation applied. [] while rotations are still to come."""
    rotations = list(
        Match.objects.select_for_update()
        .filter(ladder=ladder, duplicate_set=current.duplicate_set)
        .order_by("pk")
    )
    if any(rotation.status in (Match.Status.SCHEDULED, Match.Status.RUNNING) for rotation in rotations):
        return []  # the last rotation to finish rates the set
    finished = [
        rotation for rotation in rotations if rotation.status == Match.Status.FINISHED and rotation.rated
    ]
    if not finished or any(rotation.ratings_applied for rotation in finished):
        return []
    ranks: dict[int, list[int]] = {}
    versions: dict[int, BotVersion] = {}
    for rotation in finished:
        seats = list(Seat.objects.filter(match=rotation).select_related("bot_version").order_by("seat"))
        _check_rateable(rotation, seats)
        for seat in seats:
            versions.setdefault(seat.bot_version_id, seat.bot_version)
            ranks.setdefault(seat.bot_version_id, []).append(int(seat.rank or 0))
    means = {pk: sum(held) / len(held) for pk, held in ranks.items()}
    # Competition ranking of the mean ranks: equal means share a rank (1, 1, 3).
    results = [
        (versions[pk], 1 + sum(other < mean for other in means.values())) for pk, mean in means.items()
    ]
    changes = _results_apply(ladder, finished[-1], results, games=len(finished))
    Match.objects.filter(pk__in=[rotation.pk for rotation in finished]).update(ratings_applied=True)
    current.ratings_applied = current in finished
    return changes


def _results_apply(
    ladder: Ladder, match: Match, results: list[tuple[BotVersion, int]], *, games: int
) -> list[RatingChange]:
    """One rating update from (version, rank) results, recorded against `match`; each rating's
    game count grows by `games` (the matches the result stands for)."""
    held = [rating_get_or_create(ladder=ladder, bot_version=version) for version, _ in results]
    before = [ratings.Belief(rating.mu, rating.sigma) for rating in held]
    after = ratings.rate(before, [rank for _, rank in results])
    changes = []
    for rating, (_, rank), old, new in zip(held, results, before, after, strict=True):
        rating.mu, rating.sigma, rating.games = new.mu, new.sigma, rating.games + games
        rating.save(update_fields=["mu", "sigma", "games", "updated"])
        changes.append(
            RatingChange.objects.create(
                rating=rating,
                match=match,
                rank=rank,
                mu_before=old.mu,
                sigma_before=old.sigma,
                mu_after=new.mu,
                sigma_after=new.sigma,
            )
        )
    return changes


def _check_rateable(match: Match, seats: list[Seat]) -> None:
    if len(seats) < 2:
        raise RatingError(f"match {match.pk} has {len(seats)} seat(s); a rated match needs at least 2")
    unranked = [seat.seat for seat in seats if seat.rank is None]
    if unranked:
        raise RatingError(f"match {match.pk} is finished but seats {unranked} have no rank")
    versions = [seat.bot_version_id for seat in seats]
    if len(set(versions)) != len(versions):
        raise RatingError(f"match {match.pk} seats one bot version twice; it cannot be rated")
