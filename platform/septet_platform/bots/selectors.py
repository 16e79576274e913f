"""Bot reads: every bot, a bot by name, its versions, where a version's archive is kept, and
the hint a mistyped name gets."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

from django.conf import settings
from django.db.models import QuerySet

from septet_platform.blobs.stores import archive_store, read_checked
from septet_platform.bots.models import Bot, BotVersion


def bots_list(*, owner: str = "") -> QuerySet[Bot]:
    """Every bot (or only `owner`'s), by name, with its owner and versions fetched."""
    bots = Bot.objects.select_related("owner").prefetch_related("versions").order_by("name")
    return bots.filter(owner__username=owner) if owner else bots


def bot_get(*, name: str) -> Bot:
    """The bot called `name`; raises Bot.DoesNotExist saying so."""
    bot = Bot.objects.select_related("owner").filter(name=name).first()
    if bot is None:
        raise Bot.DoesNotExist(f"no bot named {name!r}")
    return bot


def bot_versions_for(*, bot: Bot) -> QuerySet[BotVersion]:
    """The bot's versions, newest first."""
    return BotVersion.objects.filter(bot=bot).order_by("-number")


def bot_version_archive_path(*, version: BotVersion) -> Path:
    """Where the version's stored archive (a .tar.gz) is on disk, with the local archive store
    (the default); `bot_version_archive_bytes` reads it from whichever store is configured."""
    return Path(settings.SEPTET_ARCHIVES_DIR) / version.archive


def bot_version_archive_bytes(*, version: BotVersion) -> bytes:
    """The version's stored archive (a .tar.gz), checked against its recorded size and SHA-256."""
    return read_checked(
        archive_store(), version.archive, size=version.archive_bytes, sha256=version.archive_sha256
    )


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """The hint `; did you mean X?` naming the choice closest to a mistyped `word` (difflib's
    ratio over 0.6), or "" when none is close: a typo gets its fix in the error itself."""
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean {close[0]}?" if close else ""


def unknown_bot_message(name: str) -> str:
    """Why no bot is found by `name`, with the closest bot name when one is close."""
    return f"no bot named {name!r}{did_you_mean(name, Bot.objects.values_list('name', flat=True))}"
