"""Celery tasks of tournaments: their matches run on the "tournaments" queue (settings route
them), so an event finishes in predictable time while the ladder keeps its own workers busy."""

from __future__ import annotations

import socket

from celery import Task, shared_task

from septet_platform.matches import services as match_services
from septet_platform.matches.models import Match
from septet_platform.matches.tasks import DATABASE_RETRY, MAX_DATABASE_RETRIES, VOIDED_RETRY_SECONDS
from septet_platform.tournaments import services
from septet_platform.tournaments.models import Tournament


@shared_task(
    bind=True, name="septet.tournament_match_run", max_retries=MAX_DATABASE_RETRIES, **DATABASE_RETRY
)
def tournament_match_run_task(self: Task, match_id: int) -> str:
    """Plays one tournament match unless its event is paused or over (the match then waits, or
    was cancelled), and moves the event on when it was the round's last. Idempotent like
    `match_run_task`: a second delivery finds the match claimed or finished."""
    tournament = Tournament.objects.filter(matches__pk=match_id).first()
    if tournament is None or tournament.status != Tournament.Status.RUNNING:
        return "held"
    worker = self.request.hostname or socket.gethostname()
    played = match_services.match_play_set(match_id=match_id, worker=worker)  # and its set's next rotations
    for each in played:
        if each.outcome in match_services.PLAY_AGAIN:  # voided, or replays could not be written
            tournament_match_run_task.apply_async((each.match_id,), countdown=VOIDED_RETRY_SECONDS)
    services.tournament_advance(tournament=tournament, enqueue=tournament_match_run_task.delay)
    return ", ".join(each.outcome for each in played)


@shared_task(name="septet.tournaments_tick")
def tournaments_tick_task() -> int:
    """Beat: starts events whose deadline passed, moves running ones on (a round finished while
    no worker noticed, after a restart), and queues again their matches left waiting
    (a lost task); returns how many matches were queued again."""
    requeued = 0
    for tournament in Tournament.objects.filter(status=Tournament.Status.OPEN):
        services.tournament_start(tournament=tournament, enqueue=tournament_match_run_task.delay)
    for tournament in Tournament.objects.filter(status=Tournament.Status.RUNNING):
        services.tournament_advance(tournament=tournament, enqueue=tournament_match_run_task.delay)
    stale = set(match_services.matches_requeue_stale(tournaments=True))
    for match_id in Match.objects.filter(
        pk__in=stale, tournament__status=Tournament.Status.RUNNING
    ).values_list("pk", flat=True):
        tournament_match_run_task.delay(match_id)
        requeued += 1
    return requeued
