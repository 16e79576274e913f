"""Real Celery worker processes for tests: on a queue of the test's own, against the test's
database (PostgreSQL, which a second process can share) and the machine's Redis."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def private_queue(prefix: str) -> str:
    """A new queue name, or a skip when a worker could not share this test's database."""
    from django.db import connection

    with socket.socket() as probe:
        probe.settimeout(0.5)
        redis_up = probe.connect_ex(("127.0.0.1", 6379)) == 0
    if connection.vendor != "postgresql" or not redis_up:
        pytest.skip("needs PostgreSQL and Redis on this machine (the worker shares the test database)")
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def worker_start(
    queue: str,
    name: str,
    *,
    redis_url: str = "redis://127.0.0.1:6379/0",
    concurrency: int = 2,
    log_level: str = "warning",
) -> subprocess.Popen[str]:
    """A worker process named `name` serving `queue` (a comma-separated list for several) with
    `concurrency` threads, on the broker at `redis_url` (output piped)."""
    from django.conf import settings
    from django.db import connection

    database = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "septet_platform.settings.test",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        "REDIS_URL": redis_url,
        "PYTHONPATH": str(ROOT / "platform"),
        "SEPTET_DATA_DIR": str(settings.DATA_DIR),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "septet_platform", "worker", "-Q", queue,
         "-c", str(concurrency), "--pool", "threads", "-n", f"{name}@%h", "--without-gossip",
         "--without-mingle", "-l", log_level],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def worker_stop(worker: subprocess.Popen[str], timeout: float = 60) -> None:
    """A warm shutdown (running matches finish); its output is printed for a failing test."""
    if worker.poll() is None:
        worker.terminate()
    try:
        output, _ = worker.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        worker.kill()
        output, _ = worker.communicate()
    print(output)
