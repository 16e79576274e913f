"""Celery tasks: thin, idempotent wrappers over the match services (late acks redeliver)."""

from __future__ import annotations

import socket

from celery import shared_task

from septet_platform.matches import services

VOIDED_RETRY_SECONDS = 10


@shared_task(name="septet.match_run")
def match_run_task(match_id: int) -> str:
    """Plays one match; a second delivery finds it claimed or finished and does nothing.

    A voided attempt (our failure, not a bot's) is queued again after a pause.
    """
    played = services.match_play(match_id=match_id, worker=socket.gethostname())
    if played.outcome == "voided":
        match_run_task.apply_async((match_id,), countdown=VOIDED_RETRY_SECONDS)
    return played.outcome


@shared_task(name="septet.matches_reap")
def matches_reap_task() -> int:
    """Hands matches of dead workers (expired leases) back to the queue."""
    expired = services.matches_reap()
    for match_id in expired:
        match_run_task.delay(match_id)
    return len(expired)
