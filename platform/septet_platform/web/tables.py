"""The rows of the site's longest tables as escaped HTML, made in Python rather than by a template loop.

A ladder page draws 50 rows of 6 cells, a bot page 20 results of 7: in Django's template language each
number goes through localisation, each date through the date filter and each link through
`reverse`, which was most of those pages' work (about 5 ms of a ladder page). `format_html` was the
next cost (each argument through a lazy-aware wrapper): here every text value goes through
`escape` (the standard library's `html.escape`, which Django's own `escape` calls), safe markup is
kept as it is and numbers are written as numbers, so a bot's or owner's name cannot break the page;
the markup is the same as the templates drew.
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Iterable
from datetime import datetime, tzinfo
from decimal import ROUND_HALF_UP, Context, Decimal, getcontext

from django.template.defaultfilters import floatformat
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeData, SafeString, mark_safe

from septet_platform.ladders.selectors import Standing
from septet_platform.web.bot_page import DuplicateSet, DuplicateSummary, ResultRow, VersionRow
from septet_platform.web.selectors import SeatShown

PROVISIONAL = format_html(
    ' <span class="muted provisional" title="{}">provisional</span>',
    "fewer than 50 rated games: its place may still change a lot",
)
NONE_YET = mark_safe('<span class="muted">none yet</span>')
AFTER_ITS_SET = '<span class="muted">after its set</span>'


def escape(value: object) -> str:
    """`value` as `format_html` writes it: safe markup as it is, anything else escaped."""
    if isinstance(value, SafeData):
        return str(value)
    return html.escape(str(value))


@functools.lru_cache(maxsize=8192)
def bot_path(name: str) -> str:
    """The bot page's address, escaped for an attribute (kept: a ladder page links 50 bots, most
    of them every time)."""
    return html.escape(reverse("web:bot", args=[name]))


@functools.lru_cache(maxsize=4096)
def match_path(match_id: int) -> str:
    """A match page's address, escaped for an attribute."""
    return html.escape(reverse("web:match", args=[match_id]))


@functools.lru_cache(maxsize=64)
def ladder_path(game: str) -> str:
    """A ladder page's address, escaped for an attribute."""
    return html.escape(reverse("web:ladder", args=[game]))


def decimal_text(value: float, places: int) -> str:
    """`value` with `places` decimals as the template filter `floatformat:places` writes it (its
    decimal rounding, half up; no "-0"), without its per-call overhead."""
    if not math.isfinite(value):
        return str(floatformat(value, places))
    exact = Decimal(str(value))
    precision = max(getcontext().prec, len(exact.as_tuple().digits) + places + 1)
    rounded = exact.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP, Context(prec=precision))
    text = f"{rounded:f}"
    return text[1:] if text.startswith("-") and not rounded else text


def date_text(moment: datetime | None) -> str:
    """A moment in the site's time zone as the template filter `date:"Y-m-d H:i"` writes it ("" for
    none)."""
    if moment is None:
        return ""
    local = timezone.localtime(moment) if timezone.is_aware(moment) else moment
    return local.strftime("%Y-%m-%d %H:%M")


def time_cell(moment: datetime | None, zone: tzinfo | None = None) -> str:
    """A <time> with the moment in the site's time zone (`zone`, else the current one; as the date
    filter shows it), or a muted "none yet"."""
    if moment is None:
        return NONE_YET
    if timezone.is_aware(moment):
        moment = moment.astimezone(zone or timezone.get_current_timezone())
    return f'<time datetime="{escape(moment.isoformat())}">{escape(moment.strftime("%Y-%m-%d %H:%M"))}</time>'


def standings_rows(rows: Iterable[Standing]) -> SafeString:
    """The ladder table's body: rank, bot (linked, with its version), owner, rating with its
    interval (and "provisional" for few games), games, last match."""
    zone = timezone.get_current_timezone()
    return mark_safe("\n".join(_standing_row(row, zone) for row in rows))


def _standing_row(row: Standing, zone: tzinfo) -> str:
    return (
        f'<tr><td class="num">{row.rank:d}</td>'
        f'<td class="col-bot"><a href="{bot_path(row.bot)}">{escape(row.bot)}</a>'
        f' <span class="muted">v{row.version:d}</span></td>'
        f'<td class="col-owner">{escape(row.owner)}</td>'
        f'<td class="num col-rating"><strong>{row.rating:d}</strong>'
        f' <span class="muted interval">{row.low:d}–{row.high:d}</span>'
        f"{PROVISIONAL if row.provisional else ''}</td>"
        f'<td class="num">{row.games:d}</td>'
        f'<td class="col-last">{time_cell(row.last_match, zone)}</td>'
        "</tr>"
    )


def results_rows(rows: Iterable[ResultRow], *, finished: bool) -> SafeString:
    """The bot page's matches: match (linked), game, version, then for matches that are over the
    rank of the table (forfeited, aborted...), score, rating change and the replay link, or for
    waiting ones the seat and status."""
    return mark_safe("\n".join(f"<tr>{_result_cells(row, finished=finished)}</tr>" for row in rows))


def _result_cells(row: ResultRow, *, finished: bool) -> str:
    path = match_path(row.match_id)
    head = (
        f'<td><a href="{path}">#{row.match_id:d}</a></td><td>{escape(row.game)}</td><td>v{row.version:d}</td>'
    )
    if not finished:
        return (
            f'{head}<td class="num">{row.seat:d}</td>'
            f'<td><span class="status status-{escape(row.status)}">{escape(row.status_label)}</span></td>'
        )
    rank = f"{row.rank:d} of {row.players:d}" if row.rank else "–"
    forfeited = " · forfeited" if row.forfeited else ""
    status = "" if row.status == "finished" else f" · {escape(row.status_label.lower())}"
    change = "–" if row.rating_change is None else f"{row.rating_change:+d}"
    replay = f'<a href="{path}#replay">replay</a>' if row.replay else AFTER_ITS_SET
    score = "–" if row.score is None else f"{row.score:d}"
    return (
        f'{head}<td class="num">{rank}{forfeited}{status}</td><td class="num">{score}</td>'
        f'<td class="num">{change}</td><td>{replay}</td>'
    )


def duplicate_summary_rows(rows: Iterable[DuplicateSummary]) -> SafeString:
    """The bot page's duplicate summary: game (linked to its ladder), table size, sets, and the
    mean of the sets' mean ranks (with its interval when there is more than one set)."""
    return mark_safe("\n".join(_summary_row(row) for row in rows))


def _summary_row(row: DuplicateSummary) -> str:
    low, high = decimal_text(row.mean_rank.low, 2), decimal_text(row.mean_rank.high, 2)
    interval = f" ({low}–{high})" if row.sets > 1 else ""
    return (
        f'<tr><td><a href="{ladder_path(row.game)}">{escape(row.game)}</a></td>'
        f'<td class="num">{row.players:d}</td><td class="num">{row.sets:d}</td>'
        f'<td class="num">{decimal_text(row.mean_rank.mean, 2)}{interval}</td></tr>'
    )


def duplicate_set_rows(rows: Iterable[DuplicateSet]) -> SafeString:
    """The bot page's recent duplicate sets: game (linked to the set's first match), seed,
    rotations, mean rank, mean score and the other bots at the table."""
    return mark_safe("\n".join(_set_row(row) for row in rows))


def _set_row(row: DuplicateSet) -> str:
    return (
        f'<tr><td><a href="{match_path(row.first_match_id)}">{escape(row.game)}</a></td>'
        f'<td class="num">{row.seed:d}</td><td class="num">{row.rotations:d}</td>'
        f'<td class="num">{decimal_text(row.mean_rank, 2)}</td>'
        f'<td class="num">{decimal_text(row.mean_score, 1)}</td>'
        f"<td>{', '.join(escape(name) for name in row.field)}</td></tr>"
    )


def version_rows(rows: Iterable[VersionRow]) -> SafeString:
    """The bot page's versions: number, status, games, when submitted and qualified."""
    return mark_safe("\n".join(_version_row(row) for row in rows))


PRUNED_MARK = ' <span class="muted">archive pruned</span>'
"""After the status of a version whose archives went for its owner's storage quota."""


def _version_row(row: VersionRow) -> str:
    games = row.manifest.get("games") if isinstance(row.manifest, dict) else None
    games_text = ", ".join(escape(game) for game in games) if isinstance(games, list) else ""
    return (
        f"<tr><td>v{row.number:d}</td>"
        f'<td><span class="status status-{escape(row.status)}">{escape(row.status_label)}</span>'
        f"{PRUNED_MARK if row.archive_pruned else ''}</td>"
        f"<td>{games_text}</td><td>{escape(date_text(row.created))}</td>"
        f"<td>{escape(date_text(row.qualified) or '–')}</td></tr>"
    )


def time_element(moment: datetime) -> SafeString:
    """A <time> as the match page draws it: `date:'c'` in its attribute, `date:"Y-m-d H:i:s"` shown."""
    local = timezone.localtime(moment) if timezone.is_aware(moment) else moment
    shown = local.strftime("%Y-%m-%d %H:%M:%S")
    return mark_safe(f'<time datetime="{escape(local.isoformat())}">{escape(shown)}</time>')


def match_seat_rows(seats: Iterable[SeatShown], *, owned: frozenset[int]) -> SafeString:
    """The match page's seating: seat, bot (linked, with its version), owner, rank, score and
    forfeit; a forfeit's reason only for the seats in `owned` (the viewer's own bots')."""
    return mark_safe("\n".join(_seat_row(seat, owned) for seat in seats))


def _seat_row(seat: SeatShown, owned: frozenset[int]) -> str:
    if seat.forfeit_status:
        reason = f': <span class="reason">{escape(seat.forfeit_reason)}</span>' if seat.seat in owned else ""
        forfeit = f"<strong>{escape(seat.forfeit_status)}</strong>{reason}"
    else:
        forfeit = "–"
    if seat.person:
        who = f'{escape(seat.bot)} <span class="badge person">person</span>'
    else:
        version = f'<span class="muted">v{seat.version:d}</span>'
        who = f'<a href="{bot_path(seat.bot)}">{escape(seat.bot)}</a> {version}'
    return (
        f'<tr><td class="num">{seat.seat:d}</td>'
        f"<td>{who}</td>"
        f"<td>{escape(seat.owner)}</td>"
        f'<td class="num">{"–" if seat.rank is None else f"{seat.rank:d}"}</td>'
        f'<td class="num">{"–" if seat.score is None else f"{seat.score:d}"}</td>'
        f"<td>{forfeit}</td></tr>"
    )


def rounds_head(seats: Iterable[SeatShown]) -> SafeString:
    """The rounds table's two header rows: a column pair (points, total) per seat's bot."""
    seated = list(seats)
    names = "".join(f'<th colspan="2">{escape(seat.bot)}</th>' for seat in seated)
    pairs = "<th>points</th><th>total</th>" * len(seated)
    return mark_safe(f'<tr><th rowspan="2">Round</th>{names}</tr>\n<tr>{pairs}</tr>')
