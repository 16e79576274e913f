"""Arena writes: a submission queued for qualification, a challenge match queued to run, each
within its per-user limits."""

from __future__ import annotations

import functools
import math
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from septet_platform.accounts.limits import Limit
from septet_platform.bots.archives import DEFAULT_LIMITS, ArchiveLimits
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.services import bot_version_submit
from septet_platform.bots.tasks import bot_version_qualify_task
from septet_platform.ladders.models import Ladder
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.tasks import match_run_task

SEED_BITS = 62
SUBMISSION_WINDOW = timedelta(hours=1)
CHALLENGE_WINDOW = timedelta(hours=1)
CHALLENGE_QUEUE = "challenges"
"""Challenges run on a queue of their own, below rated play: a flood of them cannot hold up the
ladder, and a worker consumes it only when asked to (see settings.SEPTET_QUEUES)."""


class ChallengeInvalid(ValueError):
    """A challenge that cannot be played as asked; the message says why."""


class ChallengeNotYours(PermissionError):
    """A challenge seating none of the requester's own bots."""


class ChallengesExhausted(Exception):
    """The requester, or a bot they seat, has used up its challenges for now; the message says
    which and when to try again."""


class SubmissionsExhausted(Exception):
    """The user has used up their submissions for now; the message says when to try again."""


def submission_rate_check(*, owner: AbstractBaseUser, now: datetime | None = None) -> None:
    """Raises SubmissionsExhausted when `owner` submitted settings.SEPTET_SUBMISSIONS_PER_HOUR
    versions in the last hour (each submission costs a sandboxed qualification: compute budget)."""
    now = now or timezone.now()
    limit = settings.SEPTET_SUBMISSIONS_PER_HOUR
    recent = BotVersion.objects.filter(bot__owner=owner, created__gt=now - SUBMISSION_WINDOW)
    if recent.count() < limit:
        return
    oldest = recent.order_by("created").values_list("created", flat=True).first() or now
    minutes = max(1, math.ceil((oldest + SUBMISSION_WINDOW - now).total_seconds() / 60))
    raise SubmissionsExhausted(
        f"submission limit reached: {limit} versions per hour per user; try again in {minutes} min"
    )


def bot_submit(
    *, owner: AbstractBaseUser, archive: bytes, limits: ArchiveLimits = DEFAULT_LIMITS
) -> BotVersion:
    """Stores the archive as a new QUALIFYING version (bots.services.bot_version_submit, with its
    errors) and queues its qualification once stored; SubmissionsExhausted past the rate limit.
    The check and the store run under a lock on the user's row (see _lock_user), so the limit
    holds under parallel uploads too."""
    with transaction.atomic():
        _lock_user(owner)
        submission_rate_check(owner=owner)
        version = bot_version_submit(owner=owner, archive=archive, limits=limits)
        transaction.on_commit(functools.partial(bot_version_qualify_task.delay, version.pk))
    return version


def _lock_user(user: AbstractBaseUser) -> None:
    """A row lock on the user until the transaction ends: concurrent submissions of one user
    count and store one after another, so parallel uploads cannot all pass the same count."""
    get_user_model()._default_manager.select_for_update().filter(pk=user.pk).exists()


def challenge_request(
    *, requester: AbstractBaseUser, game: str, seats: Sequence[tuple[str, int]], seed: int = 0
) -> Match:
    """An unrated CHALLENGE match on `game`'s ladder seating, in order, each (bot name, version
    number; 0 for its latest ACTIVE version), queued on the low-priority `challenges` queue once
    created, always with a random seed. Ladder.DoesNotExist or Bot.DoesNotExist for an unknown
    game or bot; ChallengeInvalid for anything else wrong; ChallengeNotYours when `requester`
    owns none of the seated bots (nobody matches strangers' bots against each other);
    ChallengesExhausted past the requester's or a seated bot's hourly limit."""
    ladder = Ladder.objects.filter(game=game).first()
    if ladder is None:
        raise Ladder.DoesNotExist(f"no ladder for game {game!r}")
    if not ladder.min_players <= len(seats) <= ladder.max_players:
        raise ChallengeInvalid(
            f"{game} is played by {ladder.min_players}-{ladder.max_players} seats, not {len(seats)}"
        )
    if seed != 0:
        raise ChallengeInvalid(
            f"a challenge's seed is always random (a chosen deal is a known deal): send 0, not {seed}"
        )
    versions = [_active_version(name=name, number=number, game=game) for name, number in seats]
    targets = _challenge_targets(requester, versions)
    with transaction.atomic():
        _lock_counters(requester, targets)
        _challenge_limits_check(requester, targets)
        match = Match.objects.create(
            ladder=ladder,
            kind=Match.Kind.CHALLENGE,
            rated=False,
            seed=secrets.randbits(SEED_BITS) or 1,
        )
        Seat.objects.bulk_create(
            Seat(match=match, seat=seat, bot_version=version) for seat, version in enumerate(versions)
        )
        challenges_by_user().record(str(requester.pk))
        for bot in targets:
            challenges_of_bot().record(str(bot.pk))
        transaction.on_commit(
            functools.partial(match_run_task.apply_async, (match.pk,), queue=CHALLENGE_QUEUE)
        )
    return match


def challenges_by_user() -> Limit:
    """Challenges one user may request per hour (settings.SEPTET_CHALLENGES_PER_HOUR)."""
    return Limit("challenge:user", settings.SEPTET_CHALLENGES_PER_HOUR, CHALLENGE_WINDOW)


def challenges_of_bot() -> Limit:
    """Challenges that may seat one bot of someone else's per hour, whoever asks
    (settings.SEPTET_CHALLENGES_PER_BOT_PER_HOUR): many users cannot flood one bot either."""
    return Limit("challenge:bot", settings.SEPTET_CHALLENGES_PER_BOT_PER_HOUR, CHALLENGE_WINDOW)


def _challenge_targets(requester: AbstractBaseUser, versions: Sequence[BotVersion]) -> list[Bot]:
    """The seated bots of other owners (house bots included), each once; refuses a challenge
    seating none of the requester's bots, or another owner's bot in more than one seat."""
    bots = [version.bot for version in versions]
    if not any(bot.owner_id == requester.pk for bot in bots):
        raise ChallengeNotYours("a challenge must seat at least one of your own bots")
    others: dict[int, Bot] = {}
    for bot in bots:
        if bot.owner_id == requester.pk:
            continue
        if bot.pk in others:
            raise ChallengeInvalid(f"{bot.name} is not your bot: seat it once at most")
        others[bot.pk] = bot
    return sorted(others.values(), key=lambda bot: bot.pk)


def _lock_counters(requester: AbstractBaseUser, targets: Sequence[Bot]) -> None:
    """Row locks on the requester and the target bots, in a fixed order, so concurrent
    challenges count one after another (check then record) and none slips past a limit."""
    type(requester)._default_manager.select_for_update().filter(pk=requester.pk).exists()
    list(Bot.objects.select_for_update().filter(pk__in=[bot.pk for bot in targets]).order_by("pk"))


def _challenge_limits_check(requester: AbstractBaseUser, targets: Sequence[Bot]) -> None:
    by_user = challenges_by_user()
    if by_user.exhausted(str(requester.pk)):
        raise ChallengesExhausted(
            f"challenge limit reached: {by_user.count} per hour per user; "
            f"try again in {by_user.wait_minutes(str(requester.pk))} min"
        )
    of_bot = challenges_of_bot()
    for bot in targets:
        if of_bot.exhausted(str(bot.pk)):
            raise ChallengesExhausted(
                f"{bot.name} has been challenged {of_bot.count} times in the last hour; "
                f"try again in {of_bot.wait_minutes(str(bot.pk))} min"
            )


def _active_version(*, name: str, number: int, game: str) -> BotVersion:
    bot = Bot.objects.filter(name=name).first()
    if bot is None:
        raise Bot.DoesNotExist(f"no bot named {name!r}")
    versions = BotVersion.objects.filter(bot=bot)
    if number < 0:
        raise ChallengeInvalid(f"version numbers start at 1 (0 for the latest active), not {number}")
    if number:
        version = versions.filter(number=number).first()
        if version is None:
            raise BotVersion.DoesNotExist(f"bot {name!r} has no version {number}")
        if version.status != BotVersion.Status.ACTIVE:
            raise ChallengeInvalid(f"{name} v{number} is {version.status}, not active")
    else:
        version = versions.filter(status=BotVersion.Status.ACTIVE).order_by("-number").first()
        if version is None:
            raise ChallengeInvalid(f"bot {name!r} has no active version")
    if game not in version.manifest.get("games", []):
        raise ChallengeInvalid(f"{name} v{version.number} does not play {game}")
    return version
