"""Builds take turns: no user holds the build pool, and no build holds a match worker.

A build runs the author's own command for up to SEPTET_BUILD_SECONDS (600 s by default), and
`sleep 600` is a valid build. Run inside the qualification task, two such builds held both slots
of a match worker: no match finished for two minutes, and another user's plain bot waited 138 s to
qualify instead of 3 s. So builds run on the `builds` queue, served by a pool of their own (`septet
up`'s `builder`, SEPTET_BUILD_WORKERS processes; deploy/ runs one too), never by a match worker;
the total at once is that pool's size. On top of it, per user:

- at most SEPTET_BUILDS_PER_USER (1) builds of one user run at once: another of theirs waits, its
  task asked again a few seconds later (a countdown, holding no pool slot), so a second build
  never takes a slot another user's build could use;
- at most SEPTET_BUILD_SECONDS_PER_HOUR (1200) wall seconds of their builds in any rolling hour
  (`build_seconds` of the builds that ended in the hour, and the time so far of those running):
  once it is spent, a submission is refused at once with when to submit again
  (`build_budget_wait`, which the Arena's submission check calls), and a build queued before that
  waits until the budget frees. A build that starts within the budget runs to its own limit.

The claim that a build starts is one transaction under a lock on the owner's row, so two build
processes cannot both see the user's slot free. A version with nothing to build never comes here:
it has no build to wait for (`has_build_step`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from referee.tools.building import BuildLimits
from septet_platform.bots.models import BotVersion
from septet_platform.bots.services import bot_version_build_claimed, build_claim, build_grace, build_limits
from septet_platform.matches.services import bot_sandbox

BUDGET_WINDOW = timedelta(hours=1)
TURN_POLL_SECONDS = 5.0
"""How soon a build that waits for its owner's other build asks again (the most a user's second
build starts after their first ends)."""


@dataclass(frozen=True)
class BuildTurn:
    """What one go at a version's build did: built it now (`built_now`, its outcome in
    `version.build_status`), or not its turn (`wait_seconds` > 0: ask again after that long, and
    `why`), or nothing (the version is built, failed or no longer qualifying)."""

    version: BotVersion
    built_now: bool = False
    wait_seconds: float = 0.0
    why: str = ""


def has_build_step(version: BotVersion) -> bool:
    """True when the version's manifest has a `build` to run (only those take a build turn)."""
    return bool(version.manifest.get("build"))


def bot_version_build_in_turn(*, version_id: int, now: datetime | None = None) -> BuildTurn:
    """Builds a QUALIFYING version with its build PENDING when its owner may build now (see the
    module docstring); otherwise says how long to wait. Idempotent: a version already built or
    failed, or no longer qualifying, is left as it is. A sandbox that cannot be made raises
    SandboxError before anything is claimed (our failure: the caller tries again)."""
    limits = build_limits()
    version = BotVersion.objects.select_related("bot").get(pk=version_id)
    if version.status != BotVersion.Status.QUALIFYING or version.build_status in (
        BotVersion.Build.BUILT,
        BotVersion.Build.FAILED,
    ):
        return BuildTurn(version)
    sandbox = bot_sandbox()
    now = now or timezone.now()
    with transaction.atomic():
        _owner_lock(version.bot.owner_id)
        wait, why = _owner_wait(version.bot.owner_id, limits, now=now)
        if wait > 0:
            return BuildTurn(version, wait_seconds=wait, why=why)
        claimed = build_claim(version_id=version_id, limits=limits, now=now)
    if not claimed:  # another delivery of this task is building it; ask again once its claim expires
        version.refresh_from_db()
        started = version.build_started or now
        wait = max(TURN_POLL_SECONDS, (started + build_grace(limits) - now).total_seconds())
        return BuildTurn(version, wait_seconds=wait, why="being built by another delivery")
    built = bot_version_build_claimed(version_id=version_id, sandbox=sandbox, limits=limits)
    return BuildTurn(built, built_now=True)


def _owner_lock(owner_id: int) -> None:
    """A row lock on the owner until the transaction ends: their claims happen one at a time."""
    get_user_model()._default_manager.select_for_update().filter(pk=owner_id).exists()


def _owner_wait(owner_id: int, limits: BuildLimits, *, now: datetime) -> tuple[float, str]:
    """(seconds until the owner may start a build, why); (0, "") when they may now."""
    running = _running(owner_id, limits, now=now).count()
    allowed = int(settings.SEPTET_BUILDS_PER_USER)
    if running >= allowed:
        return TURN_POLL_SECONDS, f"{running} of the owner's builds running (at most {allowed} at once)"
    used, wait = build_budget_wait(owner_id=owner_id, now=now, limits=limits)
    if wait > 0:
        return wait, f"the owner's build time this hour is spent ({used:.0f} s)"
    return 0.0, ""


def _running(owner_id: int, limits: BuildLimits, *, now: datetime) -> QuerySet[BotVersion]:
    """The owner's builds claimed and still live (a claim older than any build lasts is dead)."""
    return BotVersion.objects.filter(
        bot__owner_id=owner_id,
        build_status=BotVersion.Build.BUILDING,
        build_started__gte=now - build_grace(limits),
    )


def build_budget_wait(
    *, owner_id: int, now: datetime | None = None, limits: BuildLimits | None = None
) -> tuple[float, float]:
    """(wall seconds of the owner's builds counted in the rolling hour ending `now`, seconds until
    they fall under settings.SEPTET_BUILD_SECONDS_PER_HOUR; 0 when they are under it now).

    A finished build counts its `build_seconds` for an hour after it ended; a running one counts
    the time it has run so far, and is taken to end at its time limit when working out the wait."""
    now = now or timezone.now()
    limits = limits or build_limits()
    budget = float(settings.SEPTET_BUILD_SECONDS_PER_HOUR)
    counted: list[tuple[datetime, float]] = [  # (when it leaves the window, its seconds)
        (finished + BUDGET_WINDOW, seconds)
        for finished, seconds in BotVersion.objects.filter(
            bot__owner_id=owner_id, build_finished__gt=now - BUDGET_WINDOW, build_seconds__isnull=False
        ).values_list("build_finished", "build_seconds")
    ]
    for started in _running(owner_id, limits, now=now).values_list("build_started", flat=True):
        ran = min(max(0.0, (now - started).total_seconds()), limits.seconds)
        counted.append((started + timedelta(seconds=limits.seconds) + BUDGET_WINDOW, ran))
    used = sum(seconds for _, seconds in counted)
    left = used
    for leaves, seconds in sorted(counted):
        if left < budget:
            break
        left -= seconds
        if left < budget:
            return used, max(1.0, (leaves - now).total_seconds())
    return used, 0.0


def build_budget_message(*, used: float, wait_seconds: float) -> str:
    """The refusal a user reads when their build time is spent: the limit, and when to come back."""
    budget = float(settings.SEPTET_BUILD_SECONDS_PER_HOUR)
    minutes = max(1, math.ceil(wait_seconds / 60))
    return (
        f"build time limit reached: {budget:.0f} s of builds per hour per user ({used:.0f} s used); "
        f"try again in {minutes} min"
    )
