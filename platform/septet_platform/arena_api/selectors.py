"""Arena reads: ladders, bots and matches as the Arena API lists them, and what of a match a
viewer may see.

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

import difflib
import gzip
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet
from django.db.models.functions import Coalesce

from referee.engine import replay as replays
from septet_platform.bots.models import Bot
from septet_platform.ladders import ratings
from septet_platform.ladders.models import Ladder, RatingChange
from septet_platform.matches.models import Match, SeatLog
from septet_platform.matches.storage import replay_load

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20
OVER = frozenset({Match.Status.FINISHED, Match.Status.ABORTED, Match.Status.CANCELLED})
WAITING = frozenset({Match.Status.SCHEDULED, Match.Status.RUNNING})
UNPUBLISHED = "the seed and replay are published when its duplicate set is over"
LOGS_UNPUBLISHED = "your bots' output in a match is shown when its duplicate set is over, like its replay"
STATUS_FILTERS: dict[str, frozenset[str]] = {"finished": OVER, "waiting": WAITING}
"""A match listing's `status` filter: matches that are over, or those queued or being played."""

PUBLIC_COPY_GZIP_LEVEL = 6
"""A blanked copy is made per request: level 6 takes a third of level 9's time for a few % more."""

Viewer = AbstractBaseUser | AnonymousUser | None


class BadPageRequest(ValueError):
    """A page size or page token the listing cannot use."""


def ladders_list() -> QuerySet[Ladder]:
    """Every ladder, by game id."""
    return Ladder.objects.order_by("game")


def ladder_get(*, game: str) -> Ladder:
    """The ladder of `game`; raises Ladder.DoesNotExist saying so."""
    ladder = Ladder.objects.filter(game=game).first()
    if ladder is None:
        raise Ladder.DoesNotExist(unknown_game_message(game))
    return ladder


def bots_list(*, owner: str = "") -> QuerySet[Bot]:
    """Every bot (or only `owner`'s), by name, with its owner and versions fetched."""
    bots = Bot.objects.select_related("owner").prefetch_related("versions").order_by("name")
    return bots.filter(owner__username=owner) if owner else bots


def _matches() -> QuerySet[Match]:
    return Match.objects.select_related("ladder").prefetch_related("seats__bot_version__bot")


def matches_page(
    *, bot: str = "", game: str = "", page_size: int = 0, page_token: str = "", status: str = ""
) -> tuple[list[Match], str]:
    """A page of matches seating `bot` and/or on `game`'s ladder, only those over or only those
    waiting if `status` says so (STATUS_FILTERS), newest first, and the token of the next page
    ("" on the last). Newest is by when a match finished (when it was created, for one that has
    not): a bot's challenge queued an hour ago and played just now lists above its rated match
    that finished before, as it would not by id. The token is the last row's (time, id)."""
    size = page_size or DEFAULT_PAGE_SIZE
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise BadPageRequest(f"page_size must be 0-{MAX_PAGE_SIZE}, not {page_size}")
    if status and status not in STATUS_FILTERS:
        raise BadPageRequest(f"status must be one of {', '.join(STATUS_FILTERS)} or empty, not {status!r}")
    matches = _matches().annotate(listed_at=Coalesce("finished", "created")).order_by("-listed_at", "-id")
    if status:
        matches = matches.filter(status__in=STATUS_FILTERS[status])
    if page_token:
        listed_at, below = _page_position(page_token)
        matches = matches.filter(Q(listed_at__lt=listed_at) | Q(listed_at=listed_at, id__lt=below))
    if bot:
        found = Bot.objects.filter(name=bot).first()
        if found is None:
            raise Bot.DoesNotExist(unknown_bot_message(bot))
        matches = matches.filter(seats__bot_version__bot=found).distinct()
    if game:
        matches = matches.filter(ladder=ladder_get(game=game))
    page = list(matches[: size + 1])
    more = len(page) > size
    page = page[:size]
    return page, _page_token(page[-1]) if more else ""


PAGE_TOKEN_SEPARATOR = "|"
MAX_PAGE_TOKEN = 64
"""Characters of a page token: the tokens this server gives (an ISO time, "|", an id) are ~50."""
BAD_PAGE_TOKEN = "page_token is not one this server gave: ask again without it"
_PAGE_ID = re.compile(r"[1-9][0-9]{0,18}")
"""A row id in a page token: ASCII digits, below 10**19 (str.isdigit takes "\u00b2", int() then
fails; 5,000 digits pass int()'s limit; an id past int64 overflows the database driver)."""


def _page_token(match: Match) -> str:
    """Where the next page starts: below this match's (listing time, id)."""
    listed_at: datetime = match.listed_at  # type: ignore[attr-defined]  # the page's annotation
    return f"{listed_at.isoformat()}{PAGE_TOKEN_SEPARATOR}{match.pk}"


def _page_position(token: str) -> tuple[datetime, int]:
    """The (listing time, id) a page token says the page starts below; BadPageRequest for a
    token this server did not give."""
    if len(token) > MAX_PAGE_TOKEN:
        raise BadPageRequest(BAD_PAGE_TOKEN)
    when, _, below = token.partition(PAGE_TOKEN_SEPARATOR)
    try:
        listed_at = datetime.fromisoformat(when)
    except ValueError:
        listed_at = None
    if listed_at is None or listed_at.tzinfo is None or not _PAGE_ID.fullmatch(below):
        raise BadPageRequest(BAD_PAGE_TOKEN)
    position = int(below)
    if position >= 2**63:
        raise BadPageRequest(BAD_PAGE_TOKEN)
    return listed_at, position


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """The hint `; did you mean X?` naming the choice closest to a mistyped `word` (difflib's
    ratio over 0.6), or "" when none is close: a typo gets its fix in the error itself."""
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean {close[0]}?" if close else ""


def unknown_bot_message(name: str) -> str:
    """Why no bot is found by `name`, with the closest bot name when one is close."""
    return f"no bot named {name!r}{did_you_mean(name, Bot.objects.values_list('name', flat=True))}"


def unknown_game_message(game: str) -> str:
    """Why `game` has no ladder: the closest game id, then every game id that has one."""
    games = list(Ladder.objects.order_by("game").values_list("game", flat=True))
    known = f" (the ladders: {', '.join(games)})" if games else " (this server has no ladder yet)"
    return f"no ladder for game {game!r}{did_you_mean(game, games)}{known}"


def match_get(*, match_id: int) -> Match:
    """The match with its ladder and seats; raises Match.DoesNotExist saying so."""
    match = _matches().filter(pk=match_id).first()
    if match is None:
        raise Match.DoesNotExist(f"no match {match_id}")
    return match


def match_replay_path(*, match: Match) -> Path:
    """Where the match's replay (.json.gz) is; raises FileNotFoundError when it has none."""
    if not match.replay:
        raise FileNotFoundError(f"match {match.pk} has no replay yet (it is {match.status})")
    path = Path(settings.SEPTET_REPLAYS_DIR) / match.replay
    if not path.is_file():
        raise FileNotFoundError(f"the replay of match {match.pk} is missing from storage")
    return path


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
    """The seat numbers of `match` whose bot belongs to `viewer` (none for an anonymous viewer)."""
    if viewer is None or not viewer.is_authenticated:
        return set()
    return {seat.seat for seat in match.seats.all() if seat.bot_version.bot.owner_id == viewer.pk}


def published_replay_path(*, match: Match) -> Path:
    """The stored replay of a published match; ReplayUnpublished before its set is over,
    FileNotFoundError when it has none."""
    if not match_is_published(match):
        raise ReplayUnpublished(f"match {match.pk}: {UNPUBLISHED}")
    return match_replay_path(match=match)


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
    path = published_replay_path(match=match)
    stored, document = replay_load(match, path)  # checked: size, checksum, the match it names
    if not replay_redacted(document, owned=owned_seats(match, viewer)):
        return stored
    return gzip.compress(replays.dumps(document), compresslevel=PUBLIC_COPY_GZIP_LEVEL, mtime=0)


def rating_changes(matches: Iterable[Match]) -> dict[tuple[int, int], int]:
    """The change of the displayed rating each (match id, bot version id) made, one query for all
    of `matches`; a pair is missing when its match changed no rating (unrated, not yet rated, or
    a duplicate set's rotation before its last)."""
    changes = RatingChange.objects.filter(match_id__in=[match.pk for match in matches]).values_list(
        "match_id", "rating__bot_version_id", "mu_before", "sigma_before", "mu_after", "sigma_after"
    )
    return {
        (match_id, version_id): ratings.display(mu_after, sigma_after).rating
        - ratings.display(mu_before, sigma_before).rating
        for match_id, version_id, mu_before, sigma_before, mu_after, sigma_after in changes
    }


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
        if seat.seat not in owned:
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
