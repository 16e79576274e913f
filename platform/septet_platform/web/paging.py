"""Paging of the site's match lists (a bot's results, the match list): page numbers from the query
string and the finished/waiting filter."""

from __future__ import annotations

MATCHES_PER_PAGE = 20
"""A bot page's (and the match list's) matches are shown this many a page."""
MAX_PAGE = 10_000
"""The deepest page of a bot's matches the site pages to (200,000 matches)."""
MATCH_FILTERS = ("finished", "waiting")
"""The `status` filter of the bot page and the match list: matches that are over (the default,
results first) or those queued or being played."""


def match_filter(status: str) -> str:
    """The bot page's `status` filter from the query string: unknown values show results."""
    return status if status in MATCH_FILTERS else "finished"


def page_number(page: str | int) -> int:
    """A page number from the query string: 1 for anything that is not a whole number from 1 up,
    capped at MAX_PAGE (an offset past every row costs the database a scan of them all)."""
    try:
        number = int(page)
    except (TypeError, ValueError):
        return 1
    return min(max(number, 1), MAX_PAGE)
