"""Celery tasks of the bots app: thin, idempotent wrappers over its services."""

from __future__ import annotations

from celery import shared_task
from django.db import DatabaseError

from referee.tools.sandbox import SandboxError
from septet_platform.bots.qualification import bot_version_qualify


@shared_task(
    name="septet.bot_version_qualify",
    autoretry_for=(DatabaseError, SandboxError),  # our failures: try again later, never fail the bot
    retry_backoff=5,
    retry_backoff_max=300,
    max_retries=20,
)
def bot_version_qualify_task(version_id: int) -> str:
    """Qualifies a submitted version; a second delivery finds it decided and does nothing."""
    return str(bot_version_qualify(version_id=version_id).status)
