"""Arena writes: a submission queued for qualification, a challenge match queued to run."""

from __future__ import annotations

import functools
import math
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from septet_platform.bots.archives import DEFAULT_LIMITS, ArchiveLimits
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.services import bot_version_submit
from septet_platform.bots.tasks import bot_version_qualify_task
from septet_platform.ladders.models import Ladder
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.tasks import match_run_task

SEED_BITS = 62
SUBMISSION_WINDOW = timedelta(hours=1)


class ChallengeInvalid(ValueError):
    """A challenge that cannot be played as asked; the message says why."""


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
    errors) and queues its qualification once stored; SubmissionsExhausted past the rate limit."""
    submission_rate_check(owner=owner)
    version = bot_version_submit(owner=owner, archive=archive, limits=limits)
    transaction.on_commit(functools.partial(bot_version_qualify_task.delay, version.pk))
    return version


def challenge_request(*, game: str, seats: Sequence[tuple[str, int]], seed: int = 0) -> Match:
    """An unrated CHALLENGE match on `game`'s ladder seating, in order, each (bot name, version
    number; 0 for its latest ACTIVE version), queued to run once created. Ladder.DoesNotExist or
    Bot.DoesNotExist for an unknown game or bot; ChallengeInvalid for anything else wrong."""
    ladder = Ladder.objects.filter(game=game).first()
    if ladder is None:
        raise Ladder.DoesNotExist(f"no ladder for game {game!r}")
    if not ladder.min_players <= len(seats) <= ladder.max_players:
        raise ChallengeInvalid(
            f"{game} is played by {ladder.min_players}-{ladder.max_players} seats, not {len(seats)}"
        )
    if seed < 0:
        raise ChallengeInvalid(f"the seed must be 0 (random) or positive, not {seed}")
    versions = [_active_version(name=name, number=number, game=game) for name, number in seats]
    with transaction.atomic():
        match = Match.objects.create(
            ladder=ladder,
            kind=Match.Kind.CHALLENGE,
            rated=False,
            seed=seed or secrets.randbits(SEED_BITS) or 1,
        )
        Seat.objects.bulk_create(
            Seat(match=match, seat=seat, bot_version=version) for seat, version in enumerate(versions)
        )
        transaction.on_commit(functools.partial(match_run_task.delay, match.pk))
    return match


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
