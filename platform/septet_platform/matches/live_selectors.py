"""Live reads: which stream a viewer may follow, whether a match's stream is held back, and what
is being played now.

Duplicate-safe (docs/live.md): a person (or, later, a bot that plays from its owner's machine) can
be told things a sandboxed bot cannot, so the public stream of a deal is held while somebody who
still has to play that deal sits in another rotation of it: it is followed only once every other
rotation with a person at it is over. The seats' own streams are never held (a seat sees only its
own game), and seeds and full replays stay under the publication rule of matches.selectors.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import connection

from septet_platform.bots.models import Bot, BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.live.streams import stream_key
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.selectors import match_is_published

OVER = (Match.Status.FINISHED, Match.Status.ABORTED, Match.Status.CANCELLED)
HELD = "this deal is still to be played by a person in another rotation of its duplicate set"


class NotYourSeat(PermissionError):
    """A seat's own stream or answers asked for by someone who does not sit there."""


@dataclass(frozen=True)
class StreamPlan:
    """What a viewer of a match follows now: the stream of one attempt for one audience."""

    match_id: int
    status: str
    attempt: int
    """The attempt whose stream to follow: the current one, or the next for a match not started."""
    audience: int | None
    held: str
    """Why the stream is held back now ("" when it is not)."""
    end_reason: str
    published: bool = False
    """Whether the match's full replay is published (over, and its duplicate set too)."""

    @property
    def key(self) -> str:
        return stream_key(self.match_id, self.attempt, self.audience)

    @property
    def over(self) -> bool:
        return self.status in OVER


def held_reason(match: Match) -> str:
    """Why `match`'s public stream is held back now, or "" (see the module docstring)."""
    if not match.duplicate_set:
        return ""
    rotations = (
        Match.objects.filter(
            duplicate_set=match.duplicate_set, ladder_id=match.ladder_id, tournament_id=match.tournament_id
        )
        .exclude(pk=match.pk)
        .exclude(status__in=OVER)
    )
    if Seat.objects.filter(match__in=rotations, player__isnull=False).exists():
        return HELD
    return ""


def stream_plan(
    *, match_id: int, viewer: AbstractBaseUser | AnonymousUser | None, seat: int | None = None
) -> StreamPlan:
    """The stream `viewer` follows for `match_id`: the public one, or `seat`'s own when the viewer
    sits there (NotYourSeat otherwise). Match.DoesNotExist for an unknown match."""
    match = Match.objects.filter(pk=match_id).first()
    if match is None:
        raise Match.DoesNotExist(f"no match {match_id}")
    if seat is not None:
        sitting = (
            Seat.objects.filter(match=match, seat=seat, player__isnull=False)
            .values_list("player_id", flat=True)
            .first()
        )
        if sitting is None or viewer is None or not viewer.is_authenticated or sitting != viewer.pk:
            raise NotYourSeat(f"seat {seat} of match {match_id} is not yours")
    attempt = match.attempt + 1 if match.status == Match.Status.SCHEDULED else match.attempt
    held = "" if seat is not None else held_reason(match)
    published = match.status in OVER and match_is_published(match)
    return StreamPlan(match.pk, match.status, attempt, seat, held, match.end_reason, published)


@dataclass(frozen=True)
class LiveMatch:
    """A match being played now, as a "live now" list shows it."""

    match_id: int
    game: str
    kind: str
    seats: list[str]
    """Who sits where: `bot vN`, or a person's user name."""
    started: datetime | None


def live_now(
    *, limit: int = 6, game: str = "", ladder_id: int | None = None, bot_id: int | None = None
) -> list[LiveMatch]:
    """Matches being played now, the latest started first (of one ladder, or seating one bot),
    leaving out any whose public stream is held (`held_reason`). One statement, whatever the
    number of matches (the home page reads it on every view): the matches with their seats, and
    per match whether a person sits in another unfinished rotation of its deal."""
    where, params = ["m.status = %s"], [Match.Status.RUNNING]
    if game:
        where.append("l.game = %s")
        params.append(game)
    if ladder_id is not None:
        where.append("m.ladder_id = %s")
        params.append(ladder_id)
    if bot_id is not None:
        where.append(
            f"EXISTS (SELECT 1 FROM {_SEATS} bs JOIN {_VERSIONS} bv ON bv.id = bs.bot_version_id "
            "WHERE bs.match_id = m.id AND bv.bot_id = %s)"
        )
        params.append(bot_id)
    sql = f"""
SELECT p.id, p.game, p.kind, p.started, p.held, s.seat, b.name, v.number, u.{_USERNAME}
FROM (
    SELECT m.id, l.game, m.kind, m.started, {_HELD} AS held
    FROM {_MATCHES} m JOIN {_LADDERS} l ON l.id = m.ladder_id
    WHERE {" AND ".join(where)}
    ORDER BY m.started DESC, m.id DESC
    LIMIT %s
) p
    JOIN {_SEATS} s ON s.match_id = p.id
    LEFT JOIN {_VERSIONS} v ON v.id = s.bot_version_id
    LEFT JOIN {_BOTS} b ON b.id = v.bot_id
    LEFT JOIN {_USERS} u ON u.id = s.player_id
ORDER BY p.started DESC, p.id DESC, s.seat"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, 2 * limit])
        rows = cursor.fetchall()
    found: dict[int, LiveMatch] = {}
    for match_id, game_id, kind, started, held, _, bot, number, person in rows:
        if held:
            continue
        shown = found.get(match_id)
        if shown is None:
            shown = found[match_id] = LiveMatch(match_id, game_id, kind, [], _moment(started))
        shown.seats.append(person if bot is None else f"{bot} v{number}")
    return list(found.values())[:limit]


def _moment(value: object) -> datetime | None:
    """A time read by a raw statement: SQLite gives text, PostgreSQL a datetime."""
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


_MATCHES, _SEATS = Match._meta.db_table, Seat._meta.db_table
_LADDERS = Ladder._meta.db_table
_VERSIONS, _BOTS = BotVersion._meta.db_table, Bot._meta.db_table
_USERS = get_user_model()._meta.db_table
_USERNAME = get_user_model()._meta.get_field(get_user_model().USERNAME_FIELD).column
_HELD = f"""CASE WHEN m.duplicate_set <> '' AND EXISTS (
        SELECT 1 FROM {_SEATS} hs JOIN {_MATCHES} o ON o.id = hs.match_id
        WHERE hs.player_id IS NOT NULL AND o.id <> m.id AND o.duplicate_set = m.duplicate_set
            AND o.ladder_id = m.ladder_id
            AND (o.tournament_id = m.tournament_id OR (o.tournament_id IS NULL AND m.tournament_id IS NULL))
            AND o.status NOT IN ({", ".join(f"'{status}'" for status in OVER)})
    ) THEN 1 ELSE 0 END"""
"""1 when a person sits in another unfinished rotation of match `m`'s deal (`held_reason` in SQL)."""


def person_seats(*, match_id: int, user: AbstractBaseUser | AnonymousUser | None) -> list[int]:
    """The seats of `match_id` where `user` sits (none for anyone not signed in)."""
    if user is None or not user.is_authenticated:
        return []
    return list(Seat.objects.filter(match_id=match_id, player_id=user.pk).values_list("seat", flat=True))
