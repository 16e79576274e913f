"""Bot reads: a bot by name, its versions, where a version's archive is kept."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db.models import QuerySet

from septet_platform.bots.models import Bot, BotVersion


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
    """Where the version's stored archive (a .tar.gz) is on disk."""
    return Path(settings.SEPTET_ARCHIVES_DIR) / version.archive
