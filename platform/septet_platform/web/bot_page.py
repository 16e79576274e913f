"""What a bot's page shows, read in a few plain SQL statements whatever the bot's history.

The page is the site's most asked-for and was its most expensive: twelve ORM queries and about
19 ms of CPU for a bot with 400 matches among 100,000. Building an ORM query costs about 0.3 ms
before the database sees it, more than the database's own work for most of these; the rows
became model instances only to be read once. Here each part is one statement written out (the
same on PostgreSQL and SQLite), its rows read as tuples:

- ratings: the bot's ratings with their ladder and version, then each shown rating's last
  CHART_POINTS changes;
- results: one page of the bot's matches with, per row, its table's size, the rating change it
  made and whether its duplicate set is still being played (`matches.selectors`' publication
  rule, written as SQL: `sql.set_open`), and a count of its queued or running matches;
- duplicate sets: the bot's recent sets grouped by the database (its own seats), then those sets'
  matches grouped (is every rotation over? which is the first?), then the tables of the few shown.

A bot's duplicate results: the ladder plays each seed in every seat rotation (a duplicate set),
so a bot's mean rank over one whole set is nearly free of the luck of the deal; the bot page lists
its recent complete sets and, per game and table size, the mean of those set means with a 95%
interval.

Nothing here is stored apart from the matches, seats and ratings themselves (no summary that
could drift from them): every view reads the current rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, NamedTuple, Protocol

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from referee.tools.stats import MeanInterval, mean_interval
from septet_platform.bots.models import Bot, BotVersion, ConnectionEvent
from septet_platform.ladders import ratings
from septet_platform.ladders.models import Ladder, Rating, RatingChange
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.selectors import OVER, WAITING
from septet_platform.web.charts import Chart, belief_chart
from septet_platform.web.paging import MATCHES_PER_PAGE, match_filter, page_number
from septet_platform.web.sql import document, fetch, literals, marks, moment, set_open, table

RECENT_MATCHES = 20
"""The owner's forfeits the page lists."""
CONNECTION_EVENTS_SHOWN = 30
"""A self-hosted bot's connection log on its owner's page: this many of its newest events."""
WAITING_SHOWN = 10
"""Beside its results, a bot page lists this many of its queued or running matches."""
RECENT_DUPLICATE_SETS = 10
"""The complete duplicate sets listed one by one (the summary is over DUPLICATE_SETS_SUMMED)."""
DUPLICATE_SETS_SUMMED = 200
"""The summary of a bot's duplicate results is over its last this many sets."""
CHART_POINTS = 200
"""The rating-history chart shows a ladder's last this many rating changes of a bot."""

STATUS_LABELS: dict[str, str] = {str(value): str(label) for value, label in Match.Status.choices}
VERSION_STATUS_LABELS: dict[str, str] = {str(value): str(label) for value, label in BotVersion.Status.choices}

SEATS = table(Seat)
MATCHES = table(Match)
LADDERS = table(Ladder)
VERSIONS = table(BotVersion)
BOTS = table(Bot)
USERS = table(get_user_model())
USERNAME = get_user_model()._meta.get_field(get_user_model().USERNAME_FIELD).column
RATINGS = table(Rating)
CHANGES = table(RatingChange)
WAITING_SQL = literals(WAITING)
FINISHED_SQL = literals([Match.Status.FINISHED])


# The page ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BotSummary:
    """The bot as its page shows it (and whose page it is)."""

    id: int
    name: str
    owner_id: int
    owner_name: str
    is_house: bool
    created: datetime | None
    self_hosted: bool = False

    @property
    def pk(self) -> int:
        return self.id


@dataclass(frozen=True)
class VersionRow:
    """One of the bot's versions as its page lists it; `error_log` is shown to the owner only."""

    id: int
    number: int
    status: str
    manifest: dict[str, Any]
    error_log: str
    created: datetime | None
    qualified: datetime | None
    archive_pruned: bool = False
    """Its archives were deleted for its owner's storage quota (`bots.quota`): it plays no more."""

    @property
    def pk(self) -> int:
        return self.id

    @property
    def status_label(self) -> str:
        return VERSION_STATUS_LABELS.get(self.status, self.status)

    @property
    def description(self) -> str:
        return str(self.manifest.get("description", "") or "") if isinstance(self.manifest, dict) else ""


_BOT_SQL = f"""
SELECT b.id, b.name, b.owner_id, u.{USERNAME}, b.is_house, b.created, b.self_hosted
FROM {BOTS} b JOIN {USERS} u ON u.id = b.owner_id
WHERE b.name = %s"""

_VERSIONS_SQL = f"""
SELECT id, number, status, manifest, error_log, created, qualified, archive_pruned
FROM {VERSIONS} WHERE bot_id = %s ORDER BY number DESC"""


def bot_named(name: str) -> BotSummary:
    """The bot called `name` with its owner's name; Bot.DoesNotExist saying so."""
    found = fetch(_BOT_SQL, [name])
    if not found:
        raise Bot.DoesNotExist(f"no bot named {name!r}")
    bot_id, bot_name, owner_id, owner_name, is_house, created, self_hosted = found[0]
    return BotSummary(
        bot_id, bot_name, owner_id, owner_name, bool(is_house), moment(created), bool(self_hosted)
    )


def bot_versions(bot_id: int) -> list[VersionRow]:
    """The bot's versions, newest first."""
    return [
        VersionRow(
            pk,
            number,
            status,
            document(manifest),
            error_log,
            moment(created),
            moment(qualified),
            archive_pruned=pruned is not None,
        )
        for pk, number, status, manifest, error_log, created, qualified, pruned in fetch(
            _VERSIONS_SQL, [bot_id]
        )
    ]


def version_following(versions: Sequence[VersionRow]) -> VersionRow | None:
    """The version a bot page follows live: its newest one while it is still qualifying."""
    newest = versions[0] if versions else None
    return newest if newest is not None and newest.status == BotVersion.Status.QUALIFYING else None


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
    open: bool = False
    """On the game's open ladder (with self-hosted bots), not its sandboxed one."""


class ResultRow(NamedTuple):
    """One of a bot's matches as its page lists it: its seat (rank of the table, score), the
    table's size, the rating change the match made (None when it made none) and whether its
    replay may be linked."""

    match_id: int
    game: str
    version: int
    seat: int
    status: str
    rank: int | None
    score: int | None
    forfeited: bool
    players: int
    rating_change: int | None
    replay: bool

    @property
    def status_label(self) -> str:
        return STATUS_LABELS.get(self.status, self.status)


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


@dataclass(frozen=True)
class DuplicateSet:
    """One complete duplicate set the bot played: its mean rank and score over every rotation.
    `field` (the other bots at its table) is read for the sets the page lists one by one."""

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
class BotProfile:
    """What the bot page shows; `owner_sees` gates the error logs and forfeit reasons."""

    bot: BotSummary
    versions: list[VersionRow]
    ratings: list[LadderRating]
    results: ResultsPage
    status: str
    waiting: list[ResultRow]
    waiting_count: int
    owner_sees: bool
    forfeits: list[Seat] = field(default_factory=list)
    connection_events: list[ConnectionEvent] = field(default_factory=list)
    """A self-hosted bot's recent connections and disconnections (its owner's page only)."""

    @property
    def has_qualification_logs(self) -> bool:
        """Whether any version left an error log for its owner to read."""
        return any(version.error_log for version in self.versions)

    duplicate_sets: list[DuplicateSet] = field(default_factory=list)
    duplicate_summary: list[DuplicateSummary] = field(default_factory=list)


def bot_profile(
    *,
    bot: BotSummary,
    viewer: AbstractBaseUser | AnonymousUser,
    status: str = "finished",
    page: str | int = 1,
) -> BotProfile:
    """The bot's versions, ratings with history, its finished matches a page at a time (results
    first; or its waiting ones with status "waiting"), a few waiting matches apart, its duplicate
    results, and (for its owner) forfeits. Its seats are found through its versions' ids (an
    index on the seat's version and match), never through a join the database could start from
    every match."""
    owner_sees = bool(viewer.is_authenticated and viewer.pk == bot.owner_id)
    versions = bot_versions(bot.id)
    version_ids = [version.pk for version in versions]
    status = match_filter(status)
    waiting_count = waiting_matches_count(version_ids)
    sets = duplicate_sets(bot=bot, version_ids=version_ids)
    return BotProfile(
        bot=bot,
        versions=versions,
        ratings=bot_ratings(bot),
        results=bot_results(bot=bot, status=status, page=page, version_ids=version_ids),
        status=status,
        waiting=(
            _result_rows(version_ids, WAITING, offset=0, limit=WAITING_SHOWN)
            if status == "finished" and waiting_count
            else []
        ),
        waiting_count=waiting_count,
        owner_sees=owner_sees,
        forfeits=_forfeits(version_ids) if owner_sees else [],
        connection_events=_connection_events(bot.id) if owner_sees and bot.self_hosted else [],
        duplicate_sets=sets[:RECENT_DUPLICATE_SETS],
        duplicate_summary=duplicate_summary(sets),
    )


def _connection_events(bot_id: int) -> list[ConnectionEvent]:
    """A self-hosted bot's last CONNECTION_EVENTS_SHOWN connection changes, newest first."""
    return list(
        ConnectionEvent.objects.filter(bot_id=bot_id).order_by("-at", "-pk")[:CONNECTION_EVENTS_SHOWN]
    )


def _forfeits(version_ids: Sequence[int]) -> list[Seat]:
    """The owner's recent forfeited seats, with their reasons (the owner's page only)."""
    return list(
        Seat.objects.filter(bot_version_id__in=version_ids)
        .exclude(forfeit_status="")
        .select_related("bot_version")
        .order_by("-match_id")[:RECENT_MATCHES]
    )


# Ratings --------------------------------------------------------------------------------------

_RATINGS_SQL = f"""
SELECT r.id, r.ladder_id, l.game, v.number, r.mu, r.sigma, r.games, l.pool
FROM {RATINGS} r JOIN {VERSIONS} v ON v.id = r.bot_version_id JOIN {LADDERS} l ON l.id = r.ladder_id
WHERE v.bot_id = %s"""

_HISTORY_SQL = f"SELECT mu_after, sigma_after FROM {CHANGES} WHERE rating_id = %s ORDER BY id DESC LIMIT %s"


def bot_ratings(bot: BotSummary) -> list[LadderRating]:
    """The rating of each ladder's newest rated version of `bot` (by game), with that rating's
    last CHART_POINTS changes as a chart."""
    newest: dict[int, tuple[Any, ...]] = {}
    for row in fetch(_RATINGS_SQL, [bot.pk]):
        held = newest.get(row[1])
        if held is None or row[3] > held[3]:
            newest[row[1]] = row
    shown = []
    ordered = sorted(newest.values(), key=lambda row: (row[2], row[7] == Ladder.Pool.OPEN))
    for rating_id, _, game, number, mu, sigma, games, pool in ordered:
        history = fetch(_HISTORY_SQL, [rating_id, CHART_POINTS])
        now = ratings.display(mu, sigma)
        shown.append(
            LadderRating(
                game=game,
                version=number,
                rating=now.rating,
                low=now.low,
                high=now.high,
                games=games,
                chart=belief_chart(history[::-1]),
                open=pool == Ladder.Pool.OPEN,
            )
        )
    return shown


# Results --------------------------------------------------------------------------------------

# A page of the bot's seats (newest first) and, for those rows only, the table's size, the rating
# change the match made to this version, and whether the match's duplicate set still has a match
# that is not over (the publication rule, `sql.set_open`).
_RESULTS_SQL = f"""
SELECT p.match_id, p.game, p.number, p.seat, p.status, p.rank, p.score, p.forfeit_status, p.replay,
    (SELECT COUNT(*) FROM {SEATS} x WHERE x.match_id = p.match_id),
    {set_open("p")},
    rc.mu_before, rc.sigma_before, rc.mu_after, rc.sigma_after
FROM (
    SELECT s.match_id, s.seat, s.rank, s.score, s.forfeit_status, s.bot_version_id, v.number, m.status,
        m.replay, m.duplicate_set, m.ladder_id, m.tournament_id,
        CASE WHEN l.pool = 'open' THEN l.game || ' (open)' ELSE l.game END AS game
    FROM {SEATS} s
        JOIN {VERSIONS} v ON v.id = s.bot_version_id
        JOIN {MATCHES} m ON m.id = s.match_id
        JOIN {LADDERS} l ON l.id = m.ladder_id
    WHERE s.bot_version_id IN ({{versions}}) AND m.status IN ({{statuses}})
    ORDER BY s.match_id DESC, s.seat
    LIMIT %s OFFSET %s
) p
    LEFT JOIN {RATINGS} r ON r.bot_version_id = p.bot_version_id AND r.ladder_id = p.ladder_id
    LEFT JOIN {CHANGES} rc ON rc.rating_id = r.id AND rc.match_id = p.match_id
ORDER BY p.match_id DESC, p.seat"""

_WAITING_COUNT_SQL = f"""
SELECT COUNT(*) FROM {SEATS} s
WHERE s.bot_version_id IN ({{versions}})
    AND s.match_id IN (SELECT m.id FROM {MATCHES} m WHERE m.status IN ({WAITING_SQL}))"""


def bot_results(
    *,
    bot: BotSummary,
    status: str = "finished",
    page: str | int = 1,
    version_ids: Sequence[int] | None = None,
) -> ResultsPage:
    """One page of the bot's matches that are over (or, with status "waiting", queued or
    running), newest first, each with its table size, rating change and replay link. No count of
    every match (a busy bot has tens of thousands): one row past the page says whether an older
    page exists."""
    statuses = OVER if match_filter(status) == "finished" else WAITING
    if version_ids is None:
        version_ids = [version.id for version in bot_versions(bot.id)]
    number = page_number(page)
    start = (number - 1) * MATCHES_PER_PAGE
    rows = _result_rows(version_ids, statuses, offset=start, limit=MATCHES_PER_PAGE + 1)
    return ResultsPage(object_list=rows[:MATCHES_PER_PAGE], number=number, more=len(rows) > MATCHES_PER_PAGE)


def _result_rows(
    version_ids: Sequence[int], statuses: Iterable[str], *, offset: int, limit: int
) -> list[ResultRow]:
    if not version_ids:
        return []
    sql = _RESULTS_SQL.format(versions=marks(len(version_ids)), statuses=literals(statuses))
    rows = []
    for (
        match_id,
        game,
        number,
        seat,
        match_status,
        rank,
        score,
        forfeit_status,
        replay,
        players,
        in_open_set,
        *change,
    ) in fetch(sql, [*version_ids, limit, offset]):
        published = match_status in OVER and not in_open_set
        rows.append(
            ResultRow(
                match_id=match_id,
                game=game,
                version=number,
                seat=seat,
                status=match_status,
                rank=rank,
                score=score,
                forfeited=bool(forfeit_status),
                players=players,
                rating_change=None if change[0] is None else _rating_change(*change),
                replay=published and bool(replay),
            )
        )
    return rows


def _rating_change(mu_before: float, sigma_before: float, mu_after: float, sigma_after: float) -> int:
    """The change of the displayed rating (as `ladders.selectors.rating_changes` gives it)."""
    return ratings.display(mu_after, sigma_after).rating - ratings.display(mu_before, sigma_before).rating


def waiting_matches_count(version_ids: Sequence[int]) -> int:
    """How many of these versions' seats are in a queued or running match."""
    if not version_ids:
        return 0
    [(count,)] = fetch(_WAITING_COUNT_SQL.format(versions=marks(len(version_ids))), list(version_ids))
    return int(count)


# Duplicate sets ----------------------------------------------------------------------------------

# The bot's own seats in its newest duplicate-set matches (a window of 8 seats per set summed), by
# set: the newest `limit` sets with a finished match, each with its finished seats' count, ranks
# and scores, and how many of those have no rank.
_OWN_SETS_SQL = f"""
SELECT own.name, MAX(own.match_id) AS newest, COUNT(*),
    SUM(CASE WHEN own.rank IS NULL THEN 1 ELSE 0 END), SUM(COALESCE(own.rank, 0)), SUM(COALESCE(own.score, 0))
FROM (
    SELECT m.duplicate_set AS name, m.status AS status, s.rank AS rank, s.score AS score,
        s.match_id AS match_id
    FROM {SEATS} s JOIN {MATCHES} m ON m.id = s.match_id
    WHERE s.bot_version_id IN ({{versions}}) AND m.duplicate_set <> ''
    ORDER BY s.match_id DESC
    LIMIT %s
) own
WHERE own.status IN ({FINISHED_SQL})
GROUP BY own.name
ORDER BY newest DESC
LIMIT %s"""

# Those sets' matches, by set name: every rotation finished? The first rotation's id, seed, game and
# table size (a set's rotations seat the same bots).
_SETS_SQL = f"""
SELECT g.name, g.rotations, g.first, f.seed, l.game,
    (SELECT COUNT(*) FROM {SEATS} x WHERE x.match_id = g.first)
FROM (
    SELECT m.duplicate_set AS name, COUNT(*) AS rotations, MIN(m.id) AS first,
        SUM(CASE WHEN m.status IN ({FINISHED_SQL}) THEN 0 ELSE 1 END) AS unfinished
    FROM {MATCHES} m WHERE m.duplicate_set IN ({{names}})
    GROUP BY m.duplicate_set
) g
    JOIN {MATCHES} f ON f.id = g.first
    JOIN {LADDERS} l ON l.id = f.ladder_id
WHERE g.unfinished = 0"""

_TABLES_SQL = f"""
SELECT s.match_id, b.name
FROM {SEATS} s JOIN {VERSIONS} v ON v.id = s.bot_version_id JOIN {BOTS} b ON b.id = v.bot_id
WHERE s.match_id IN ({{matches}})"""


def duplicate_sets(
    *,
    bot: BotSummary,
    limit: int = DUPLICATE_SETS_SUMMED,
    version_ids: Sequence[int] | None = None,
    named: int = RECENT_DUPLICATE_SETS,
) -> list[DuplicateSet]:
    """The bot's most recent duplicate sets (up to `limit`, counting those with a finished match)
    whose every rotation has finished and whose every seat of the bot is ranked, newest first; the
    first `named` with their `field` (the other bots at the table), the others with none."""
    if version_ids is None:
        version_ids = [version.id for version in bot_versions(bot.id)]
    if not version_ids:
        return []
    own = fetch(_OWN_SETS_SQL.format(versions=marks(len(version_ids))), [*version_ids, limit * 8, limit])
    ranked = [row for row in own if row[3] == 0]
    if not ranked:
        return []
    names = [row[0] for row in ranked]
    sets = {row[0]: row for row in fetch(_SETS_SQL.format(names=marks(len(names))), names)}
    complete = [row for row in ranked if row[0] in sets]
    firsts = [sets[row[0]][2] for row in complete[:named]]
    tables: dict[int, list[str]] = defaultdict(list)
    if firsts:
        for match_id, bot_name in fetch(_TABLES_SQL.format(matches=marks(len(firsts))), firsts):
            tables[match_id].append(bot_name)
    found = []
    for name, _, seats, _, rank_sum, score_sum in complete:
        _, rotations, first_id, seed, game, players = sets[name]
        found.append(
            DuplicateSet(
                game=game,
                name=name,
                seed=seed,
                players=int(players),
                rotations=int(rotations),
                mean_rank=int(rank_sum) / seats,
                mean_score=int(score_sum) / seats,
                field=sorted(set(tables[first_id]) - {bot.name}),
                first_match_id=first_id,
            )
        )
    return found


class _SetMeans(Protocol):
    @property
    def game(self) -> str: ...

    @property
    def players(self) -> int: ...

    @property
    def mean_rank(self) -> float: ...


def duplicate_summary(sets: Sequence[_SetMeans]) -> list[DuplicateSummary]:
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
