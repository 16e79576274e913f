"""Self-hosted bots: registered on the site, played from their owners' machines.

A self-hosted bot has no archive: its one version stands for "whatever answers on the Connect
stream" (docs/self-hosted.md). It is ACTIVE from the start (nothing of it can be qualified in a
sandbox), plays the games its owner names, and is marked everywhere as self-hosted: it may be
challenged and seated at tables, never on the sandboxed ladders. Its owner connects it with a
token scoped to it alone (`accounts.services.api_token_create(bot=...)`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone

from referee.engine.games import all_games
from referee.tools.botfolder import NAME
from septet_platform.accounts.models import ApiToken
from septet_platform.accounts.services import api_token_create
from septet_platform.bots.models import Bot, BotVersion, ConnectionEvent

SELF_HOSTED_MANIFEST_KEY = "self_hosted"
DAILY_WINDOW = timedelta(hours=24)


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


def matches_today(bot_ids: Iterable[int], *, now: datetime | None = None) -> dict[int, int]:
    """Bot id -> the matches it was seated in over the last DAILY_WINDOW (scheduled, played or
    not), for the bots of `bot_ids` that have any: one query."""
    since = (now or timezone.now()) - DAILY_WINDOW
    from septet_platform.matches.models import Seat  # the matches app imports this one's models

    rows = (
        Seat.objects.filter(bot_version__bot_id__in=list(bot_ids), match__created__gte=since)
        .values_list("bot_version__bot_id")
        .annotate(n=Count("match_id", distinct=True))
    )
    return dict(rows)


def daily_limit() -> int:
    """SEPTET_SELF_HOSTED_MATCHES_PER_DAY: a self-hosted bot's matches in any rolling 24 hours."""
    return int(settings.SEPTET_SELF_HOSTED_MATCHES_PER_DAY)


def daily_room(bot: Bot, *, now: datetime | None = None) -> int:
    """How many more matches `bot` may be seated in today: unbounded (a large number) for a bot
    that is not self-hosted."""
    if not bot.self_hosted:
        return 2**31
    return max(0, daily_limit() - matches_today([bot.pk], now=now).get(bot.pk, 0))


def open_ladders_enter(*, owner: AbstractBaseUser, bot_name: str, entered: bool) -> Bot:
    """Enters `owner`'s sandboxed bot on the open ladders, where it meets self-hosted bots (rated
    there apart from its sandboxed rating), or takes it off them. SelfHostedRefused for a bot that
    is not the owner's, unknown, or always there (a house bot, a self-hosted bot): nothing changes."""
    bot = Bot.objects.filter(name=bot_name).first()
    if bot is None or bot.owner_id != owner.pk:
        raise SelfHostedRefused(f"you have no bot called {bot_name!r}")
    if bot.self_hosted or bot.is_house:
        raise SelfHostedRefused(f"{bot.name} always plays on the open ladders; there is nothing to switch")
    if bot.open_ladders != entered:
        bot.open_ladders = entered
        bot.save(update_fields=["open_ladders"])
    return bot


CONNECTION_EVENTS_KEPT = 200
"""A bot's connection log keeps this many events; older ones are deleted as new ones come."""


def connection_event_record(*, bot_id: int, kind: str, detail: str = "") -> None:
    """Adds one event to a self-hosted bot's connection log (its owner reads it on the bot page),
    keeping the newest CONNECTION_EVENTS_KEPT: a bot that reconnects all day fills no table."""
    ConnectionEvent.objects.create(bot_id=bot_id, kind=kind, detail=detail[:200])
    stale = ConnectionEvent.objects.filter(bot_id=bot_id).order_by("-at", "-pk")[CONNECTION_EVENTS_KEPT:]
    stale_ids = list(stale.values_list("pk", flat=True)[:CONNECTION_EVENTS_KEPT])
    if stale_ids:
        ConnectionEvent.objects.filter(pk__in=stale_ids).delete()
