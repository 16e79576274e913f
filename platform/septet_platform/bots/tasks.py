"""Celery tasks of the bots app: thin, idempotent wrappers over its services.

A submission with a build goes first to `septet.bot_version_build` on the `builds` queue (a pool
of its own: bots.build_budget), which queues `septet.bot_version_qualify` once built; one with
nothing to build goes straight to the qualification, which never runs a build itself."""

from __future__ import annotations

from celery import shared_task
from django.db import DatabaseError

from referee.tools.sandbox import SandboxError
from septet_platform.bots.build_budget import bot_version_build_in_turn
from septet_platform.bots.models import BotVersion
from septet_platform.bots.qualification import bot_version_qualify

OUR_FAILURES = {
    "autoretry_for": (DatabaseError, SandboxError),  # try again later, never fail the bot
    "retry_backoff": 5,
    "retry_backoff_max": 300,
    "max_retries": 20,
}
MAX_WAIT_COUNTDOWN_SECONDS = 60.0
"""The longest a waiting build's task is put off at once: it asks again at least this often
(a countdown well under the broker's visibility timeout, so the wait never redelivers it)."""


@shared_task(name="septet.bot_version_qualify", **OUR_FAILURES)
def bot_version_qualify_task(version_id: int) -> str:
    """Qualifies a submitted version; a second delivery finds it decided and does nothing. A
    version whose build has not run yet (a message of an older release) is handed to the build
    task: a build never runs here, on a match worker."""
    version = bot_version_qualify(version_id=version_id, build_here=False)
    if version.status == BotVersion.Status.QUALIFYING and version.build_status == BotVersion.Build.PENDING:
        bot_version_build_task.delay(version_id)
    return str(version.status)


@shared_task(name="septet.bot_version_build", **OUR_FAILURES)
def bot_version_build_task(version_id: int) -> str:
    """Builds a submitted version in its owner's turn (bots.build_budget), then queues its
    qualification, or records its failure (FAILED, with the build's log). Not its turn: the
    same task again after a countdown, holding no pool slot meanwhile. A second delivery of a
    version already built or failed does nothing."""
    turn = bot_version_build_in_turn(version_id=version_id)
    if turn.wait_seconds > 0:
        countdown = min(turn.wait_seconds, MAX_WAIT_COUNTDOWN_SECONDS)
        bot_version_build_task.apply_async((version_id,), countdown=countdown)
        return f"waits {countdown:.0f} s: {turn.why}"
    version = turn.version
    if version.status != BotVersion.Status.QUALIFYING:
        return str(version.status)
    if version.build_status == BotVersion.Build.FAILED:
        return str(bot_version_qualify(version_id=version_id, build_here=False).status)
    if turn.built_now:
        bot_version_qualify_task.delay(version_id)
    return str(version.build_status)
