"""Match reads: a match with its seats, and what of a match a viewer may see.

Publication rule (one place, used by the site and the Arena alike): a match's seed and replay are
published only once its whole duplicate set is over. The rotations of a set share one seed, so the
replay of a finished rotation deals the cards of the set's rotations still to come; until every
match of the set is FINISHED, ABORTED or CANCELLED nobody sees the seed or the replay, the bots'
owners included (a bot's build may hold its owner's token). A match with no `duplicate_set` (a
challenge, say) is a set of its own.

Forfeit reasons are the bot owner's: every copy of a match or replay shown to someone else has the
reasons of seats they do not own blanked. The stored replay stays whole; the public copy differs
only in reason texts, which verification (referee.engine.replay.verify) never compares.

A bot's output in a match (its seat log) is its owner's alone, and is shown under the replay's
rule: a bot may print its own hand, and its hand in one rotation is a hand of another seat in the
set's next rotation, so before the set is over even the owner sees none of it.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet

from referee.engine import replay as replays
from septet_platform.matches.models import Match, SeatLog
from septet_platform.matches.storage import replay_load

OVER = frozenset({Match.Status.FINISHED, Match.Status.ABORTED, Match.Status.CANCELLED})
WAITING = frozenset({Match.Status.SCHEDULED, Match.Status.RUNNING})
UNPUBLISHED = "the seed and replay are published when its duplicate set is over"
LOGS_UNPUBLISHED = "your bots' output in a match is shown when its duplicate set is over, like its replay"

PUBLIC_COPY_GZIP_LEVEL = 6
"""A blanked copy is made per request: level 6 takes a third of level 9's time for a few % more."""

Viewer = AbstractBaseUser | AnonymousUser | None


def matches_with_seats() -> QuerySet[Match]:
    """Every match, with its ladder and its seats' bot versions and bots fetched."""
    return Match.objects.select_related("ladder").prefetch_related("seats__bot_version__bot", "seats__player")


def match_get(*, match_id: int) -> Match:
    """The match with its ladder and seats; raises Match.DoesNotExist saying so."""
    match = matches_with_seats().filter(pk=match_id).first()
    if match is None:
        raise Match.DoesNotExist(f"no match {match_id}")
    return match


def match_replay_name(*, match: Match) -> str:
    """The match's replay's name in the replay store; FileNotFoundError when it has none (a
    missing file is found when it is read: `storage.replay_read`)."""
    if not match.replay:
        raise FileNotFoundError(f"match {match.pk} has no replay yet (it is {match.status})")
    return match.replay


class ReplayUnpublished(LookupError):
    """The match's duplicate set is not over yet: its replay stays hidden from everyone."""


def _set_filter(match: Match) -> Q:
    """The matches of `match`'s duplicate set (same ladder, tournament and set name)."""
    return Q(ladder_id=match.ladder_id, tournament_id=match.tournament_id, duplicate_set=match.duplicate_set)


def published_match_ids(matches: Iterable[Match]) -> set[int]:
    """The ids among `matches` whose seed and replay may be shown (see the module docstring):
    one query for all of them, whatever their number."""
    matches = list(matches)
    alone = {match.pk for match in matches if not match.duplicate_set and match.status in OVER}
    in_sets = [match for match in matches if match.duplicate_set]
    if not in_sets:
        return alone
    unfinished = {
        (ladder, tournament, name)
        for ladder, tournament, name in Match.objects.filter(
            duplicate_set__in={match.duplicate_set for match in in_sets}
        )
        .exclude(status__in=OVER)
        .values_list("ladder_id", "tournament_id", "duplicate_set")
    }
    return alone | {
        match.pk
        for match in in_sets
        if match.status in OVER
        and (match.ladder_id, match.tournament_id, match.duplicate_set) not in unfinished
    }


def match_is_published(match: Match) -> bool:
    """True when the match's seed and replay may be shown to anyone: its duplicate set is over."""
    if match.status not in OVER:
        return False
    if not match.duplicate_set:
        return True
    return not Match.objects.filter(_set_filter(match)).exclude(status__in=OVER).exists()


def owned_seats(match: Match, viewer: Viewer) -> set[int]:
    """The seat numbers of `match` whose bot belongs to `viewer`, or where the viewer sat in person
    (none for an anonymous viewer)."""
    if viewer is None or not viewer.is_authenticated:
        return set()
    return {
        seat.seat
        for seat in match.seats.all()
        if seat.player_id == viewer.pk
        or (seat.bot_version is not None and seat.bot_version.bot.owner_id == viewer.pk)
    }


def published_replay_name(*, match: Match) -> str:
    """The stored replay's name of a published match; ReplayUnpublished before its set is over,
    FileNotFoundError when it has none."""
    if not match_is_published(match):
        raise ReplayUnpublished(f"match {match.pk}: {UNPUBLISHED}")
    return match_replay_name(match=match)


def replay_redacted(document: dict[str, Any], *, owned: set[int]) -> bool:
    """Blanks, in place, the forfeit reasons of seats not in `owned`; True when it changed any."""
    changed = False
    forfeits = [event for event in document.get("events", []) if isinstance(event, dict)]
    forfeits = [event for event in forfeits if event.get("type") == "forfeit"]
    forfeits += [entry for entry in document.get("forfeits", []) or [] if isinstance(entry, dict)]
    for entry in forfeits:
        if entry.get("seat") not in owned and entry.get("reason"):
            entry["reason"] = ""
            changed = True
    return changed


def replay_for_viewer(*, match: Match, viewer: Viewer) -> bytes:
    """The published replay (.json.gz bytes) as `viewer` may see it: the stored file itself when
    it hides nothing from them, else a copy with other owners' forfeit reasons blanked.
    ReplayUnpublished, FileNotFoundError, or ReplayError for a damaged file (never sent as is:
    it could hold reasons this could not blank)."""
    published_replay_name(match=match)
    stored, document = replay_load(match)  # checked: size, checksum, the match it names
    if not replay_redacted(document, owned=owned_seats(match, viewer)):
        return stored
    return gzip.compress(replays.dumps(document), compresslevel=PUBLIC_COPY_GZIP_LEVEL, mtime=0)


class LogsNotYours(PermissionError):
    """The viewer has no bot seated in the match: no seat log of it is theirs to read."""


@dataclass(frozen=True)
class OwnSeatLog:
    """One of the viewer's seats in a match: its forfeit if any, and what its bot wrote."""

    seat: int
    bot: str
    version: int
    forfeit_status: str
    forfeit_reason: str
    forfeit_event: int | None
    output: str
    truncated: bool


def seat_logs_for_viewer(*, match: Match, viewer: Viewer) -> list[OwnSeatLog]:
    """The seat logs of `viewer`'s own seats in `match` (by seat): LogsNotYours when they have
    none there (an anonymous viewer never has), ReplayUnpublished before the set is over."""
    owned = owned_seats(match, viewer)
    if not owned:
        raise LogsNotYours(f"none of your bots played match {match.pk}")
    if not match_is_published(match):
        raise ReplayUnpublished(f"match {match.pk}: {LOGS_UNPUBLISHED}")
    logs = {log.seat_id: log for log in SeatLog.objects.filter(seat__match=match, seat__seat__in=owned)}
    shown = []
    for seat in sorted(match.seats.all(), key=lambda seat: seat.seat):
        if seat.seat not in owned or seat.bot_version is None:  # a person's seat has no bot output
            continue
        log = logs.get(seat.pk)
        shown.append(
            OwnSeatLog(
                seat=seat.seat,
                bot=seat.bot_version.bot.name,
                version=seat.bot_version.number,
                forfeit_status=seat.forfeit_status,
                forfeit_reason=seat.forfeit_reason,
                forfeit_event=log.forfeit_event if log else None,
                output=log.text if log else "",
                truncated=log.truncated if log else False,
            )
        )
    return shown
