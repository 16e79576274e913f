"""Self-hosted bots: registered on the site, played from their owners' machines.

A self-hosted bot has no archive: its one version stands for "whatever answers on the Connect
stream" (docs/self-hosted.md). It is ACTIVE from the start (nothing of it can be qualified in a
sandbox), plays the games its owner names, and is marked everywhere as self-hosted: it may be
challenged and seated at tables, never on the sandboxed ladders. Its owner connects it with a
token scoped to it alone (`accounts.services.api_token_create(bot=...)`).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from referee.engine.games import all_games
from referee.tools.botfolder import NAME
from septet_platform.accounts.models import ApiToken
from septet_platform.accounts.services import api_token_create
from septet_platform.bots.models import Bot, BotVersion

SELF_HOSTED_MANIFEST_KEY = "self_hosted"


class SelfHostedRefused(ValueError):
    """A registration or token request that cannot be taken, with the reason in one line."""


def self_hosted_bot_register(*, owner: AbstractBaseUser, name: str, games: Sequence[str]) -> tuple[Bot, str]:
    """A new self-hosted bot of `owner` playing `games`, and a token scoped to it (the plaintext,
    shown once). SelfHostedRefused for a bad or taken name or an unknown game; all or nothing."""
    name = name.strip() if isinstance(name, str) else ""
    if not NAME.match(name):
        raise SelfHostedRefused(
            "a bot name is 1-40 characters of lower-case letters, digits and hyphens, starting with a "
            "letter or digit"
        )
    known = all_games()
    chosen = sorted({game for game in games if isinstance(game, str)})
    unknown = [game for game in chosen if game not in known]
    if unknown or not chosen:
        raise SelfHostedRefused(
            f"unknown game id {unknown[0]!r}" if unknown else "choose at least one game for the bot to play"
        )
    try:
        with transaction.atomic():
            bot = Bot.objects.create(owner=owner, name=name, self_hosted=True)
            BotVersion.objects.create(
                bot=bot,
                number=1,
                archive="",
                archive_sha256="",
                manifest={"name": name, "games": chosen, SELF_HOSTED_MANIFEST_KEY: True},
                status=BotVersion.Status.ACTIVE,
                build_status=BotVersion.Build.BUILT,
                qualified=timezone.now(),
            )
            _, plaintext = api_token_create(user=owner, name=f"connect {name}", bot=bot)
    except IntegrityError:
        raise SelfHostedRefused(f"the bot name {name!r} is taken; choose another") from None
    return bot, plaintext


def connect_token_create(*, owner: AbstractBaseUser, bot_name: str) -> tuple[ApiToken, str]:
    """Another token for one of `owner`'s self-hosted bots (the first one lost, or one per
    machine); SelfHostedRefused for any other bot."""
    bot = Bot.objects.filter(name=bot_name, owner=owner, self_hosted=True).first()
    if bot is None:
        raise SelfHostedRefused(f"you have no self-hosted bot called {bot_name!r}")
    return api_token_create(user=owner, name=f"connect {bot.name}", bot=bot)
