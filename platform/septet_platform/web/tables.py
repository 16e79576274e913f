"""The rows of the site's longest tables as escaped HTML, made in Python rather than by a template loop.

A ladder page draws 50 rows of 6 cells, a bot page 20 results of 7: in Django's template language each
number goes through localisation, each date through the date filter and each link through
`reverse`, which was most of those pages' work (about 5 ms of a ladder page). Here every value
goes through `format_html`, which escapes it, so a bot's or owner's name cannot break the page;
the markup is the same as the templates drew.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import datetime

from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from septet_platform.ladders.selectors import Standing
from septet_platform.web.selectors import ResultRow

PROVISIONAL = format_html(
    ' <span class="muted provisional" title="{}">provisional</span>',
    "fewer than 50 rated games: its place may still change a lot",
)
NONE_YET = mark_safe('<span class="muted">none yet</span>')


@functools.lru_cache(maxsize=8192)
def bot_path(name: str) -> str:
    """The bot page's address (kept: a ladder page links 50 bots, most of them every time)."""
    return reverse("web:bot", args=[name])


@functools.lru_cache(maxsize=4096)
def match_path(match_id: int) -> str:
    """A match page's address."""
    return reverse("web:match", args=[match_id])


def time_cell(moment: datetime | None) -> SafeString:
    """A <time> with the moment in the site's time zone (as the date filter shows it), or a
    muted "none yet"."""
    if moment is None:
        return NONE_YET
    local = timezone.localtime(moment) if timezone.is_aware(moment) else moment
    return format_html('<time datetime="{}">{}</time>', local.isoformat(), local.strftime("%Y-%m-%d %H:%M"))


def standings_rows(rows: Iterable[Standing]) -> SafeString:
    """The ladder table's body: rank, bot (linked, with its version), owner, rating with its
    interval (and "provisional" for few games), games, last match."""
    return format_html_join(
        "\n",
        "<tr>"
        '<td class="num">{}</td>'
        '<td class="col-bot"><a href="{}">{}</a> <span class="muted">v{}</span></td>'
        '<td class="col-owner">{}</td>'
        '<td class="num col-rating"><strong>{}</strong> <span class="muted interval">{}–{}</span>{}</td>'
        '<td class="num">{}</td>'
        '<td class="col-last">{}</td>'
        "</tr>",
        (
            (
                row.rank,
                bot_path(row.bot),
                row.bot,
                row.version,
                row.owner,
                row.rating,
                row.low,
                row.high,
                PROVISIONAL if row.provisional else "",
                row.games,
                time_cell(row.last_match),
            )
            for row in rows
        ),
    )


def results_rows(rows: Iterable[ResultRow], *, finished: bool) -> SafeString:
    """The bot page's matches: match (linked), game, version, then for matches that are over the
    rank of the table (forfeited, aborted...), score, rating change and the replay link, or for
    waiting ones the seat and status."""
    return format_html_join("\n", "<tr>{}</tr>", ((_result_cells(row, finished=finished),) for row in rows))


def _result_cells(row: ResultRow, *, finished: bool) -> SafeString:
    seat, match = row.seat, row.seat.match
    path = match_path(seat.match_id)
    head = format_html(
        '<td><a href="{}">#{}</a></td><td>{}</td><td>v{}</td>',
        path,
        seat.match_id,
        match.ladder.game,
        seat.bot_version.number,
    )
    if not finished:
        return format_html(
            '{}<td class="num">{}</td><td><span class="status status-{}">{}</span></td>',
            head,
            seat.seat,
            match.status,
            match.get_status_display(),
        )
    rank = format_html("{} of {}", seat.rank, row.players) if seat.rank else "–"
    forfeited = " · forfeited" if seat.forfeit_status else ""
    status = "" if match.status == "finished" else f" · {match.get_status_display().lower()}"
    change = "–" if row.rating_change is None else f"{row.rating_change:+d}"
    replay = (
        format_html('<a href="{}#replay">replay</a>', path)
        if row.replay
        else mark_safe('<span class="muted">after its set</span>')
    )
    return format_html(
        '{}<td class="num">{}{}{}</td><td class="num">{}</td><td class="num">{}</td><td>{}</td>',
        head,
        rank,
        forfeited,
        status,
        "–" if seat.score is None else seat.score,
        change,
        replay,
    )
