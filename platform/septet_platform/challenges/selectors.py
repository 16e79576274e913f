"""Challenge reads: a challenge's matches and its results, per bot, with 95% intervals.

A duplicate set is the unit of a result, as in `septet compare`: within a set every bot played
every seat of one deal, so the luck of the cards is the same for all and what differs is play.
A bot's sample is its mean rank (and mean score) per set, over the sets whose every rotation is
over; an opponent's rank difference to the challenger is taken set by set, so the interval is that
of a paired difference (referee.tools.stats.mean_interval, Student t). Sets still playing count nothing:
a finished rotation of an unfinished set would show a result its seed is not yet published for.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import QuerySet

from referee.tools.stats import MeanInterval, mean_interval
from septet_platform.challenges.models import Challenge
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.selectors import OVER


@dataclass(frozen=True)
class BotResult:
    """One seated bot version's results over the challenge's sets that are over."""

    bot: str
    version: int
    rank: MeanInterval
    score: MeanInterval
    rank_difference: MeanInterval | None  # None for the challenger itself
    forfeits: int


@dataclass(frozen=True)
class ChallengeResults:
    challenge: Challenge
    matches: list[Match]
    sets_over: int
    results: list[BotResult]


def challenges_of(*, user_id: int, limit: int = 50) -> QuerySet[Challenge]:
    """`user_id`'s challenges, newest first."""
    return Challenge.objects.filter(requester_id=user_id).select_related("ladder", "challenger__bot")[:limit]


def challenge_get(*, challenge_id: int) -> Challenge:
    """The challenge with its ladder, requester and challenger; Challenge.DoesNotExist saying so."""
    challenge = (
        Challenge.objects.select_related("ladder", "requester", "challenger__bot")
        .filter(pk=challenge_id)
        .first()
    )
    if challenge is None:
        raise Challenge.DoesNotExist(f"no challenge {challenge_id}")
    return challenge


def challenge_results(challenge: Challenge) -> ChallengeResults:
    """The challenge's matches (set by set, rotation by rotation) and each bot's results."""
    matches = list(
        challenge.matches.select_related("ladder").prefetch_related("seats__bot_version__bot").order_by("id")
    )
    sets: dict[str, list[Match]] = defaultdict(list)
    for match in matches:
        sets[match.duplicate_set].append(match)
    over = [rotations for rotations in sets.values() if all(m.status in OVER for m in rotations)]
    seats = [seat for match in matches for seat in match.seats.all()]
    order = _versions_in_order(challenge, seats)
    per_set = [_set_means(rotations) for rotations in over]
    challenger = challenge.challenger_id
    results = []
    for version_id, (bot, number) in order.items():
        ranks = [means[version_id][0] for means in per_set if version_id in means]
        scores = [means[version_id][1] for means in per_set if version_id in means]
        differences = [
            means[version_id][0] - means[challenger][0]
            for means in per_set
            if version_id in means and challenger in means
        ]
        forfeits = sum(1 for seat in seats if seat.bot_version_id == version_id and seat.forfeit_status)
        results.append(
            BotResult(
                bot=bot,
                version=number,
                rank=mean_interval(ranks),
                score=mean_interval(scores),
                rank_difference=None if version_id == challenger else mean_interval(differences),
                forfeits=forfeits,
            )
        )
    return ChallengeResults(challenge=challenge, matches=matches, sets_over=len(over), results=results)


def _versions_in_order(challenge: Challenge, seats: Sequence[Seat]) -> dict[int, tuple[str, int]]:
    """Seated versions, the challenger first, then by seat of the first match."""
    order: dict[int, tuple[str, int]] = {
        challenge.challenger_id: (challenge.challenger.bot.name, challenge.challenger.number)
    }
    for seat in sorted(seats, key=lambda seat: (seat.match_id, seat.seat)):
        order.setdefault(seat.bot_version_id, (seat.bot_version.bot.name, seat.bot_version.number))
    return order


def _set_means(rotations: Sequence[Match]) -> dict[int, tuple[float, float]]:
    """Per version, its mean rank and mean score over the set's finished, ranked rotations."""
    ranks: dict[int, list[int]] = defaultdict(list)
    scores: dict[int, list[int]] = defaultdict(list)
    for match in rotations:
        if match.status != Match.Status.FINISHED:
            continue
        for seat in match.seats.all():
            if seat.rank is not None:
                ranks[seat.bot_version_id].append(seat.rank)
                scores[seat.bot_version_id].append(seat.score or 0)
    return {
        version: (sum(ranks[version]) / len(ranks[version]), sum(scores[version]) / len(scores[version]))
        for version in ranks
    }
