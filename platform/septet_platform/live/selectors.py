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

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

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


def live_now(*, limit: int = 6, game: str = "", bot_id: int | None = None) -> list[LiveMatch]:
    """Matches being played now, the latest started first (of one ladder, or seating one bot),
    leaving out any whose public stream is held (`held_reason`). Three queries, whatever the
    number of matches: the matches, their seats, and whether any deal waits for a person at all."""
    matches = (
        Match.objects.filter(status=Match.Status.RUNNING).select_related("ladder").order_by("-started", "-pk")
    )
    if game:
        matches = matches.filter(ladder__game=game)
    if bot_id is not None:
        matches = matches.filter(seats__bot_version__bot_id=bot_id).distinct()
    found = list(matches[: limit * 2])
    if found and _deals_wait_for_people():
        found = [match for match in found if not held_reason(match)]
    found = found[:limit]
    names: dict[int, list[str]] = {match.pk: [] for match in found}
    seats = (
        Seat.objects.filter(match_id__in=list(names))
        .select_related("bot_version__bot", "player")
        .order_by("match_id", "seat")
    )
    for seat in seats:
        if seat.player is not None:
            names[seat.match_id].append(seat.player.get_username())
        elif seat.bot_version is not None:
            names[seat.match_id].append(f"{seat.bot_version.bot.name} v{seat.bot_version.number}")
    return [
        LiveMatch(match.pk, match.ladder.game, match.kind, names[match.pk], match.started) for match in found
    ]


def _deals_wait_for_people() -> bool:
    """Whether a person sits in any duplicate set not over (so a stream may be held at all)."""
    return (
        Seat.objects.filter(
            player__isnull=False, match__status__in=(Match.Status.SCHEDULED, Match.Status.RUNNING)
        )
        .exclude(match__duplicate_set="")
        .exists()
    )


def person_seats(*, match_id: int, user: AbstractBaseUser | AnonymousUser | None) -> list[int]:
    """The seats of `match_id` where `user` sits (none for anyone not signed in)."""
    if user is None or not user.is_authenticated:
        return []
    return list(Seat.objects.filter(match_id=match_id, player_id=user.pk).values_list("seat", flat=True))
