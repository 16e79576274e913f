"""A real Celery worker process on real Redis plays queued matches; a task delivered twice
records its match once (late acks and redelivery make duplicates a matter of when, not if)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection
from platform_support import match_with

from septet_platform.matches.models import Match
from septet_platform.matches.tasks import match_run_task

ROOT = Path(__file__).resolve().parents[2]
REDIS = ("127.0.0.1", 6379)


def _redis_reachable() -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(REDIS) == 0


@pytest.fixture
def worker_queue() -> object:
    """A real worker process on a queue of its own, against this test's database."""
    if connection.vendor != "postgresql" or not _redis_reachable():
        pytest.skip("needs PostgreSQL and Redis on this machine (the worker shares the test database)")
    queue = f"septet-test-{uuid.uuid4().hex[:8]}"
    database = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "septet_platform.settings.test",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "PYTHONPATH": str(ROOT / "platform"),
    }
    from django.conf import settings

    env["SEPTET_DATA_DIR"] = str(settings.DATA_DIR)
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "septet_platform", "worker", "-Q", queue, "-c", "2",
         "--pool", "threads", "-n", f"{queue}@%h", "--without-gossip", "--without-mingle", "-l", "warning"],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    yield queue
    worker.terminate()
    try:
        output, _ = worker.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        worker.kill()
        output, _ = worker.communicate()
    print(output)  # shown by pytest when the test failed


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
