"""A real Celery worker process on real Redis plays queued matches; a task delivered twice
records its match once (late acks and redelivery make duplicates a matter of when, not if)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery_workers import private_queue, worker_start, worker_stop
from platform_support import match_with

from septet_platform.matches.models import Match
from septet_platform.matches.tasks import match_run_task


@pytest.fixture
def worker_queue() -> Iterator[str]:
    """A real worker process on a queue of its own, against this test's database."""
    queue = private_queue("septet-test")
    worker = worker_start(queue, queue)
    yield queue
    worker_stop(worker, timeout=20)


@pytest.mark.django_db(transaction=True)
def test_a_match_task_delivered_twice_is_recorded_once(worker_queue: str, played_versions: list) -> None:
    from django.conf import settings

    match = match_with("oh-hell", played_versions)
    match_run_task.apply_async((match.pk,), queue=worker_queue)
    match_run_task.apply_async((match.pk,), queue=worker_queue)  # the redelivery
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        match.refresh_from_db()
        if match.status == Match.Status.FINISHED:
            break
        time.sleep(0.5)
    assert match.status == Match.Status.FINISHED
    time.sleep(2)  # give the duplicate delivery time to run and (correctly) do nothing
    match.refresh_from_db()
    assert match.attempt == 1
    assert sorted(p.name for p in Path(settings.SEPTET_REPLAYS_DIR).glob(f"{match.pk}-*")) == [
        f"{match.pk}-a1.json.gz"
    ]
    assert all(seat.rank for seat in match.seats.all())
