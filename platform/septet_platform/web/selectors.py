"""Reads for the site's pages, shaped for templates; the other apps' selectors where they fit.

The ladder page ranks every bot as `ladders.selectors.ladder_standings` does, from plain rows,
and takes a bot's "last match" from its rating's `updated` time: every rated match saves the
rating (`ratings_apply`) and nothing else does, so it is when the bot's last rated match was
recorded, without an aggregate over the ladder's matches.

A bot's duplicate results: the ladder plays each seed in every seat rotation (a duplicate set),
so a bot's mean rank over one whole set is nearly free of the luck of the deal; the bot page lists
its recent complete sets and, per game and table size, the mean of those set means with a 95%
interval.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.paginator import Page, Paginator
from django.db import models
from django.db.models import QuerySet

from referee.engine import replay as replays
from referee.tools.stats import MeanInterval, mean_interval
from septet_platform.arena_api.selectors import (
    OVER,
    UNPUBLISHED,
    WAITING,
    LogsNotYours,
    OwnSeatLog,
    ReplayUnpublished,
    Viewer,
    match_is_published,
    match_replay_path,
    owned_seats,
    published_match_ids,
    published_replay_path,
    rating_changes,
    replay_for_viewer,
    seat_logs_for_viewer,
)
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.ladders import ratings
from septet_platform.ladders.models import Ladder, Rating, RatingChange
from septet_platform.ladders.selectors import Standing
from septet_platform.matches.models import Match, Seat
from septet_platform.web.charts import Chart, rating_chart
from septet_platform.web.page_cache import page_seconds
from septet_platform.web.replay_facts import RoundRow, stored_replay

LADDER_PAGE_SIZE = 50
RECENT_MATCHES = 20
MATCHES_PER_PAGE = 20
"""A bot page's (and the match list's) matches are shown this many a page."""
MAX_PAGE = 10_000
"""The deepest page of a bot's matches the site pages to (200,000 matches)."""
WAITING_SHOWN = 10
"""Beside its results, a bot page lists this many of its queued or running matches."""
MATCH_FILTERS = ("finished", "waiting")
"""The `status` filter of the bot page and the match list: matches that are over (the default,
results first) or those queued or being played."""
RECENT_DUPLICATE_SETS = 10
CHART_POINTS = 200
"""The rating-history chart shows a ladder's last this many rating changes of a bot."""

ARENA_PORT = 50051
"""The Arena's port under `septet up` (its `--arena` default): the site's guess of where the Arena
is when SEPTET_ARENA_ADDRESS is not set."""

LADDER_SORTS: dict[str, tuple[str, bool]] = {
    "rank": ("rank", False),
    "-rank": ("rank", True),
    "bot": ("bot", False),
    "-bot": ("bot", True),
    "owner": ("owner", False),
    "-owner": ("owner", True),
    "games": ("games", False),
    "-games": ("games", True),
    "last": ("last_match", False),
    "-last": ("last_match", True),
}
"""The ladder's sort keys (the query string's `sort`), each a Standing field and whether reversed.
The rating column sorts with the rank: rank 1 is the highest rating."""


def recent_matches(*, limit: int = 10) -> QuerySet[Match]:
    """The newest matches that are running or done, with their ladder and seated bots."""
    return (
        Match.objects.filter(status__in=[Match.Status.RUNNING, Match.Status.FINISHED])
        .select_related("ladder")
        .prefetch_related("seats__bot_version__bot")
        .order_by("-id")[:limit]
    )


def match_list(*, status: str = "finished", page: str | int = 1) -> Page[Match]:
    """One page of the site's matches: those over (results first, the default) or, with status
    "waiting", those queued or running; newest first, with their ladder and seated bots."""
    statuses = OVER if match_filter(status) == "finished" else WAITING
    matches = (
        Match.objects.filter(status__in=statuses)
        .select_related("ladder")
        .prefetch_related("seats__bot_version__bot")
        .order_by("-id")
    )
    return Paginator(matches, MATCHES_PER_PAGE).get_page(page)


def ladder_page(*, ladder: Ladder, sort: str = "rank", page: str | int = 1) -> tuple[Page[Standing], str]:
    """One page of `ladder`'s standings sorted by `sort` (unknown keys sort by rank), and the sort
    used. Ranks are the ladder's (by rating) whatever the sort. Every bot is ranked and sorted
    from plain rows; only the page's rows become Standings."""
    sort = sort if sort in LADDER_SORTS else "rank"
    key, descending = LADDER_SORTS[sort]
    # Kept rows carry their times (read once for every view meanwhile); else read only the page's.
    with_times = key == "last_match" or page_seconds() > 0
    rows = sorted(
        _ranked_rows_kept(ladder, with_times=with_times),
        key=lambda row: _sortable(getattr(row, key)),
        reverse=descending,
    )
    shown = Paginator(rows, LADDER_PAGE_SIZE).get_page(page)
    times = None if with_times else _rating_times(ladder, [row.bot_version_id for row in shown.object_list])
    shown.object_list = [_standing(row, times) for row in shown.object_list]
    return shown, sort


def _rating_times(ladder: Ladder, version_ids: list[int]) -> dict[int, datetime]:
    """When each of these versions' ratings on `ladder` last changed (its last rated match)."""
    return dict(
        Rating.objects.filter(ladder=ladder, bot_version_id__in=version_ids).values_list(
            "bot_version_id", "updated"
        )
    )


class _Row(NamedTuple):
    rank: int
    bot: str
    owner: str
    version: int
    bot_version_id: int
    mu: float
    sigma: float
    games: int
    last_match: datetime | None


def _sortable(value: Any) -> Any:
    """Sorts a missing time (a bot with no rated match yet) before every real one."""
    return (value is not None, value if value is not None else 0)


_rows_lock = threading.Lock()
_rows_kept: dict[tuple[int, bool], tuple[float, list[_Row]]] = {}


def _ranked_rows_kept(ladder: Ladder, *, with_times: bool) -> list[_Row]:
    """`_ranked_rows`, read at most once per SEPTET_PAGE_CACHE_SECONDS per process: ranking every
    bot of a ladder was most of a ladder page's work, and its 20 pages and 10 orders share it.
    The page itself is not kept (page_cache), so it is never older than that."""
    seconds = page_seconds()
    if seconds <= 0:
        return _ranked_rows(ladder, with_times=with_times)
    key = (ladder.pk, with_times)
    now = time.monotonic()
    with _rows_lock:
        kept = _rows_kept.get(key)
    if kept is not None and now - kept[0] < seconds:
        return kept[1]
    rows = _ranked_rows(ladder, with_times=with_times)
    with _rows_lock:
        _rows_kept[key] = (now, rows)
    return rows


def ladder_rows_forget() -> None:
    """Drops every ladder ranking this process keeps (tests)."""
    with _rows_lock:
        _rows_kept.clear()


def _ranked_rows(ladder: Ladder, *, with_times: bool) -> list[_Row]:
    """Every bot's latest ACTIVE version rated on `ladder`, ranked by mu, then sigma, then name;
    `last_match` is read only `with_times` (parsing a thousand timestamps costs a few ms)."""
    fields = ["bot_version__bot_id", "bot_version__number", "bot_version_id", "bot_version__bot__name"]
    fields += ["bot_version__bot__owner__username", "mu", "sigma", "games"]
    if with_times:
        fields.append("updated")
    active = Rating.objects.filter(ladder=ladder, bot_version__status=BotVersion.Status.ACTIVE)
    current: dict[int, tuple[Any, ...]] = {}
    for row in active.values_list(*fields):
        if row[0] not in current or row[1] > current[row[0]][1]:
            current[row[0]] = row
    ordered = sorted(current.values(), key=lambda row: (-row[5], row[6], row[3]))
    return [
        _Row(rank, row[3], row[4], row[1], row[2], row[5], row[6], row[7], row[8] if with_times else None)
        for rank, row in enumerate(ordered, start=1)
    ]


def _standing(row: _Row, times: dict[int, datetime] | None) -> Standing:
    shown = ratings.display(row.mu, row.sigma)
    last_match = row.last_match if times is None else times.get(row.bot_version_id)
    return Standing(
        rank=row.rank,
        bot=row.bot,
        owner=row.owner,
        version=row.version,
        rating=shown.rating,
        low=shown.low,
        high=shown.high,
        games=row.games,
        last_match=last_match if row.games else None,
        bot_version_id=row.bot_version_id,
        mu=row.mu,
        sigma=row.sigma,
    )


@dataclass(frozen=True)
class LadderRating:
    """A bot version's current rating on one ladder, with its history as a chart."""

    game: str
    version: int
    rating: int
    low: int
    high: int
    games: int
    chart: Chart | None


@dataclass(frozen=True)
class BotProfile:
    """What the bot page shows; `owner_sees` gates the error logs and forfeit reasons."""

    bot: Bot
    versions: list[BotVersion]
    ratings: list[LadderRating]
    results: ResultsPage
    status: str
    waiting: list[Seat]
    waiting_count: int
    owner_sees: bool
    forfeits: list[Seat] = field(default_factory=list)
    duplicate_sets: list[DuplicateSet] = field(default_factory=list)
    duplicate_summary: list[DuplicateSummary] = field(default_factory=list)


@dataclass(frozen=True)
class DuplicateSet:
    """One complete duplicate set the bot played: its mean rank and score over every rotation."""

    game: str
    name: str
    seed: int
    players: int
    rotations: int
    mean_rank: float
    mean_score: float
    field: list[str]
    first_match_id: int


@dataclass(frozen=True)
class DuplicateSummary:
    """The bot's complete duplicate sets of one game and table size: the mean of their mean ranks."""

    game: str
    players: int
    sets: int
    mean_rank: MeanInterval


@dataclass(frozen=True)
class ResultsPage:
    """A page of a bot's matches, shaped like the part of Django's Page the template uses, without
    the count of every row behind it: `more` says whether an older page exists."""

    object_list: list[ResultRow]
    number: int
    more: bool

    def __iter__(self) -> Iterator[ResultRow]:
        return iter(self.object_list)

    def __len__(self) -> int:
        return len(self.object_list)

    def has_next(self) -> bool:
        return self.more

    def has_previous(self) -> bool:
        return self.number > 1

    def has_other_pages(self) -> bool:
        return self.more or self.number > 1

    def next_page_number(self) -> int:
        return self.number + 1

    def previous_page_number(self) -> int:
        return self.number - 1


def page_number(page: str | int) -> int:
    """A page number from the query string: 1 for anything that is not a whole number from 1 up,
    capped at MAX_PAGE (an offset past every row costs the database a scan of them all)."""
    try:
        number = int(page)
    except (TypeError, ValueError):
        return 1
    return min(max(number, 1), MAX_PAGE)


@dataclass(frozen=True)
class ResultRow:
    """One of a bot's matches as its page lists it: its seat (rank, score), the table's size, the
    rating change the match made (None when it made none) and whether its replay may be linked."""

    seat: Seat
    players: int
    rating_change: int | None
    replay: bool


def match_filter(status: str) -> str:
    """The bot page's `status` filter from the query string: unknown values show results."""
    return status if status in MATCH_FILTERS else "finished"


def bot_results(
    *, bot: Bot, status: str = "finished", page: str | int = 1, version_ids: Sequence[int] | None = None
) -> ResultsPage:
    """One page of the bot's matches that are over (or, with status "waiting", queued or
    running), newest first, each with its table size, rating change and replay link. No count of
    every match (a busy bot has tens of thousands): one row past the page says whether an older
    page exists."""
    statuses = OVER if match_filter(status) == "finished" else WAITING
    if version_ids is None:
        version_ids = list(BotVersion.objects.filter(bot=bot).values_list("id", flat=True))
    number = page_number(page)
    start = (number - 1) * MATCHES_PER_PAGE
    seated = list(
        Seat.objects.filter(bot_version_id__in=version_ids, match__status__in=statuses)
        .select_related("match__ladder", "bot_version")
        .order_by("-match_id", "seat")[start : start + MATCHES_PER_PAGE + 1]
    )
    has_next = len(seated) > MATCHES_PER_PAGE
    seated = seated[:MATCHES_PER_PAGE]
    matches = [seat.match for seat in seated]
    sizes = dict(
        Seat.objects.filter(match_id__in=[match.pk for match in matches])
        .values("match_id")
        .annotate(players=models.Count("id"))
        .values_list("match_id", "players")
    )
    published = published_match_ids(matches)
    changes = rating_changes(matches)
    rows = [
        ResultRow(
            seat=seat,
            players=sizes.get(seat.match_id, 0),
            rating_change=changes.get((seat.match_id, seat.bot_version_id)),
            replay=seat.match_id in published and bool(seat.match.replay),
        )
        for seat in seated
    ]
    return ResultsPage(object_list=rows, number=number, more=has_next)


def bot_profile(
    *, bot: Bot, viewer: AbstractBaseUser | AnonymousUser, status: str = "finished", page: str | int = 1
) -> BotProfile:
    """The bot's versions, ratings with history, its finished matches a page at a time (results
    first; or its waiting ones with status "waiting"), a few waiting matches apart, and (for its
    owner) forfeits. Its seats are found through its versions' ids (an index on the seat's
    version and match), never through a join the database could start from every match."""
    owner_sees = bool(viewer.is_authenticated and viewer.pk == bot.owner_id)
    versions = list(BotVersion.objects.filter(bot=bot).order_by("-number"))
    version_ids = [version.pk for version in versions]
    seats = Seat.objects.filter(bot_version_id__in=version_ids).select_related("match__ladder", "bot_version")
    status = match_filter(status)
    waiting = seats.filter(match__status__in=WAITING)
    forfeits = (
        list(seats.exclude(forfeit_status="").order_by("-match_id")[:RECENT_MATCHES]) if owner_sees else []
    )
    sets = duplicate_sets(bot=bot, version_ids=version_ids)
    waiting_count = waiting.count()
    return BotProfile(
        bot=bot,
        versions=versions,
        ratings=_bot_ratings(bot),
        results=bot_results(bot=bot, status=status, page=page, version_ids=version_ids),
        status=status,
        waiting=list(waiting.order_by("-match_id")[:WAITING_SHOWN])
        if status == "finished" and waiting_count
        else [],
        waiting_count=waiting_count,
        owner_sees=owner_sees,
        forfeits=forfeits,
        duplicate_sets=sets[:RECENT_DUPLICATE_SETS],
        duplicate_summary=duplicate_summary(sets),
    )


def duplicate_sets(
    *, bot: Bot, limit: int = 200, version_ids: Sequence[int] | None = None
) -> list[DuplicateSet]:
    """The bot's most recent duplicate sets (up to `limit`) whose every rotation has finished,
    newest first. Read as plain rows, not model instances: the bot's own seats (rank, score), the
    sets' matches (all finished?), and the seats of each set's first match (its table: a set's
    rotations seat the same bots)."""
    if version_ids is None:
        version_ids = list(BotVersion.objects.filter(bot=bot).values_list("id", flat=True))
    own_rows = (
        Seat.objects.filter(bot_version_id__in=version_ids)
        .exclude(match__duplicate_set="")
        .order_by("-match_id")
        .values_list("match__duplicate_set", "match__status", "rank", "score")[: limit * 8]
    )
    own: dict[str, list[tuple[int | None, int | None]]] = defaultdict(list)
    for name, match_status, rank, score in own_rows:
        if match_status == Match.Status.FINISHED and (name in own or len(own) < limit):
            own[name].append((rank, score))
    if not own:
        return []
    rotations: dict[str, list[tuple[int, str, int, str]]] = defaultdict(list)
    in_sets = Match.objects.filter(duplicate_set__in=list(own))
    for match_id, name, match_status, seed, game in in_sets.values_list(
        "id", "duplicate_set", "status", "seed", "ladder__game"
    ):
        rotations[name].append((match_id, match_status, seed, game))
    complete = [
        name
        for name, seats in own.items()
        if all(match_status == Match.Status.FINISHED for _, match_status, _, _ in rotations[name])
        and all(rank is not None for rank, _ in seats)
    ]
    firsts = {name: min(rotations[name]) for name in complete}
    tables: dict[int, list[str]] = defaultdict(list)
    for match_id, bot_name in Seat.objects.filter(
        match_id__in=[first[0] for first in firsts.values()]
    ).values_list("match_id", "bot_version__bot__name"):
        tables[match_id].append(bot_name)
    found = []
    for name in complete:
        first_id, _, seed, game = firsts[name]
        seats = own[name]
        found.append(
            DuplicateSet(
                game=game,
                name=name,
                seed=seed,
                players=len(tables[first_id]),
                rotations=len(rotations[name]),
                mean_rank=sum(int(rank or 0) for rank, _ in seats) / len(seats),
                mean_score=sum(int(score or 0) for _, score in seats) / len(seats),
                field=sorted(set(tables[first_id]) - {bot.name}),
                first_match_id=first_id,
            )
        )
    return found


def duplicate_summary(sets: Sequence[DuplicateSet]) -> list[DuplicateSummary]:
    """Per game and table size: how many sets, and the mean of their mean ranks with its interval
    (clipped to the possible ranks)."""
    grouped: dict[tuple[str, int], list[float]] = defaultdict(list)
    for played in sets:
        grouped[(played.game, played.players)].append(played.mean_rank)
    return [
        DuplicateSummary(game, players, len(ranks), rank_interval_clipped(mean_interval(ranks), players))
        for (game, players), ranks in sorted(grouped.items())
    ]


def rank_interval_clipped(interval: MeanInterval, players: int) -> MeanInterval:
    """The interval cut to the ranks a table of `players` can give, [1, players]: a t interval of
    few, spread sets reaches past them (-1.93 to 4.43 at a table of 3), which no rank can be."""
    low = min(max(interval.low, 1.0), float(players))
    high = max(min(interval.high, float(players)), 1.0)
    return replace(interval, low=low, high=high)


def _bot_ratings(bot: Bot) -> list[LadderRating]:
    """The rating of each ladder's newest rated version of `bot`, with that rating's history."""
    newest: dict[int, Rating] = {}
    for rating in Rating.objects.filter(bot_version__bot=bot).select_related("ladder", "bot_version"):
        held = newest.get(rating.ladder_id)
        if held is None or rating.bot_version.number > held.bot_version.number:
            newest[rating.ladder_id] = rating
    shown = []
    for rating in sorted(newest.values(), key=lambda r: r.ladder.game):
        history = list(
            RatingChange.objects.filter(rating=rating)
            .order_by("-id")
            .values_list("mu_after", "sigma_after")[:CHART_POINTS]
        )
        now = ratings.display(rating.mu, rating.sigma)
        shown.append(
            LadderRating(
                game=rating.ladder.game,
                version=rating.bot_version.number,
                rating=now.rating,
                low=now.low,
                high=now.high,
                games=rating.games,
                chart=rating_chart([ratings.display(mu, sigma) for mu, sigma in reversed(history)]),
            )
        )
    return shown


SEAT_COLUMNS = (
    *("match_id", "seat", "rank", "score", "forfeit_status", "forfeit_reason", "bot_version__number"),
    *("bot_version__bot__name", "bot_version__bot__owner__username"),
)
"""What the match page shows of its seats and their bots (not a version's manifest, say)."""


@dataclass(frozen=True)
class MatchDetail:
    """What the match page shows; `replay_error` says why the rounds are missing, if they are.
    `published`: the seed and replay may be shown (arena_api.selectors' publication rule);
    `owned_seats`: the seats whose forfeit reasons this viewer may read (their own bots');
    `logs`: what those seats' bots wrote, once the set is over (`logs_note` says why not yet)."""

    match: Match
    seats: list[Seat]
    rounds: Sequence[RoundRow]
    has_replay: bool
    replay_error: str = ""
    published: bool = False
    owned_seats: frozenset[int] = frozenset()
    logs: list[OwnSeatLog] = field(default_factory=list)
    logs_note: str = ""
    rounds_html: str = ""
    """`rounds` as the rounds table's rows (escaped HTML)."""


def match_detail(*, match_id: int, viewer: Viewer = None) -> MatchDetail:
    """The match with its seats and, once published, per-round scores read from its replay;
    Match.DoesNotExist."""
    match = Match.objects.select_related("ladder", "tournament").filter(pk=match_id).first()
    if match is None:
        raise Match.DoesNotExist(f"no match {match_id}")
    seats = list(match.seats.select_related("bot_version__bot__owner").only(*SEAT_COLUMNS).order_by("seat"))
    owned = frozenset(owned_seats(match, viewer))
    if not match_is_published(match):
        note = "your bot's output is shown when its duplicate set is over, like the replay" if owned else ""
        return MatchDetail(
            match, seats, [], has_replay=False, replay_error=UNPUBLISHED, owned_seats=owned, logs_note=note
        )
    detail = _published_match_detail(match, seats, owned)
    if owned:
        with contextlib.suppress(LogsNotYours, ReplayUnpublished):  # both checked above
            detail = replace(detail, logs=seat_logs_for_viewer(match=match, viewer=viewer))
    return detail


def _published_match_detail(match: Match, seats: list[Seat], owned: frozenset[int]) -> MatchDetail:
    """A published match's detail with its rounds read from the replay (or why they are missing)."""
    try:
        stored = stored_replay(match, match_replay_path(match=match))
    except FileNotFoundError as missing:
        return MatchDetail(
            match, seats, [], has_replay=False, replay_error=str(missing), published=True, owned_seats=owned
        )
    except (replays.ReplayError, OSError, ValueError) as damaged:
        return MatchDetail(
            match,
            seats,
            [],
            has_replay=True,
            replay_error=f"the replay is unreadable: {damaged}",
            published=True,
            owned_seats=owned,
        )
    return MatchDetail(
        match,
        seats,
        stored.facts.rounds,
        has_replay=True,
        published=True,
        owned_seats=owned,
        rounds_html=stored.facts.rounds_html,
    )


def bots_of(*, owner: AbstractBaseUser) -> list[Bot]:
    """The user's bots, by name, with their versions (newest first) fetched."""
    return list(Bot.objects.filter(owner=owner).prefetch_related("versions").order_by("name"))


def match_row(*, match_id: int) -> Match:
    """The match row alone (no seats), for the status and replay endpoints; Match.DoesNotExist."""
    match = Match.objects.filter(pk=match_id).first()
    if match is None:
        raise Match.DoesNotExist(f"no match {match_id}")
    return match


def match_with_seats(*, match_id: int) -> Match:
    """The match with its seats' bots fetched (whose seats a viewer owns); Match.DoesNotExist."""
    match = Match.objects.prefetch_related("seats__bot_version__bot").filter(pk=match_id).first()
    if match is None:
        raise Match.DoesNotExist(f"no match {match_id}")
    return match


@dataclass(frozen=True)
class ReplayDownload:
    """A replay document as one viewer may have it (gzip bytes) and the SHA-256 of those bytes."""

    data: bytes
    sha256: str


def replay_download(*, match_id: int, viewer: Viewer) -> ReplayDownload:
    """The published replay of the match as `viewer` may see it (arena_api.selectors' rules):
    the stored file as it is when it hides nothing from them, which is every replay without a
    forfeit reason and every replay for its forfeiting bots' owner, else arena_api's copy with
    other owners' reasons blanked. Match.DoesNotExist, ReplayUnpublished, FileNotFoundError,
    ReplayError."""
    match = match_row(match_id=match_id)
    stored = stored_replay(match, published_replay_path(match=match))
    if not stored.facts.reason_seats:
        return ReplayDownload(stored.data, stored.sha256)
    match = match_with_seats(match_id=match_id)
    if stored.facts.reason_seats <= owned_seats(match, viewer):
        return ReplayDownload(stored.data, stored.sha256)
    blanked = replay_for_viewer(match=match, viewer=viewer)
    return ReplayDownload(blanked, hashlib.sha256(blanked).hexdigest())


def live_state(*, match: Match) -> dict[str, Any]:
    """What a live match page polls: status, attempt, and when it started and finished."""
    return {
        "id": match.pk,
        "status": match.status,
        "attempt": match.attempt,
        "started": _iso(match.started),
        "finished": _iso(match.finished),
        "done": match.status not in (Match.Status.SCHEDULED, Match.Status.RUNNING),
    }


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def arena_address(*, request_host: str) -> str:
    """Where bot authors reach the Arena (`septet submit --server ...`): SEPTET_ARENA_ADDRESS, else
    the host this page was asked for (its port dropped) on the Arena's port."""
    configured = str(getattr(settings, "SEPTET_ARENA_ADDRESS", "") or "")
    if configured:
        return configured
    host = request_host
    if host.startswith("["):  # [::1]:8000
        host = host[: host.index("]") + 1]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return f"{host or '127.0.0.1'}:{ARENA_PORT}"


def version_following(versions: Sequence[BotVersion]) -> BotVersion | None:
    """The version a bot page follows live: its newest one while it is still qualifying."""
    newest = versions[0] if versions else None
    return newest if newest is not None and newest.status == BotVersion.Status.QUALIFYING else None


def version_state(*, version: BotVersion, owner_sees: bool) -> dict[str, Any]:
    """What a bot page polls while a version qualifies: its status, whether that is final, and
    (to the owner only) why it failed."""
    done = version.status != BotVersion.Status.QUALIFYING
    failed = version.status == BotVersion.Status.FAILED
    return {
        "bot": version.bot.name,
        "number": version.number,
        "status": version.status,
        "label": version.get_status_display(),
        "done": done,
        "reason": version.error_log if owner_sees and failed else "",
    }
