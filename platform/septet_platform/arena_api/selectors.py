"""Arena reads: ladders, bots and matches as the Arena API lists them."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db.models import QuerySet

from septet_platform.bots.models import Bot
from septet_platform.ladders.models import Ladder
from septet_platform.matches.models import Match

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20


class BadPageRequest(ValueError):
    """A page size or page token the listing cannot use."""


def ladders_list() -> QuerySet[Ladder]:
    """Every ladder, by game id."""
    return Ladder.objects.order_by("game")


def ladder_get(*, game: str) -> Ladder:
    """The ladder of `game`; raises Ladder.DoesNotExist saying so."""
    ladder = Ladder.objects.filter(game=game).first()
    if ladder is None:
        raise Ladder.DoesNotExist(f"no ladder for game {game!r}")
    return ladder


def bots_list(*, owner: str = "") -> QuerySet[Bot]:
    """Every bot (or only `owner`'s), by name, with its owner and versions fetched."""
    bots = Bot.objects.select_related("owner").prefetch_related("versions").order_by("name")
    return bots.filter(owner__username=owner) if owner else bots


def _matches() -> QuerySet[Match]:
    return Match.objects.select_related("ladder").prefetch_related("seats__bot_version__bot")


def matches_page(
    *, bot: str = "", game: str = "", page_size: int = 0, page_token: str = ""
) -> tuple[list[Match], str]:
    """A page of matches seating `bot` and/or on `game`'s ladder, newest first, and the token of
    the next page ("" on the last). The token is the id the next page starts below."""
    size = page_size or DEFAULT_PAGE_SIZE
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise BadPageRequest(f"page_size must be 0-{MAX_PAGE_SIZE}, not {page_size}")
    matches = _matches().order_by("-id")
    if page_token:
        if not page_token.isdigit():
            raise BadPageRequest(f"page_token {page_token!r} is not one this server gave")
        matches = matches.filter(id__lt=int(page_token))
    if bot:
        found = Bot.objects.filter(name=bot).first()
        if found is None:
            raise Bot.DoesNotExist(f"no bot named {bot!r}")
        matches = matches.filter(seats__bot_version__bot=found).distinct()
    if game:
        matches = matches.filter(ladder=ladder_get(game=game))
    page = list(matches[: size + 1])
    more = len(page) > size
    page = page[:size]
    return page, str(page[-1].pk) if more else ""


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
