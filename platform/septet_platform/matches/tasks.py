"""Celery tasks: thin, idempotent wrappers over the match services (late acks redeliver)."""

from __future__ import annotations

import functools
import math
import random
import socket
from datetime import datetime, timedelta

from celery import Task, current_app, shared_task
from celery.signals import worker_process_shutdown, worker_shutdown
from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils import timezone

from septet_platform.ladders.matchmaking import matches_schedule
from septet_platform.ladders.models import Ladder
from septet_platform.ladders.services import ratings_apply_waiting
from septet_platform.matches import services
from septet_platform.matches.models import Match

VOIDED_RETRY_SECONDS = 10
DATABASE_RETRY = {"autoretry_for": (DatabaseError,), "retry_backoff": 2, "retry_backoff_max": 60}
"""A database that is briefly unreachable makes a task retry (backing off), not drop its match."""
MAX_DATABASE_RETRIES = 30
MIN_WAITING_PER_LADDER = 32
"""Matches kept waiting in the queue for a ladder that has finished few or none lately (a new
ladder, a quiet league): enough for a handful of workers to start on."""
WAITING_TICKS = 3
"""Beat intervals of a ladder's recent pace kept waiting in the queue (`waiting_target`): three,
so a slow tick or a burst of short matches never leaves workers idle, and the backlog is about
fifteen seconds of play."""
COMPLETION_WINDOW = timedelta(seconds=15)
"""How far back a ladder's pace is measured: three ticks, so a target follows a growing league
within seconds."""
SETS_PER_TRANSACTION = 25
"""Duplicate sets scheduled per transaction at most: the ladder's lock (shared with its rating
writer) is held for tens of milliseconds, not for a whole top-up of thousands of matches."""
TOURNAMENT_MATCH_TASK = "septet.tournament_match_run"
CHALLENGE_QUEUE = "challenges"
TABLE_QUEUE = "tables"
"""Tables with a person at them: long, mostly waiting, on a worker pool of their own (settings)."""


@shared_task(bind=True, name="septet.match_run", max_retries=MAX_DATABASE_RETRIES, **DATABASE_RETRY)
def match_run_task(self: Task, match_id: int) -> str:
    """Plays one match, then its duplicate set's next rotations (services.match_play_set); a
    second delivery finds it claimed or finished and does nothing, and a delivery while another
    rotation of its set plays leaves it to the worker playing that one.

    A voided attempt (our failure, not a bot's) is queued again after a pause. The match records
    the worker's node name (`-n name@host`), so two workers on one machine are told apart.
    """
    worker = self.request.hostname or socket.gethostname()
    played = services.match_play_set(match_id=match_id, worker=worker)
    for each in played:
        if each.outcome in services.PLAY_AGAIN:
            match_run_task.apply_async(
                (each.match_id,), countdown=VOIDED_RETRY_SECONDS, queue=_queue_of(self)
            )
    return ", ".join(each.outcome for each in played)


def _queue_of(task: Task) -> str | None:
    """The queue the running delivery came from (a challenge stays on the challenges queue)."""
    delivery = task.request.delivery_info or {}
    return delivery.get("routing_key") or None


@shared_task(name="septet.matches_schedule")
def matches_schedule_task(min_waiting: int = MIN_WAITING_PER_LADDER) -> int:
    """Beat: tops every active ladder up to its target of matches waiting in the queue (see
    `waiting_target`), a few duplicate sets per transaction, each match queued once its rows
    commit. Topping up (rather than one set a tick) keeps the workers' rate, not the beat's, the
    limit on how many matches are played; a ladder already that far ahead gets nothing, so no
    backlog piles up."""
    rng = random.Random()
    scheduled = 0
    for ladder in Ladder.objects.filter(active=True):
        waiting, target = waiting_target(ladder, min_waiting=min_waiting)
        while waiting < target:
            sets = min(SETS_PER_TRANSACTION, math.ceil((target - waiting) / ladder.max_players))
            with transaction.atomic():
                matches = matches_schedule(ladder=ladder, rng=rng, sets=sets)
                for match in matches:
                    transaction.on_commit(functools.partial(_ladder_match_enqueue, ladder, match.pk))
            ratings_apply_waiting(ladder=ladder)  # a writer may have found the lock ours meanwhile
            if not matches:  # too few bots for a table
                break
            waiting += len(matches)
            scheduled += len(matches)
    return scheduled


def _ladder_match_enqueue(ladder: Ladder, match_id: int) -> None:
    """Queues a rated match: a sandboxed ladder's on the ladders' queue, an open ladder's on the
    challenges queue. An open table seats a self-hosted bot that is connected now: behind the
    sandboxed ladders' backlog it would wait minutes while its bot waits too (or leaves), so it
    goes where a user's requests go, served before that backlog and never starving it (queues)."""
    if ladder.is_open:
        match_run_task.apply_async((match_id,), queue=CHALLENGE_QUEUE)
    else:
        match_run_task.delay(match_id)


def waiting_target(
    ladder: Ladder, *, min_waiting: int = MIN_WAITING_PER_LADDER, now: datetime | None = None
) -> tuple[int, int]:
    """(the ladder's matches waiting in the queue, how many should be waiting).

    The target is WAITING_TICKS beat intervals of the ladder's own recent pace (its matches
    finished over COMPLETION_WINDOW), never below `min_waiting`. So the queue holds a few ticks of
    work for ten workers or ten thousand, no worker idles until the next tick, and the backlog
    stays a few ticks long whatever the league's size. It follows a growing league on its own:
    workers that empty a ladder's queue within a tick finish its whole target in that tick, and
    the next target is the sum of the last three ticks' (about 1.8 times larger each tick), until
    the workers, not the beat, are the limit. Running matches are not counted: with long matches
    they could otherwise fill the target and leave the queue empty. Two indexed counts."""
    now = now or timezone.now()
    interval = float(settings.CELERY_BEAT_SCHEDULE["schedule-matches"]["schedule"])
    ladder_matches = Match.objects.filter(ladder=ladder, kind=Match.Kind.LADDER, tournament__isnull=True)
    waiting = ladder_matches.filter(status=Match.Status.SCHEDULED).count()
    finished = ladder_matches.filter(finished__gte=now - COMPLETION_WINDOW).count()
    ticks = COMPLETION_WINDOW.total_seconds() / interval
    return waiting, max(min_waiting, math.ceil(WAITING_TICKS * finished / ticks))


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
    kinds = dict(Match.objects.filter(pk__in=expired).values_list("pk", "kind"))
    open_ladder = set(
        Match.objects.filter(pk__in=expired, ladder__pool=Ladder.Pool.OPEN).values_list("pk", flat=True)
    )
    for match_id in expired:
        if match_id in in_events:  # by name: the tournaments app builds on this one, not the reverse
            current_app.send_task(TOURNAMENT_MATCH_TASK, (match_id,))  # its queue; held while paused
        elif kinds.get(match_id) == Match.Kind.CHALLENGE or match_id in open_ladder:
            match_run_task.apply_async((match_id,), queue=CHALLENGE_QUEUE)  # _ladder_match_enqueue
        elif kinds.get(match_id) == Match.Kind.TABLE:
            match_run_task.apply_async((match_id,), queue=TABLE_QUEUE)  # on the tables' own pool
        else:
            match_run_task.delay(match_id)
    return len(expired)


@worker_process_shutdown.connect
@worker_shutdown.connect
def _warm_bots_stop(**_: object) -> None:
    """A worker (or a prefork child) stopping stops the house bots it kept warm."""
    services.WARM_HOUSE_BOTS.stop_all()
