"""Tournament reads: the list, progress, standings by mean rank with 95% intervals, the crosstable.

Standings: a duplicate set is one deal played once per seat rotation, so luck of the cards and of
the seat cancels within it; an entrant's score for a set is its mean rank over the set's ranked
games. Its standing is the mean of those per-set means with a Student-t 95% interval
(referee.tools.stats). Entrants are listed by mean; `place` is 1 + the number of entrants whose interval
lies wholly better (never less than the place of an entrant listed above), so entrants whose
intervals overlap are statistically tied and may share a place rather than being separated by luck.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.utils import timezone

from referee.tools.stats import MeanInterval, mean_interval
from septet_platform.matches.models import Match, Seat
from septet_platform.tournaments.models import Entrant, Tournament

DONE = (Match.Status.FINISHED, Match.Status.ABORTED)


def tournaments_list(*, viewer: AbstractBaseUser | None = None) -> QuerySet[Tournament]:
    """Published tournaments, newest deadline first; staff see drafts too."""
    tournaments = Tournament.objects.all()
    if viewer is None or not getattr(viewer, "is_staff", False):
        tournaments = tournaments.filter(published=True)
    return tournaments


def tournament_get(*, name: str) -> Tournament:
    return Tournament.objects.get(name=name)


@dataclass(frozen=True)
class Progress:
    """Matches done out of those scheduled (the whole event when it is known), and a guess at the
    time left from the pace so far."""

    done: int
    scheduled: int
    total: int
    seconds_left: float | None

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def progress(tournament: Tournament) -> Progress:
    matches = Match.objects.filter(tournament=tournament).exclude(status=Match.Status.CANCELLED)
    scheduled = matches.count()
    done = matches.filter(status__in=DONE).count()
    per_round = matches.filter(tournament_round=1).count()
    total = max(scheduled, per_round * tournament.total_rounds)
    seconds_left = None
    if tournament.started and done and tournament.status == Tournament.Status.RUNNING:
        elapsed = (timezone.now() - tournament.started).total_seconds()
        seconds_left = elapsed / done * (total - done)
    return Progress(done=done, scheduled=scheduled, total=total, seconds_left=seconds_left)


def time_left(seconds: float | None) -> str:
    """A person's reading of a number of seconds ("about 4 min"), empty for None."""
    if seconds is None:
        return ""
    return f"about {timedelta(seconds=round(seconds))}"


@dataclass
class Standing:
    """One entrant's row: its mean rank over duplicate sets with the 95% interval."""

    entrant: Entrant
    interval: MeanInterval
    games: int
    place: int = 0
    tied_with: list[str] = field(default_factory=list)

    @property
    def bot(self) -> str:
        return self.entrant.bot.name

    @property
    def version(self) -> int:
        return self.entrant.version.number if self.entrant.version else 0

    @property
    def tied(self) -> bool:
        return bool(self.tied_with)

    @property
    def low(self) -> float:
        return self.interval.low

    @property
    def high(self) -> float:
        return self.interval.high


def _ranked_seats(tournament: Tournament) -> QuerySet[Seat]:
    return Seat.objects.filter(
        match__tournament=tournament, match__status=Match.Status.FINISHED, rank__isnull=False
    ).select_related("match")


def set_means(tournament: Tournament) -> dict[int, list[float]]:
    """Per frozen version id, its mean rank in each duplicate set it played (ranked games only)."""
    ranks: dict[tuple[int, str], list[int]] = defaultdict(list)
    for version_id, duplicate_set, rank in _ranked_seats(tournament).values_list(
        "bot_version", "match__duplicate_set", "rank"
    ):
        ranks[(version_id, duplicate_set)].append(rank)
    means: dict[int, list[float]] = defaultdict(list)
    for (version_id, _), values in sorted(ranks.items()):
        means[version_id].append(sum(values) / len(values))
    return means


def standings(tournament: Tournament) -> list[Standing]:
    """Every frozen entrant, best mean rank first (entrants without a game yet last, by name)."""
    entrants = list(
        tournament.entrants.filter(version__isnull=False)
        .select_related("bot", "version")
        .order_by("bot__name")
    )
    means = set_means(tournament)
    games: dict[int, int] = defaultdict(int)
    for version_id in _ranked_seats(tournament).values_list("bot_version", flat=True):
        games[version_id] += 1
    rows = [
        Standing(
            entrant=e,
            interval=mean_interval(means.get(e.version_id or 0, [])),
            games=games[e.version_id or 0],
        )
        for e in entrants
    ]
    rows.sort(key=lambda row: (math.isnan(row.interval.mean), row.interval.mean, row.bot))
    for row, place in zip(rows, places([row.interval for row in rows]), strict=True):
        row.place = place
        if math.isnan(row.interval.mean):
            continue
        row.tied_with = [
            other.bot
            for other in rows
            if other is not row
            and not math.isnan(other.interval.mean)
            and other.interval.low <= row.interval.high
            and row.interval.low <= other.interval.high
        ]
    return rows


def places(intervals: list[MeanInterval]) -> list[int]:
    """The places of entrants listed by mean (best first; no games yet: last): 1 + the number of
    others whose interval lies wholly better, never better than the place of one listed above
    (a wide interval must not read as a better place)."""
    played = [interval for interval in intervals if not math.isnan(interval.mean)]
    result: list[int] = []
    floor = 1
    for interval in intervals:
        if math.isnan(interval.mean):
            result.append(len(intervals))
            continue
        better = sum(other.high < interval.low for other in played if other is not interval)
        floor = max(floor, 1 + better)
        result.append(floor)
    return result


@dataclass(frozen=True)
class Crosstable:
    """`cells[a][b]`: (games where a finished ahead of b, games they shared), a and b bot names."""

    bots: list[str]
    cells: dict[str, dict[str, tuple[int, int]]]


def crosstable(tournament: Tournament) -> Crosstable:
    names = {
        e.version_id: e.bot.name
        for e in tournament.entrants.filter(version__isnull=False).select_related("bot")
    }
    by_match: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for match_id, version_id, rank in _ranked_seats(tournament).values_list("match", "bot_version", "rank"):
        if version_id in names:
            by_match[match_id].append((names[version_id], rank))
    bots = sorted(names.values())
    cells: dict[str, dict[str, tuple[int, int]]] = {a: {b: (0, 0) for b in bots if b != a} for a in bots}
    for seats in by_match.values():
        for a, rank_a in seats:
            for b, rank_b in seats:
                if a != b:
                    ahead, shared = cells[a][b]
                    cells[a][b] = (ahead + (rank_a < rank_b), shared + 1)
    return Crosstable(bots=bots, cells=cells)


def tournament_matches(tournament: Tournament) -> QuerySet[Match]:
    return (
        Match.objects.filter(tournament=tournament)
        .select_related("ladder")
        .prefetch_related("seats__bot_version__bot")
        .order_by("tournament_round", "pk")
    )


def replay_files(tournament: Tournament) -> list[tuple[Match, str]]:
    """Each played match of the event with its replay's name in the replay store (one missing
    from the store is found, and left out, when it is read)."""
    played = tournament_matches(tournament).filter(status__in=DONE).exclude(replay="")
    return [(match, match.replay) for match in played]
