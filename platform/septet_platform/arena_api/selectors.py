"""Arena reads: the match listing as the Arena pages it (page sizes, page tokens, status filters).

Everything else the Arena reads is the domain apps' (ladders, bots, matches, challenges), whose
selectors the site reads as well; the publication rule is matches.selectors'.
"""

from __future__ import annotations

import re
from datetime import datetime

from django.db.models import Q
from django.db.models.functions import Coalesce

from septet_platform.bots.models import Bot
from septet_platform.bots.selectors import unknown_bot_message
from septet_platform.ladders.selectors import ladder_get
from septet_platform.matches.models import Match
from septet_platform.matches.selectors import OVER, WAITING, matches_with_seats

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20
STATUS_FILTERS: dict[str, frozenset[str]] = {"finished": OVER, "waiting": WAITING}
"""A match listing's `status` filter: matches that are over, or those queued or being played."""


class BadPageRequest(ValueError):
    """A page size or page token the listing cannot use."""


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
    matches = (
        matches_with_seats().annotate(listed_at=Coalesce("finished", "created")).order_by("-listed_at", "-id")
    )
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
