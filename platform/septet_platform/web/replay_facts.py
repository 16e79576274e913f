"""What the site's pages need from a stored replay, parsed once per content rather than per view.

A replay file never changes once written, and thousands of match views read the same few
hundred: decompressing and parsing the JSON was most of a match page's and a replay download's
work. Each view still reads the file and checks it exactly as `matches.storage.replay_load` does
(size, SHA-256 and the match it names, when recorded with the match), so a damaged or swapped file
is refused every time; only what is derived from the bytes (the rounds, the seats whose forfeit
reasons are not blank, the match id the replay names) is kept, per process, under the SHA-256 of
those bytes. A cached entry is therefore exactly what parsing the same bytes again would give.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.html import format_html_join
from django.utils.safestring import SafeString

from referee.engine import replay as replays
from septet_platform.matches.models import Match
from septet_platform.matches.storage import replay_load, replay_read

KEPT = 1024
"""Replays whose facts a process keeps (a few kilobytes each), least recently used dropped first."""


@dataclass(frozen=True)
class RoundRow:
    """One round of a match: per seat, the points made in it and the running total, as text (a
    page formats each number once per replay, not once per view: Django formats a number it is
    given through its localisation code, which was most of a match page's rendering)."""

    number: int
    cells: list[tuple[str, str]]


@dataclass(frozen=True)
class ReplayFacts:
    """What the pages use of one replay's content."""

    rounds: tuple[RoundRow, ...]
    rounds_html: SafeString
    """The rounds table's rows, escaped: made once per replay (a page of 30 rounds at 7 seats is
    420 cells, which Django's template loop took milliseconds to draw on every view)."""
    reason_seats: frozenset[int]
    """Seats with a forfeit reason that is not blank (what `replay_redacted` would blank)."""
    match_id: Any
    """The match id the replay names."""


@dataclass(frozen=True)
class StoredReplay:
    """A match's replay file as read and checked now, with its facts; `sha256` of `data`."""

    data: bytes
    sha256: str
    facts: ReplayFacts


_lock = threading.Lock()
_kept: OrderedDict[str, ReplayFacts] = OrderedDict()


def stored_replay(match: Match) -> StoredReplay:
    """`match`'s replay, checked as `replay_load` checks it; ReplayError for a damaged,
    truncated or swapped file, FileNotFoundError for a missing one."""
    data = replay_read(match)
    digest = hashlib.sha256(data).hexdigest()
    facts = _remembered(digest)
    if facts is None:
        data, document = replay_load(match)  # parses (and checks) on first sight only
        digest = hashlib.sha256(data).hexdigest()
        facts = _remember(digest, _facts(document))
    elif match.replay_sha256:
        _check(match, match.replay, data, digest, facts)
    return StoredReplay(data=data, sha256=digest, facts=facts)


def _check(match: Match, name: str, data: bytes, digest: str, facts: ReplayFacts) -> None:
    """The checks of `replays.load_checked`, on bytes already read and a document already parsed."""
    if len(data) != (match.replay_size or 0):
        raise replays.ReplayError(
            f"{name} has {len(data)} bytes, {match.replay_size} were stored (damaged or truncated)"
        )
    if digest != match.replay_sha256:
        raise replays.ReplayError(f"{name} does not match its stored checksum (damaged or replaced)")
    if facts.match_id != match.replay_match_id:
        raise replays.ReplayError(f"{name} is the replay of another match ({facts.match_id!r})")


def _remembered(digest: str) -> ReplayFacts | None:
    with _lock:
        facts = _kept.get(digest)
        if facts is not None:
            _kept.move_to_end(digest)
        return facts


def _remember(digest: str, facts: ReplayFacts) -> ReplayFacts:
    with _lock:
        _kept[digest] = facts
        _kept.move_to_end(digest)
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    return facts


def forget_all() -> None:
    """Drops every kept entry (tests)."""
    with _lock:
        _kept.clear()


def _facts(document: dict[str, Any]) -> ReplayFacts:
    events = document.get("events", [])
    forfeits = [event for event in events if isinstance(event, dict) and event.get("type") == "forfeit"]
    forfeits += [entry for entry in document.get("forfeits", []) or [] if isinstance(entry, dict)]
    rounds = round_rows(events if isinstance(events, list) else [])
    return ReplayFacts(
        rounds=tuple(rounds),
        rounds_html=rounds_table_rows(rounds),
        reason_seats=frozenset(_seat(entry.get("seat")) for entry in forfeits if entry.get("reason")),
        match_id=document.get("match_id"),
    )


def rounds_table_rows(rounds: Sequence[RoundRow]) -> SafeString:
    """The match page's rounds table body: per round its number, then each seat's points and total."""
    cell = '<td class="num">{}</td><td class="num"><strong>{}</strong></td>'
    return format_html_join(
        "",
        '<tr><td class="num">{}</td>{}</tr>\n',
        ((row.number, format_html_join("", cell, row.cells)) for row in rounds),
    )


def _seat(value: Any) -> int:
    """A forfeit's seat number; -1 (a seat nobody owns, so its reason is always blanked) for a
    value that is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def round_rows(events: Sequence[Any]) -> list[RoundRow]:
    """The `round_end` events of a replay as rows (every game records points and running scores)."""
    rows = []
    for event in events:
        if isinstance(event, dict) and event.get("type") == "round_end":
            points, scores = event.get("points"), event.get("scores")
            if isinstance(points, list) and isinstance(scores, list):
                cells = [(str(point), str(score)) for point, score in zip(points, scores, strict=False)]
                rows.append(RoundRow(number=len(rows) + 1, cells=cells))
    return rows
