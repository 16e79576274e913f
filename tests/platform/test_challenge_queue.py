"""The order in which waiting work is taken: qualification, then tournament matches, then
challenges, then ladder matches (septet_platform.matches.queues), on the real Redis broker.

Tasks are sent as the platform sends them (its Celery app, its router) to a Redis database index of
this test's own, in the worst order (ladder first, qualification last); a consumer of every queue
in the workers' -Q order (settings.SEPTET_QUEUES, as the launcher and deploy/ pass it), through
Kombu's Redis transport as a worker's consumer does, takes them one at a time. And a real worker
process started on a full queue runs them in that order.
"""

from __future__ import annotations

import re
import subprocess
from typing import Any

import pytest
from bot_versions import version_row
from celery_workers import private_queue, worker_start, worker_stop
from django.conf import settings
from kombu import Connection, Consumer, Exchange, Queue

from septet_platform.bots.tasks import bot_version_qualify_task
from septet_platform.celery import app
from septet_platform.matches.tasks import CHALLENGE_QUEUE, match_run_task
from septet_platform.tournaments.tasks import tournament_match_run_task


def _taken_in_order(url: str, count: int) -> list[tuple[str, str, int]]:
    """(queue, task, first argument) of `count` messages, in the order a consumer of every queue
    (prefetch 1, acknowledging each) receives them."""
    taken: list[tuple[str, str, int]] = []

    def take(body: Any, message: Any) -> None:
        taken.append((message.delivery_info["routing_key"], message.headers["task"], body[0][0]))
        message.ack()

    queues = [Queue(name, Exchange(name, type="direct"), routing_key=name) for name in settings.SEPTET_QUEUES]
    with (
        Connection(url) as connection,
        Consumer(connection, queues=queues, callbacks=[take], accept=["json"], prefetch_count=1),
    ):
        while len(taken) < count:
            connection.drain_events(timeout=10)
    return taken


def test_waiting_work_is_taken_qualification_tournament_challenge_then_ladder(private_redis_url: str) -> None:
    with app.connection_for_write(private_redis_url) as broker:
        match_run_task.apply_async((1,), connection=broker)  # a ladder match, as the beat sends it
        match_run_task.apply_async((2,), queue=CHALLENGE_QUEUE, connection=broker)  # a challenge
        tournament_match_run_task.apply_async((3,), connection=broker)
        bot_version_qualify_task.apply_async((4,), connection=broker)
        match_run_task.apply_async((5,), connection=broker)  # another ladder match
        match_run_task.apply_async((6,), queue=CHALLENGE_QUEUE, connection=broker)  # queued again

    taken = _taken_in_order(private_redis_url, 6)

    assert taken == [
        ("qualification", "septet.bot_version_qualify", 4),
        ("tournaments", "septet.tournament_match_run", 3),
        ("challenges", "septet.match_run", 2),
        ("challenges", "septet.match_run", 6),
        ("matches", "septet.match_run", 1),
        ("matches", "septet.match_run", 5),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_behind_fifty_ladder_matches_runs_qualification_tournament_and_challenge_first(
    private_redis_url: str,
) -> None:
    """A worker process (one thread, as a busy worker machine takes one match at a time) started
    on a full queue: 50 ladder matches were queued first, then a challenge, a tournament match and
    a qualification. It runs the qualification, the tournament match and the challenge before
    any ladder match, and the ladder matches in the order they were queued."""
    queue = private_queue("priority")  # the name of the worker only; it serves the platform's queues
    house = version_row("house", f"house-{queue}")  # ACTIVE: its qualification is already decided
    sent: dict[str, str] = {}
    with app.connection_for_write(private_redis_url) as broker:
        for number in range(50):
            sent[match_run_task.apply_async((10_000 + number,), connection=broker).id] = f"ladder {number}"
        sent[match_run_task.apply_async((20_000,), queue=CHALLENGE_QUEUE, connection=broker).id] = "challenge"
        sent[tournament_match_run_task.apply_async((30_000,), connection=broker).id] = "tournament"
        sent[bot_version_qualify_task.apply_async((house.pk,), connection=broker).id] = "qualification"

    worker = worker_start(
        ",".join(settings.SEPTET_QUEUES), queue, redis_url=private_redis_url, concurrency=1, log_level="info"
    )
    try:
        ran = _tasks_run(worker, sent, count=len(sent))
    finally:
        worker_stop(worker)

    assert ran[:3] == ["qualification", "tournament", "challenge"]
    assert ran[3:] == [f"ladder {number}" for number in range(50)]


def _tasks_run(worker: subprocess.Popen[str], sent: dict[str, str], count: int) -> list[str]:
    """The names (`sent`: task id -> name) of the tasks `worker` finished, in the order it finished
    them, read from its log until `count` have (or its output ends: it died)."""
    finished = re.compile(r"Task septet\.\w+\[([0-9a-f-]{36})\] (?:succeeded|raised|failed)")
    ran: list[str] = []
    assert worker.stdout is not None
    for line in worker.stdout:
        found = finished.search(line)
        if found and found.group(1) in sent:
            ran.append(sent[found.group(1)])
            if len(ran) == count:
                break
    return ran
