"""The rating writer: a ladder's ratings change here only, in batches, in order, once per match.

Ratings of one ladder change one result after another, each update reading the beliefs the one
before it wrote, so they are written under the ladder's row lock (SELECT ... FOR NO KEY UPDATE on
the Ladder: inserts that merely point at the ladder are not held up); matches of different ladders
never wait for each other.

Batches. A worker that has recorded a match calls `ratings_apply`. If the ladder's lock is free it
takes it and applies not only its own match but every match of the ladder recorded and not yet
rated (up to BATCH_LIMIT), with a fixed number of statements whatever the batch's size: read the
matches, their seats and the ratings they touch, then write the ratings, the rating changes and
the matches' `ratings_applied` flags back in bulk. If the lock is taken, the worker does not wait
for it (SKIP LOCKED): it leaves its match to the holder and goes on with its next match. Every
holder, once it has let go, looks for matches recorded meanwhile and takes the lock again for them
(at most MAX_ROUNDS times; the next match recorded on the ladder, or the sweep, takes over after
that), so a match left to the holder is never left behind. At a trickle a batch is one match;
under load one worker drains what the others recorded, the time the lock is held per match falls
as the load rises, and no worker or database connection sits waiting on the lock. Applied one
match per transaction, each worker waiting its turn (about four statements per seat), the lock
capped a ladder near 90 matches a second.

Order. A batch applies its matches by (finished, id), and batches follow one another under the
lock, so the ids of a ladder's RatingChanges are the order its results were applied in: replaying
the results in that order (`ratings.replay`) gives exactly the stored ratings. A match's changes
and its `ratings_applied` flag are written in one transaction, so it is applied once however many
workers (or the sweep, `matches_rate_unrated`) ask for it.

Two-seat duplicate sets are rated once per set (SETS_RATED_ONCE_AT): once no rotation waits to be
played, on each version's mean rank over the finished rotations, recorded on the last finished
rotation, by whichever batch first finds the set complete.
"""

from __future__ import annotations

import logging
import math
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection, models, transaction
from django.utils import timezone

from septet_platform.bots.models import BotVersion
from septet_platform.ladders import ratings
from septet_platform.ladders.models import Ladder, Rating, RatingChange
from septet_platform.matches.models import Match, Seat

log = logging.getLogger(__name__)

BATCH_LIMIT = 500
"""Matches one batch applies at most: bounds the time the lock is held (a few tens of
milliseconds) while still letting a long backlog drain in one go."""
MAX_ROUNDS = 4
"""Batches one call applies at most, one after another, while matches keep waiting."""

SETS_RATED_ONCE_AT = frozenset({2})
"""Table sizes at which a duplicate set is rated as one result, on each bot's mean rank over its
rotations: at two seats that orders a ladder in about half the matches rating each game does; at
three and more it is slower (docs/ratings.md, benchmarks/rating_quality.py)."""

_WAITING = (Match.Status.SCHEDULED, Match.Status.RUNNING)
_MATCH_FIELDS = ("id", "ladder", "status", "rated", "ratings_applied", "finished", "duplicate_set")


class RatingError(ValueError):
    """A match that cannot be rated as it stands (not finished, unranked seats, ...)."""


@dataclass(frozen=True)
class _SeatRow:
    seat: int
    version: int
    bot: int
    number: int
    rank: int | None


class RatingBook:
    """The ratings of some bots on one ladder, read in one query, changed in memory, written back
    in bulk (`save`). A version without a rating gets one the first time it is asked for, starting
    from the mean its bot's latest earlier version holds at that moment (fresh uncertainty), as
    rating one match after another would give it. Only under the ladder's lock."""

    def __init__(self, ladder: Ladder, bots: Iterable[int]) -> None:
        self.ladder = ladder
        self._held: dict[int, Rating] = {}
        self._numbers: dict[int, tuple[int, int]] = {}  # version -> (bot, number)
        self._new: list[Rating] = []
        self._changed: set[int] = set()
        rows = Rating.objects.filter(ladder=ladder, bot_version__bot_id__in=set(bots)).values_list(
            "id", "bot_version_id", "bot_version__bot_id", "bot_version__number", "mu", "sigma", "games"
        )
        for pk, version, bot, number, mu, sigma, games in rows:
            self._held[version] = Rating(
                pk=pk, ladder=ladder, bot_version_id=version, mu=mu, sigma=sigma, games=games
            )
            self._numbers[version] = (bot, number)

    def get(self, version: int, bot: int, number: int) -> Rating:
        """The version's rating, made (in memory) from its predecessor's when it has none."""
        held = self._held.get(version)
        if held is not None:
            return held
        earlier = [
            (held_number, self._held[other].mu)
            for other, (held_bot, held_number) in self._numbers.items()
            if held_bot == bot and held_number < number
        ]
        start = ratings.initial(max(earlier)[1] if earlier else None)
        rating = Rating(ladder=self.ladder, bot_version_id=version, mu=start.mu, sigma=start.sigma, games=0)
        self._held[version] = rating
        self._numbers[version] = (bot, number)
        self._new.append(rating)
        return rating

    def changed(self, rating: Rating) -> None:
        """Marks `rating` to be written by `save`."""
        if rating.pk is not None:
            self._changed.add(rating.bot_version_id)

    def save(self) -> None:
        """Creates the new ratings and writes the changed ones: one statement each at most."""
        now = timezone.now()
        if self._new:
            Rating.objects.bulk_create(self._new)  # their ids are set: rating changes point at them
            self._new = []
        changed = [self._held[version] for version in self._changed]
        for rating in changed:
            rating.updated = now
        if changed:
            _ratings_update(changed, now)
        self._changed = set()


def _ratings_update(changed: list[Rating], now: datetime) -> None:
    """One UPDATE ... FROM (VALUES ...) for every changed rating: Django's bulk_update builds a
    CASE per field and row, which cost the writer more than all its other statements together,
    inside the ladder's lock. (PostgreSQL, and SQLite from 3.33.)"""
    table = connection.ops.quote_name(Rating._meta.db_table)
    rows = ", ".join(["(%s, %s, %s, %s)"] * len(changed))
    values: list[object] = [value for r in changed for value in (r.pk, float(r.mu), float(r.sigma), r.games)]
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH new (id, mu, sigma, games) AS (VALUES {rows}) "
            f"UPDATE {table} SET mu = new.mu, sigma = new.sigma, games = new.games, updated = %s "
            f"FROM new WHERE {table}.id = new.id",
            [*values, now],
        )


def ratings_held(*, ladder: Ladder, versions: Sequence[BotVersion]) -> dict[int, Rating]:
    """The Rating of each of `versions` on `ladder` by version id, the missing ones created (see
    RatingBook) in a few statements whatever their number. Called under the ladder's lock."""
    book = RatingBook(ladder, {version.bot_id for version in versions})
    held = {version.pk: book.get(version.pk, version.bot_id, version.number) for version in versions}
    book.save()
    return held


def ratings_apply(*, match: Match) -> list[RatingChange]:
    """Applies `match`, and every other match of its ladder waiting to be rated, unless another
    writer holds the ladder's lock (it then applies them: see the module docstring); returns the
    match's own RatingChanges in seat order when this call applied it, else []. `match` may be a
    copy read before the match was recorded (its status is read again). A match already applied,
    unrated, aborted or cancelled gets none; one not finished, or finished without ranks, raises
    RatingError and nothing at all is changed.

    A two-seat match of a duplicate set is rated with its set (SETS_RATED_ONCE_AT): by the batch
    that finds no rotation left to play, on the last finished rotation; [] for the others."""
    if match.ratings_applied or not match.rated:  # neither is ever undone: `match` may be a copy
        return []
    batch = _apply_waiting(match.ladder_id, requested=match.pk)  # reads the match again, locked
    if batch is None:
        return []
    match.ratings_applied = match.pk in batch.applied
    return batch.changes.get(match.pk, [])


def ratings_apply_waiting(*, ladder: Ladder) -> int:
    """Applies the ladder's matches waiting to be rated unless another writer holds its lock;
    how many it applied. Whoever else takes a ladder's lock (the scheduler) calls this once it
    has let go, so a writer that found the lock taken by it is never left waiting for the sweep."""
    batch = _apply_waiting(ladder.pk, requested=None)
    return len(batch.applied) if batch is not None else 0


def _apply_waiting(ladder_id: int, *, requested: int | None) -> _Batch | None:
    """The writer's rounds: take the ladder's lock if it is free (never wait for it), apply what
    waits, let go, and look again: a match recorded while the lock was held was left to us by its
    writer. At most MAX_ROUNDS, so no worker stays the ladder's writer for ever under a steady
    load (the next match recorded takes over). The first round's batch, or None if the lock was
    taken."""
    first: _Batch | None = None
    passed_over: set[int] = set()
    for _ in range(MAX_ROUNDS):
        with transaction.atomic():
            ladder = (
                Ladder.objects.select_for_update(skip_locked=True, no_key=True).filter(pk=ladder_id).first()
            )
            if ladder is None:
                return first  # its holder looks again once it lets go
            locked = time.perf_counter()
            matches = list(_waiting(ladder_id, passed_over).only(*_MATCH_FIELDS)[:BATCH_LIMIT])
            if requested is not None and requested not in {match.pk for match in matches}:
                matches += _requested(requested)
            batch = _Batch(ladder, matches, requested=requested)
            batch.apply()
            if log.isEnabledFor(logging.DEBUG):  # what benchmarks/central_ceiling.py counts
                held = time.perf_counter() - locked
                log.debug(
                    "ratings applied",
                    extra={"ladder": ladder_id, "matches": len(batch.applied), "held": held},
                )
        first = first or batch
        passed_over |= {match.pk for match in batch.matches} - batch.applied
        requested = None
        if not _waiting(ladder_id, passed_over).exists():
            break
    return first


def _requested(match_id: int) -> list[Match]:
    """The caller's match when it is not among those waiting: [] if already applied; RatingError
    (the round's transaction rolls back) if it is not finished."""
    match = Match.objects.only(*_MATCH_FIELDS).get(pk=match_id)
    if match.status in _WAITING:
        raise RatingError(f"match {match_id} is {match.status}, not finished: nothing to rate yet")
    return [] if match.ratings_applied else [match]


def _waiting(ladder_id: int, passed_over: set[int]) -> models.QuerySet[Match]:
    """The ladder's matches recorded and not yet rated, in the order recorded, but for those a
    round passed over (a duplicate set still being played, a match that cannot be rated)."""
    return (
        Match.objects.filter(
            ladder_id=ladder_id, status=Match.Status.FINISHED, rated=True, ratings_applied=False
        )
        .exclude(pk__in=passed_over)
        .order_by("finished", "pk")
    )


@dataclass
class _Batch:
    """Matches of one ladder applied in one transaction, in (finished, id) order."""

    ladder: Ladder
    matches: list[Match]
    requested: int
    applied: set[int] = field(default_factory=set)
    changes: dict[int, list[RatingChange]] = field(default_factory=dict)

    def apply(self) -> None:
        self.matches.sort(key=_recorded_order)
        rotations = self._rotations()
        seats = self._seats([match.pk for match in self.matches] + [r.pk for r in rotations])
        sets: dict[str, list[Match]] = defaultdict(list)
        for rotation in rotations:
            sets[rotation.duplicate_set].append(rotation)
        book = RatingBook(self.ladder, {row.bot for rows in seats.values() for row in rows})
        made: list[RatingChange] = []
        sets_done: set[str] = set()
        for match in self.matches:
            rows = seats.get(match.pk, [])
            if match.duplicate_set and len(rows) in SETS_RATED_ONCE_AT:
                if match.duplicate_set not in sets_done:
                    sets_done.add(match.duplicate_set)
                    made += self._set_apply(book, sets[match.duplicate_set], seats)
            elif match.status == Match.Status.FINISHED and self._rateable(match, rows):
                results = [(row, int(row.rank or 0)) for row in rows]
                made += self._results_apply(book, match.pk, results, games=1)
                self.applied.add(match.pk)
        book.save()  # first: the new ratings get the ids their changes point at
        RatingChange.objects.bulk_create(made)
        if self.applied:
            Match.objects.filter(pk__in=self.applied).update(ratings_applied=True)

    def _rotations(self) -> list[Match]:
        """Every rotation of the duplicate sets among the batch's matches, as they stand now."""
        names = {match.duplicate_set for match in self.matches if match.duplicate_set}
        if not names:
            return []
        return list(
            Match.objects.filter(ladder=self.ladder, duplicate_set__in=names)
            .only(*_MATCH_FIELDS)
            .order_by("pk")
        )

    @staticmethod
    def _seats(match_ids: list[int]) -> dict[int, list[_SeatRow]]:
        rows = (
            Seat.objects.filter(match_id__in=set(match_ids))
            .order_by("match_id", "seat")
            .values_list(
                "match_id", "seat", "bot_version_id", "bot_version__bot_id", "bot_version__number", "rank"
            )
        )
        seats: dict[int, list[_SeatRow]] = defaultdict(list)
        for match_id, seat, version, bot, number, rank in rows:
            seats[match_id].append(_SeatRow(seat, version, bot, number, rank))
        return seats

    def _rateable(self, match: Match, rows: list[_SeatRow]) -> bool:
        """Whether a finished match can be rated; for the caller's own match, RatingError if not
        (the whole batch is then rolled back: nothing changes)."""
        try:
            _check_rateable(match, rows)
        except RatingError:
            if match.pk == self.requested:
                raise
            log.exception("a finished match cannot be rated", extra={"match_id": match.pk})
            return False
        return True

    def _set_apply(
        self, book: RatingBook, rotations: list[Match], seats: dict[int, list[_SeatRow]]
    ) -> list[RatingChange]:
        """Rates a duplicate set as one result if none of its rotations waits to be played and
        none was applied; marks its finished rotations applied."""
        if any(rotation.status in _WAITING for rotation in rotations):
            return []  # the last rotation to finish rates the set
        finished = [r for r in rotations if r.status == Match.Status.FINISHED and r.rated]
        if not finished or any(rotation.ratings_applied for rotation in finished):
            return []
        if not all(self._rateable(rotation, seats.get(rotation.pk, [])) for rotation in finished):
            return []
        ranks: dict[int, list[int]] = defaultdict(list)
        holders: dict[int, _SeatRow] = {}
        for rotation in finished:
            for row in seats[rotation.pk]:
                holders.setdefault(row.version, row)
                ranks[row.version].append(int(row.rank or 0))
        means = {version: sum(held) / len(held) for version, held in ranks.items()}
        # Competition ranking of the mean ranks: equal means share a rank (1, 1, 3).
        results = [
            (holders[version], 1 + sum(other < mean for other in means.values()))
            for version, mean in means.items()
        ]
        self.applied.update(rotation.pk for rotation in finished)
        changes = self._results_apply(book, finished[-1].pk, results, games=len(finished))
        for rotation in rotations:  # whichever rotation's worker asked, the set's changes are its answer
            self.changes[rotation.pk] = changes
        return changes

    def _results_apply(
        self, book: RatingBook, match_id: int, results: list[tuple[_SeatRow, int]], *, games: int
    ) -> list[RatingChange]:
        """One rating update from (seat, rank) results, recorded against `match_id`; each rating's
        game count grows by `games` (the matches the result stands for)."""
        held = [book.get(row.version, row.bot, row.number) for row, _ in results]
        before = [ratings.Belief(rating.mu, rating.sigma) for rating in held]
        after = ratings.rate(before, [rank for _, rank in results])
        changes = []
        for rating, (_, rank), old, new in zip(held, results, before, after, strict=True):
            rating.mu, rating.sigma, rating.games = new.mu, new.sigma, rating.games + games
            book.changed(rating)
            changes.append(
                RatingChange(
                    rating=rating,
                    match_id=match_id,
                    rank=rank,
                    mu_before=old.mu,
                    sigma_before=old.sigma,
                    mu_after=new.mu,
                    sigma_after=new.sigma,
                )
            )
        self.changes[match_id] = changes
        return changes


def _recorded_order(match: Match) -> tuple[float, int]:
    """Matches in the order they were recorded (by their finish time), then by id."""
    return (match.finished.timestamp() if match.finished else math.inf, match.pk)


def _check_rateable(match: Match, seats: list[_SeatRow]) -> None:
    if len(seats) < 2:
        raise RatingError(f"match {match.pk} has {len(seats)} seat(s); a rated match needs at least 2")
    unranked = [seat.seat for seat in seats if seat.rank is None]
    if unranked:
        raise RatingError(f"match {match.pk} is finished but seats {unranked} have no rank")
    versions = [seat.version for seat in seats]
    if len(set(versions)) != len(versions):
        raise RatingError(f"match {match.pk} seats one bot version twice; it cannot be rated")
