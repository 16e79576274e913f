"""Submission writes: a bot archive stored as a new version and queued for its build and
qualification, within the user's per-hour limits (versions submitted, build time used)."""

from __future__ import annotations

import functools
import math
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from septet_platform.bots.archives import DEFAULT_LIMITS, ArchiveLimits
from septet_platform.bots.build_budget import build_budget_message, build_budget_wait, has_build_step
from septet_platform.bots.models import BotVersion
from septet_platform.bots.services import bot_version_submit
from septet_platform.bots.tasks import bot_version_build_task, bot_version_qualify_task

SUBMISSION_WINDOW = timedelta(hours=1)


class SubmissionsExhausted(Exception):
    """The user has used up their submissions for now; the message says when to try again."""


class BuildTimeExhausted(SubmissionsExhausted):
    """The user's builds have used their build time for this hour; the message says when to
    submit again. A kind of SubmissionsExhausted: every caller answers it the same way."""


def submission_rate_check(*, owner: AbstractBaseUser, now: datetime | None = None) -> None:
    """Raises SubmissionsExhausted when `owner` submitted settings.SEPTET_SUBMISSIONS_PER_HOUR
    versions in the last hour (each submission costs a sandboxed qualification: compute budget),
    and BuildTimeExhausted when their builds used settings.SEPTET_BUILD_SECONDS_PER_HOUR wall
    seconds in it (bots.build_budget); each message says when they can submit again."""
    now = now or timezone.now()
    limit = settings.SEPTET_SUBMISSIONS_PER_HOUR
    recent = BotVersion.objects.filter(bot__owner=owner, created__gt=now - SUBMISSION_WINDOW)
    if recent.count() >= limit:
        oldest = recent.order_by("created").values_list("created", flat=True).first() or now
        minutes = max(1, math.ceil((oldest + SUBMISSION_WINDOW - now).total_seconds() / 60))
        raise SubmissionsExhausted(
            f"submission limit reached: {limit} versions per hour per user; try again in {minutes} min"
        )
    used, wait = build_budget_wait(owner_id=owner.pk, now=now)
    if wait > 0:
        raise BuildTimeExhausted(build_budget_message(used=used, wait_seconds=wait))


def bot_submit(
    *, owner: AbstractBaseUser, archive: bytes, limits: ArchiveLimits = DEFAULT_LIMITS
) -> BotVersion:
    """Stores the archive as a new QUALIFYING version (bots.services.bot_version_submit, with its
    errors) and, once stored, queues its build (on the build pool, which then queues its
    qualification) or, with nothing to build, its qualification; SubmissionsExhausted past the
    rate limit or the build time budget.
    The check and the store run under a lock on the user's row (see _lock_user), so the limit
    holds under parallel uploads too."""
    with transaction.atomic():
        _lock_user(owner)
        submission_rate_check(owner=owner)
        version = bot_version_submit(owner=owner, archive=archive, limits=limits)
        first_step = bot_version_build_task if has_build_step(version) else bot_version_qualify_task
        transaction.on_commit(functools.partial(first_step.delay, version.pk))
    return version


def _lock_user(user: AbstractBaseUser) -> None:
    """A row lock on the user until the transaction ends: concurrent submissions of one user
    count and store one after another, so parallel uploads cannot all pass the same count."""
    get_user_model()._default_manager.select_for_update().filter(pk=user.pk).exists()
