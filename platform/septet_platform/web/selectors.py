"""Reads for the site's pages, shaped for templates; the other apps' selectors where they fit.

The ladder page ranks every bot as `ladders.selectors.ladder_standings` does, from plain rows,
and takes a bot's "last match" from its rating's `updated` time: every rated match saves the
rating (`ratings_apply`) and nothing else does, so it is when the bot's last rated match was
recorded, without an aggregate over the ladder's matches.

The bot page's reads are in `web.bot_page`.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.urls import reverse

from referee.engine import replay as replays
from referee.engine.games import all_games
from referee.engine.games.base import Game
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.ladders import ratings
from septet_platform.ladders.models import Ladder, Rating
from septet_platform.ladders.selectors import Standing, ladders_list, standing_order
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.selectors import (
    OVER,
    UNPUBLISHED,
    WAITING,
    LogsNotYours,
    OwnSeatLog,
    ReplayUnpublished,
    Viewer,
    owned_seats,
    replay_for_viewer,
    seat_logs_for_viewer,
)
from septet_platform.tournaments.models import Tournament
from septet_platform.web import sql
from septet_platform.web.page_cache import page_seconds
from septet_platform.web.paging import MATCHES_PER_PAGE, match_filter
from septet_platform.web.replay_facts import RoundRow, stored_replay

LADDER_PAGE_SIZE = 50

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
        .prefetch_related("seats__bot_version__bot", "seats__player")
        .order_by("-id")[:limit]
    )


def match_list(*, status: str = "finished", page: str | int = 1) -> Page[Match]:
    """One page of the site's matches: those over (results first, the default) or, with status
    "waiting", those queued or running; newest first, with their ladder and seated bots."""
    statuses = OVER if match_filter(status) == "finished" else WAITING
    matches = (
        Match.objects.filter(status__in=statuses)
        .select_related("ladder")
        .prefetch_related("seats__bot_version__bot", "seats__player")
        .order_by("-id")
    )
    return Paginator(matches, MATCHES_PER_PAGE).get_page(page)


def ladder_page(*, ladder: Ladder, sort: str = "rank", page: str | int = 1) -> tuple[Page[Standing], str]:
    """One page of `ladder`'s standings sorted by `sort` (unknown keys sort by rank), and the sort
    used. Ranks are the ladder's (by rating) whatever the sort. Every bot is ranked and sorted
    from plain rows; only the page's rows become Standings."""
    sort = sort if sort in LADDER_SORTS else "rank"
    # Kept rows carry their times (read once for every view meanwhile); else read only the page's.
    with_times = LADDER_SORTS[sort][0] == "last_match" or page_seconds() > 0
    rows = _sorted_rows_kept(ladder, sort, with_times=with_times)
    shown = Paginator(rows, LADDER_PAGE_SIZE).get_page(page)
    times = None if with_times else _rating_times(ladder, [row.bot_version_id for row in shown.object_list])
    shown.object_list = [_standing(row, times) for row in shown.object_list]
    return shown, sort


def _sorted(rows: list[_Row], sort: str) -> list[_Row]:
    key, descending = LADDER_SORTS[sort]
    if key == "rank":  # the rows are ranked already
        return rows[::-1] if descending else rows
    return sorted(rows, key=lambda row: _sortable(getattr(row, key)), reverse=descending)


_, _LADDER_COLUMNS = sql.columns(Ladder)
_LADDER_SQL = f"SELECT {_LADDER_COLUMNS} FROM {sql.table(Ladder)} WHERE game = %s AND pool = %s"


def ladder_named(game: str, *, pool: str = Ladder.Pool.SANDBOXED) -> Ladder:
    """The ladder of `game` in `pool` (as `ladders.selectors.ladder_get`, read in plain SQL: the
    ladder page's every view asks); Ladder.DoesNotExist saying so."""
    found = sql.fetch(_LADDER_SQL, [game, pool])
    if not found:
        kind = "an open ladder" if pool == Ladder.Pool.OPEN else "a ladder"
        raise Ladder.DoesNotExist(f"no {kind} for game {game!r}")
    ladder: Ladder = sql.instance(Ladder, found[0])
    return ladder


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


@dataclass
class _KeptRanking:
    """A ladder's ranked rows as read at `read` (monotonic seconds), and their sorted orders."""

    read: float
    rows: list[_Row]
    orders: dict[str, list[_Row]] = field(default_factory=dict)


_rows_lock = threading.Lock()
_rows_kept: dict[tuple[int, bool], _KeptRanking] = {}


def _sorted_rows_kept(ladder: Ladder, sort: str, *, with_times: bool) -> list[_Row]:
    """`ladder`'s rows ranked (`_ranked_rows`) and sorted by `sort`, read and sorted at most once
    per SEPTET_PAGE_CACHE_SECONDS per process: ranking every bot of a ladder was most of a ladder
    page's work, and its 20 pages and 10 orders share it. The page itself is not kept
    (page_cache), so it is never older than that."""
    seconds = page_seconds()
    if seconds <= 0:
        return _sorted(_ranked_rows(ladder, with_times=with_times), sort)
    key = (ladder.pk, with_times)
    now = time.monotonic()
    with _rows_lock:
        kept = _rows_kept.get(key)
        if kept is not None and now - kept.read < seconds and sort in kept.orders:
            return kept.orders[sort]
    if kept is None or now - kept.read >= seconds:
        kept = _KeptRanking(now, _ranked_rows(ladder, with_times=with_times))
    ordered = _sorted(kept.rows, sort)
    with _rows_lock:
        kept.orders[sort] = ordered
        _rows_kept[key] = kept
    return ordered


def ladder_rows_forget() -> None:
    """Drops every ladder ranking and leader list this process keeps (tests)."""
    with _rows_lock:
        _rows_kept.clear()
    with _leaders_lock:
        _leaders_kept.clear()


_RANKED_FIELDS = ["bot_version__bot_id", "bot_version__number", "bot_version_id", "bot_version__bot__name"]
_RANKED_FIELDS += ["bot_version__bot__owner__username", "mu", "sigma", "games"]


def _ranked_rows(ladder: Ladder, *, with_times: bool) -> list[_Row]:
    """Every bot's latest ACTIVE version rated on `ladder`, ranked by mu, then sigma, then name;
    `last_match` is read only `with_times` (parsing a thousand timestamps costs a few ms)."""
    fields = [*_RANKED_FIELDS, "updated"] if with_times else _RANKED_FIELDS
    active = Rating.objects.filter(ladder=ladder, bot_version__status=BotVersion.Status.ACTIVE)
    return _ranked(active.values_list(*fields), with_times=with_times)


def _ranked(rows: Iterable[tuple[Any, ...]], *, with_times: bool) -> list[_Row]:
    """One ladder's rating rows (`_RANKED_FIELDS`, then `updated` if `with_times`) ranked as
    `ladders.selectors.ladder_standings` ranks them (`standing_order`: each bot's latest version,
    the unplayed last, then by mu, sigma and name). The ladder page, the leaders of every ladder
    and `septet ladder` share this one ordering."""
    current: dict[int, tuple[Any, ...]] = {}
    for row in rows:
        if row[0] not in current or row[1] > current[row[0]][1]:
            current[row[0]] = row
    ordered = sorted(
        current.values(), key=lambda row: standing_order(games=row[7], mu=row[5], sigma=row[6], bot=row[3])
    )
    return [
        _Row(rank, row[3], row[4], row[1], row[2], row[5], row[6], row[7], row[8] if with_times else None)
        for rank, row in enumerate(ordered, start=1)
    ]


LEADERS_PER_LADDER = 3


@dataclass(frozen=True)
class LadderLeaders:
    """A game with its ladder (None when it has none) and the ladder's first bots, and its open
    ladder's (where self-hosted bots play) likewise."""

    game: Game
    ladder: Ladder | None
    leaders: list[Standing]
    open_ladder: Ladder | None = None
    open_leaders: list[Standing] = field(default_factory=list)


_leaders_lock = threading.Lock()
_leaders_kept: dict[int, tuple[float, dict[int, list[Standing]]]] = {}


def ladders_with_leaders(*, per_ladder: int = LEADERS_PER_LADDER) -> list[LadderLeaders]:
    """Every game the engine has, in its order, with its ladder and that ladder's first
    `per_ladder` bots as the ladder page ranks them (the home page and /ladders/).

    Two statements whatever the number of ladders: the ladders, and every ladder's active ratings
    in one read, ranked here and kept per process for SEPTET_PAGE_CACHE_SECONDS as the ladder
    page keeps its ranking, so a signed-in visitor's home page (never kept whole) does not rank
    every ladder on every view."""
    ladders = {(ladder.game, ladder.pool): ladder for ladder in ladders_list()}
    leaders = _leaders_by_ladder(per_ladder)
    shown = []
    for game_id, game in all_games().items():
        ladder = ladders.get((game_id, Ladder.Pool.SANDBOXED))
        open_ladder = ladders.get((game_id, Ladder.Pool.OPEN))
        shown.append(
            LadderLeaders(
                game,
                ladder,
                leaders.get(ladder.pk, []) if ladder else [],
                open_ladder,
                leaders.get(open_ladder.pk, []) if open_ladder else [],
            )
        )
    return shown


def _leaders_by_ladder(per_ladder: int) -> dict[int, list[Standing]]:
    """Ladder id -> its first `per_ladder` standings, read at most once per page cache period."""
    seconds = page_seconds()
    now = time.monotonic()
    with _leaders_lock:
        kept = _leaders_kept.get(per_ladder)
    if seconds > 0 and kept is not None and now - kept[0] < seconds:
        return kept[1]
    by_ladder: dict[int, list[tuple[Any, ...]]] = {}
    active = Rating.objects.filter(bot_version__status=BotVersion.Status.ACTIVE)
    for ladder_id, *row in active.values_list("ladder_id", *_RANKED_FIELDS):
        by_ladder.setdefault(ladder_id, []).append(tuple(row))
    leaders = {
        ladder_id: [_standing(row, {}) for row in _ranked(rows, with_times=False)[:per_ladder]]
        for ladder_id, rows in by_ladder.items()
    }
    if seconds > 0:
        with _leaders_lock:
            _leaders_kept[per_ladder] = (now, leaders)
    return leaders


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


class SeatShown(NamedTuple):
    """One seat of a match as its page shows it: the bot, its version and owner, and how it went."""

    seat: int
    bot: str
    version: int
    owner: str
    rank: int | None
    score: int | None
    forfeit_status: str
    forfeit_reason: str
    person: bool = False
    """A person played this seat from the site (a table): `bot` and `owner` are their user name."""


_USERNAME = get_user_model()._meta.get_field(get_user_model().USERNAME_FIELD).column
_MATCH_FIELDS, _MATCH_COLUMNS = sql.columns(Match, "m")
_, _LADDER_JOINED = sql.columns(Ladder, "l")
_, _TOURNAMENT_JOINED = sql.columns(Tournament, "t")
_MATCH_SQL = f"""
SELECT {_MATCH_COLUMNS}, {_LADDER_JOINED}, {_TOURNAMENT_JOINED}, {sql.set_open("m")}
FROM {sql.table(Match)} m
    JOIN {sql.table(Ladder)} l ON l.id = m.ladder_id
    LEFT JOIN {sql.table(Tournament)} t ON t.id = m.tournament_id
WHERE m.id = %s"""

_SEATS_SQL = f"""
SELECT s.seat, COALESCE(b.name, p.{_USERNAME}), COALESCE(v.number, 0), COALESCE(u.{_USERNAME}, p.{_USERNAME}),
    s.rank, s.score, s.forfeit_status, s.forfeit_reason, s.player_id IS NOT NULL
FROM {sql.table(Seat)} s
    LEFT JOIN {sql.table(BotVersion)} v ON v.id = s.bot_version_id
    LEFT JOIN {sql.table(Bot)} b ON b.id = v.bot_id
    LEFT JOIN {sql.table(get_user_model())} u ON u.id = b.owner_id
    LEFT JOIN {sql.table(get_user_model())} p ON p.id = s.player_id
WHERE s.match_id = %s
ORDER BY s.seat"""


def match_read(match_id: int) -> tuple[Match, bool]:
    """The match with its ladder and tournament, and whether it is published (`sql.set_open`:
    `matches.selectors.match_is_published` in the same statement); Match.DoesNotExist."""
    found = sql.fetch(_MATCH_SQL, [match_id]) if 0 < match_id <= sql.BIGGEST_ID else []
    if not found:
        raise Match.DoesNotExist(f"no match {match_id}")
    row = found[0]
    matched, laddered = len(_MATCH_FIELDS), len(_MATCH_FIELDS) + len(Ladder._meta.concrete_fields)
    match: Match = sql.instance(Match, row[:matched])
    match.ladder = sql.instance(Ladder, row[matched:laddered])
    match.tournament = sql.instance(Tournament, row[laddered:-1]) if match.tournament_id is not None else None
    return match, match.status in OVER and not row[-1]


@dataclass(frozen=True)
class MatchDetail:
    """What the match page shows; `replay_error` says why the rounds are missing, if they are.
    `published`: the seed and replay may be shown (matches.selectors' publication rule);
    `owned_seats`: the seats whose forfeit reasons this viewer may read (their own bots');
    `logs`: what those seats' bots wrote, once the set is over (`logs_note` says why not yet)."""

    match: Match
    seats: list[SeatShown]
    rounds: Sequence[RoundRow]
    has_replay: bool
    replay_error: str = ""
    published: bool = False
    owned_seats: frozenset[int] = frozenset()
    logs: list[OwnSeatLog] = field(default_factory=list)
    logs_note: str = ""
    rounds_html: str = ""
    """`rounds` as the rounds table's rows (escaped HTML)."""


UNPUBLISHED_LOGS_NOTE = "your bot's output is shown when its duplicate set is over, like the replay"


def match_detail(*, match_id: int, viewer: Viewer = None) -> MatchDetail:
    """The match with its seats and, once published, per-round scores read from its replay;
    Match.DoesNotExist."""
    match, published = match_read(match_id)
    seats = [SeatShown(*row[:-1], person=bool(row[-1])) for row in sql.fetch(_SEATS_SQL, [match_id])]
    owned = frozenset(owned_seats(match, viewer))
    if not published:
        own_bots = any(not seat.person for seat in seats if seat.seat in owned)
        note = UNPUBLISHED_LOGS_NOTE if own_bots else ""
        return MatchDetail(
            match, seats, [], has_replay=False, replay_error=UNPUBLISHED, owned_seats=owned, logs_note=note
        )
    detail = _published_match_detail(match, seats, owned)
    if owned:
        with contextlib.suppress(LogsNotYours, ReplayUnpublished):  # both checked above
            detail = replace(detail, logs=seat_logs_for_viewer(match=match, viewer=viewer))
    return detail


def _published_match_detail(match: Match, seats: list[SeatShown], owned: frozenset[int]) -> MatchDetail:
    """A published match's detail with its rounds read from the replay (or why they are missing)."""
    try:
        stored = stored_replay(match)
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
    seated = Match.objects.prefetch_related("seats__bot_version__bot", "seats__player")
    match = seated.filter(pk=match_id).first()
    if match is None:
        raise Match.DoesNotExist(f"no match {match_id}")
    return match


@dataclass(frozen=True)
class ReplayDownload:
    """A replay document as one viewer may have it (gzip bytes) and the SHA-256 of those bytes."""

    data: bytes
    sha256: str


def replay_download(*, match_id: int, viewer: Viewer) -> ReplayDownload:
    """The published replay of the match as `viewer` may see it (matches.selectors' rules):
    the stored file as it is when it hides nothing from them, which is every replay without a
    forfeit reason and every replay for its forfeiting bots' owner, else matches.selectors' copy with
    other owners' reasons blanked. Match.DoesNotExist, ReplayUnpublished, FileNotFoundError,
    ReplayError."""
    match, published = match_read(match_id)
    if not published:
        raise ReplayUnpublished(f"match {match.pk}: {UNPUBLISHED}")
    stored = stored_replay(match)
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


@dataclass(frozen=True)
class LiveTable:
    """What a match page needs to follow the match live: its stream, and the viewer's own seat
    (where they sit in person) with the address of their answers."""

    events_url: str
    seat: int | None
    answer_url: str
    is_table: bool


def live_table(detail: MatchDetail, *, viewer: Viewer) -> LiveTable | None:
    """The live section of a match page: while the match waits or plays, and after it while its
    replay is unpublished (a rotation whose set is still playing shows its public stream); None
    once the replay is what the page shows."""
    match = detail.match
    if match.status in OVER and detail.published:
        return None
    mine = [seat.seat for seat in detail.seats if seat.person and seat.seat in detail.owned_seats]
    seat = mine[0] if mine else None
    events = reverse("live:events", args=[match.pk]) + (f"?seat={seat}" if seat is not None else "")
    answer = reverse("live:answer", args=[match.pk, seat]) if seat is not None else ""
    return LiveTable(events, seat, answer, match.kind == Match.Kind.TABLE)


def table_result(detail: MatchDetail, *, viewer: Viewer) -> str:
    """The results line of a finished table, for the person who played it ("" otherwise)."""
    match = detail.match
    if match.kind != Match.Kind.TABLE or match.status != Match.Status.FINISHED:
        return ""
    mine = [seat for seat in detail.seats if seat.person and seat.seat in detail.owned_seats]
    if not mine or mine[0].rank is None:
        return ""
    seat = mine[0]
    ranks = sorted(each.rank for each in detail.seats if each.rank is not None)
    shared = ranks.count(seat.rank) > 1
    place = f"{_ordinal(seat.rank)}{' (shared)' if shared else ''}"
    forfeit = (
        f"; your seat forfeited ({seat.forfeit_status}) and the greedy policy played it out"
        if seat.forfeit_status
        else ""
    )
    return f"You finished {place} of {len(detail.seats)} with {seat.score} points{forfeit}."


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"
