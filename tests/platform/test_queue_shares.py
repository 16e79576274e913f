"""The shares in which waiting work is taken (septet_platform.matches.queues): weighted, so
qualification, tournament matches and challenges go first without ever stopping the ladder.

The queue order strategy alone, over many takes; then tasks sent as the platform sends them (its
Celery app, its router) to a Redis database index of this test's own, in the worst order (ladder
first, qualification last), taken one at a time by a consumer of every queue in the workers' -Q
order (settings.SEPTET_MATCH_QUEUES, as the launcher and deploy/ pass it) through Kombu's Redis transport
with the platform's transport options, as a worker's consumer does. And real worker processes
started on full queues: behind fifty ladder matches, and behind a full challenge queue.
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
from septet_platform.matches.queues import QUEUE_WEIGHTS, WeightedQueueCycle
from septet_platform.matches.tasks import CHALLENGE_QUEUE, match_run_task
from septet_platform.tournaments.tasks import tournament_match_run_task


def _taken_in_order(url: str, count: int) -> list[tuple[str, str, int]]:
    """(queue, task, first argument) of `count` messages, in the order a consumer of every queue
    (prefetch 1, acknowledging each) receives them."""
    taken: list[tuple[str, str, int]] = []

    def take(body: Any, message: Any) -> None:
        taken.append((message.delivery_info["routing_key"], message.headers["task"], body[0][0]))
        message.ack()

    names = settings.SEPTET_MATCH_QUEUES
    queues = [Queue(name, Exchange(name, type="direct"), routing_key=name) for name in names]
    with (
        Connection(url, transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS) as connection,
        Consumer(connection, queues=queues, callbacks=[take], accept=["json"], prefetch_count=1),
    ):
        while len(taken) < count:
            connection.drain_events(timeout=10)
    return taken


def _takes(cycle: WeightedQueueCycle, waiting: dict[str, int], count: int) -> list[str]:
    """The queues `count` takes come from, as BRPOP would take them: the first queue in the
    cycle's order that has a message waiting (`waiting`: messages per queue, used up)."""
    taken = []
    for _ in range(count):
        queue = next(queue for queue in cycle.consume(len(cycle.items)) if waiting.get(queue, 0) > 0)
        waiting[queue] -= 1
        cycle.rotate(queue)
        taken.append(queue)
    return taken


def test_with_every_queue_full_each_gets_takes_in_proportion_to_its_weight() -> None:
    cycle = WeightedQueueCycle(settings.SEPTET_MATCH_QUEUES)
    taken = _takes(cycle, {queue: 10_000 for queue in settings.SEPTET_MATCH_QUEUES}, 33 * 30)

    assert {queue: taken.count(queue) for queue in QUEUE_WEIGHTS} == {
        queue: weight * 30 for queue, weight in QUEUE_WEIGHTS.items()
    }
    assert max(_longest_wait(taken, queue) for queue in QUEUE_WEIGHTS) <= 33, "every queue is served"


def test_a_full_challenge_queue_leaves_the_ladder_two_of_every_five_takes() -> None:
    cycle = WeightedQueueCycle(settings.SEPTET_MATCH_QUEUES)
    taken = _takes(cycle, {"challenges": 1000, "matches": 1000}, 100)

    assert taken.count("matches") == 40
    assert _longest_wait(taken, "matches") <= 2


def test_a_queue_that_sat_empty_takes_no_burst_when_work_arrives() -> None:
    """Tried: the ladder alone for 1,000 takes, then a full challenge queue: the challenges,
    owed nothing for the time they had no work, share from then on as if always there."""
    cycle = WeightedQueueCycle(settings.SEPTET_MATCH_QUEUES)
    _takes(cycle, {"matches": 1000}, 1000)
    taken = _takes(cycle, {"challenges": 1000, "matches": 1000}, 20)

    assert taken.count("matches") in (7, 8), "two of five, give or take the newcomer's first take"
    assert _longest_wait(taken, "matches") <= 2


def test_a_queue_the_cycle_has_no_weight_for_is_still_served() -> None:
    cycle = WeightedQueueCycle(["matches", "someone-elses"])
    taken = _takes(cycle, {"matches": 100, "someone-elses": 100}, 30)

    assert taken.count("someone-elses") == 10


def _longest_wait(taken: list[str], queue: str) -> int:
    """The most takes in a row that were not `queue`'s."""
    gaps = "".join("x" if each == queue else "." for each in taken).split("x")
    return max(len(gap) for gap in gaps)


def test_waiting_work_is_taken_in_shares_on_redis(private_redis_url: str) -> None:
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
        ("matches", "septet.match_run", 1),  # the ladder's share comes before the second challenge
        ("challenges", "septet.match_run", 6),
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

    ran = _played_by_one_thread(private_redis_url, queue, sent, count=len(sent))

    assert ran[:3] == ["qualification", "tournament", "challenge"]
    assert ran[3:] == [f"ladder {number}" for number in range(50)]


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_behind_a_full_challenge_queue_plays_ladder_matches(private_redis_url: str) -> None:
    """Tried: 30 challenges queued after 30 ladder matches (strict priority played every challenge
    first, so the ladder stood still until the challenge queue was empty). A worker of one
    thread plays both: of its first 15 matches, 6 are the ladder's, never more than two
    challenges in a row."""
    queue = private_queue("shares")
    sent: dict[str, str] = {}
    with app.connection_for_write(private_redis_url) as broker:
        for number in range(30):
            sent[match_run_task.apply_async((10_000 + number,), connection=broker).id] = "ladder"
        for number in range(30):
            challenge = match_run_task.apply_async(
                (20_000 + number,), queue=CHALLENGE_QUEUE, connection=broker
            )
            sent[challenge.id] = "challenge"

    ran = _played_by_one_thread(private_redis_url, queue, sent, count=15)

    assert ran.count("ladder") == 6, ran
    assert "challenge" * 3 not in "".join(ran), ran


def _played_by_one_thread(redis_url: str, name: str, sent: dict[str, str], count: int) -> list[str]:
    """What a worker named `name` (one thread, the match workers' queues, as the launcher and
    deploy/ start them) ran first of `sent`, `count` of them, in order; the worker is stopped."""
    worker = worker_start(
        ",".join(settings.SEPTET_MATCH_QUEUES), name, redis_url=redis_url, concurrency=1, log_level="info"
    )
    try:
        return _tasks_run(worker, sent, count=count)
    finally:
        worker_stop(worker)


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
