"""Celery tasks: thin, idempotent wrappers over the match services (late acks redeliver)."""

from __future__ import annotations

import functools
import random
import socket

from celery import Task, current_app, shared_task
from celery.signals import worker_process_shutdown, worker_shutdown
from django.db import DatabaseError, transaction

from septet_platform.ladders.matchmaking import matches_schedule
from septet_platform.ladders.models import Ladder
from septet_platform.matches import services
from septet_platform.matches.models import Match

VOIDED_RETRY_SECONDS = 10
DATABASE_RETRY = {"autoretry_for": (DatabaseError,), "retry_backoff": 2, "retry_backoff_max": 60}
"""A database that is briefly unreachable makes a task retry (backing off), not drop its match."""
MAX_DATABASE_RETRIES = 30
MAX_WAITING_PER_LADDER = 32
TOURNAMENT_MATCH_TASK = "septet.tournament_match_run"
CHALLENGE_QUEUE = "challenges"


@shared_task(bind=True, name="septet.match_run", max_retries=MAX_DATABASE_RETRIES, **DATABASE_RETRY)
def match_run_task(self: Task, match_id: int) -> str:
    """Plays one match; a second delivery finds it claimed or finished and does nothing.

    A voided attempt (our failure, not a bot's) is queued again after a pause. The match records
    the worker's node name (`-n name@host`), so two workers on one machine are told apart.
    """
    worker = self.request.hostname or socket.gethostname()
    played = services.match_play(match_id=match_id, worker=worker)
    if played.outcome in services.PLAY_AGAIN:
        match_run_task.apply_async((match_id,), countdown=VOIDED_RETRY_SECONDS, queue=_queue_of(self))
    return played.outcome


def _queue_of(task: Task) -> str | None:
    """The queue the running delivery came from (a challenge stays on the challenges queue)."""
    delivery = task.request.delivery_info or {}
    return delivery.get("routing_key") or None


@shared_task(name="septet.matches_schedule")
def matches_schedule_task(waiting_target: int = MAX_WAITING_PER_LADDER) -> int:
    """Beat: tops every active ladder up to `waiting_target` scheduled or running matches, a
    duplicate set at a time, each match queued once its rows commit. Topping up (rather than one
    set a tick) keeps the workers' rate, not the beat's, the limit on how many matches are played;
    a ladder already that far ahead gets nothing, so no backlog piles up."""
    rng = random.Random()
    scheduled = 0
    for ladder in Ladder.objects.filter(active=True):
        waiting = Match.objects.filter(
            ladder=ladder, status__in=(Match.Status.SCHEDULED, Match.Status.RUNNING)
        ).count()
        while waiting < waiting_target:
            with transaction.atomic():
                matches = matches_schedule(ladder=ladder, rng=rng, sets=1)
                for match in matches:
                    transaction.on_commit(functools.partial(match_run_task.delay, match.pk))
            if not matches:  # too few bots for a table
                break
            waiting += len(matches)
            scheduled += len(matches)
    return scheduled


@shared_task(name="septet.matches_reap")
def matches_reap_task() -> int:
    """Beat, every few seconds: hands matches of dead workers (expired leases) back to the queue,
    queues again the matches whose task was lost while they waited (a broker that lost its
    queue), and rates the matches recorded but not rated (a worker that died between the two).
    A task that outlives Celery's visibility timeout is delivered again, which this never relies
    on: see services' module docstring and docs/operations.md."""
    services.matches_rate_unrated()
    expired = services.matches_reap() + services.matches_requeue_stale()
    in_events = set(
        Match.objects.filter(pk__in=expired, tournament__isnull=False).values_list("pk", flat=True)
    )
    challenges = set(
        Match.objects.filter(pk__in=expired, kind=Match.Kind.CHALLENGE).values_list("pk", flat=True)
    )
    for match_id in expired:
        if match_id in in_events:  # by name: the tournaments app builds on this one, not the reverse
            current_app.send_task(TOURNAMENT_MATCH_TASK, (match_id,))  # its queue; held while paused
        elif match_id in challenges:
            match_run_task.apply_async((match_id,), queue=CHALLENGE_QUEUE)  # behind rated play
        else:
            match_run_task.delay(match_id)
    return len(expired)


@worker_process_shutdown.connect
@worker_shutdown.connect
def _warm_bots_stop(**_: object) -> None:
    """A worker (or a prefork child) stopping stops the house bots it kept warm."""
    services.WARM_HOUSE_BOTS.stop_all()
