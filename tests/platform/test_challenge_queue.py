"""The order in which waiting work is taken: qualification, then tournament matches, then
challenges, then ladder matches (septet_platform.matches.queues), on the real Redis broker.

Tasks are sent as the platform sends them (its Celery app, its router) to a Redis database index of
this test's own, in the worst order (ladder first, qualification last); a consumer of every queue
in the workers' -Q order (settings.SEPTET_QUEUES, as the launcher and deploy/ pass it), through
Kombu's Redis transport as a worker's consumer does, takes them one at a time.
"""

from __future__ import annotations

from typing import Any

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
