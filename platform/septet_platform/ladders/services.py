"""Ladder writes: one ladder per game, ratings created and updated from finished matches.

Ratings change only in `ratings_apply`, which holds the Ladder row locked (SELECT ... FOR UPDATE)
for its whole transaction: workers finishing matches of one ladder at once apply them one after
the other, so none reads a rating another is about to overwrite. Matches of different ladders
never wait for each other. The match's `ratings_applied` flag is set in the same transaction, so a
task delivered twice applies a match once.
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


def ratings_apply(*, match: Match) -> list[RatingChange]:
    """Updates the Rating of every seated version from the match's ranks and records one
    RatingChange per seat; returns them in seat order. A match already applied, unrated, aborted
    or cancelled changes nothing (returns []); one not finished, or finished without ranks, raises
    RatingError and changes nothing."""
    with transaction.atomic():
        ladder = Ladder.objects.select_for_update().get(pk=match.ladder_id)  # one writer per ladder
        current = Match.objects.select_for_update().get(pk=match.pk)
        if current.ratings_applied or not current.rated:
            return []
        if current.status in (Match.Status.ABORTED, Match.Status.CANCELLED):
            return []
        if current.status != Match.Status.FINISHED:
            raise RatingError(f"match {current.pk} is {current.status}, not finished: nothing to rate yet")
        seats = list(Seat.objects.filter(match=current).select_related("bot_version").order_by("seat"))
        _check_rateable(current, seats)
        held = [rating_get_or_create(ladder=ladder, bot_version=seat.bot_version) for seat in seats]
        before = [ratings.Belief(rating.mu, rating.sigma) for rating in held]
        after = ratings.rate(before, [int(seat.rank) for seat in seats])
        changes = []
        for rating, old, new in zip(held, before, after, strict=True):
            rating.mu, rating.sigma, rating.games = new.mu, new.sigma, rating.games + 1
            rating.save(update_fields=["mu", "sigma", "games", "updated"])
            changes.append(
                RatingChange.objects.create(
                    rating=rating,
                    match=current,
                    mu_before=old.mu,
                    sigma_before=old.sigma,
                    mu_after=new.mu,
                    sigma_after=new.sigma,
                )
            )
        current.ratings_applied = True
        current.save(update_fields=["ratings_applied"])
    match.ratings_applied = True
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
