"""What an organiser watches: whether the database and the broker answer, whether every process
`septet up` supervises is running (and how often each was restarted), how deep each Celery queue
is, how many matches are in each state and how fast they finish. Read-only."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from amqp.exceptions import ChannelError
from django.conf import settings
from django.db import connection
from django.db.models import Count
from django.utils import timezone

from septet_platform.bots.models import BotVersion
from septet_platform.celery import app
from septet_platform.matches.models import Match
from septet_platform.matches.storage import storage_check

THROUGHPUT_WINDOW = timedelta(minutes=5)
BROKER_TIMEOUT_SECONDS = 2.0
SUPERVISION_STALE_SECONDS = 15.0
"""The launcher rewrites its state file every second; one this old means the launcher is gone."""


@dataclass(frozen=True)
class Check:
    """One dependency's health: ok, or the one-line reason it is not."""

    name: str
    ok: bool
    detail: str = ""


def health_checks() -> list[Check]:
    """The database and the broker, each asked the cheapest real question; under `septet up`,
    the supervised processes first (cheap, and it sees a dead Redis before the broker check's
    retry would find a restarted one)."""
    processes = [_processes_check()] if settings.SEPTET_SUPERVISION_STATE else []  # before the slow ones
    return [*processes, _database_check(), _broker_check(), Check(*storage_check())]  # storage: replays


@dataclass(frozen=True)
class SupervisedProcess:
    """One child of `septet up`, as its launcher last wrote it down and as /proc sees it now."""

    name: str
    state: str
    pid: int | None
    restarts: int
    last_exit: str
    up_seconds: int


def supervised_processes() -> tuple[list[SupervisedProcess], str]:
    """The children `septet up` supervises and, if something is wrong with the state file itself
    (missing, unreadable, stale), why; ([], "") when the site does not run under `septet up`."""
    path = settings.SEPTET_SUPERVISION_STATE
    if not path:
        return [], ""
    try:
        document = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        return [], f"no launcher state: {type(error).__name__}: {error}"
    children = [
        SupervisedProcess(
            name=name,
            state="dead" if child["state"] == "running" and not _alive(child.get("pid")) else child["state"],
            pid=child.get("pid"),
            restarts=int(child.get("restarts", 0)),
            last_exit=str(child.get("last_exit", "")),
            up_seconds=int(child.get("up_seconds", 0)),
        )
        for name, child in document.get("children", {}).items()
    ]
    age = time.time() - float(document.get("updated", 0))
    stale = (
        f"the launcher has not written its state for {age:.0f} s" if age > SUPERVISION_STALE_SECONDS else ""
    )
    return children, stale


def _alive(pid: object) -> bool:
    """True while `pid` runs and is not a zombie: a child killed a moment ago shows as dead before
    its launcher has even noticed."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return status.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def _processes_check() -> Check:
    children, problem = supervised_processes()
    if problem:
        return Check("processes", False, problem)
    down = [
        f"{child.name} {child.state}" + (f" after {child.last_exit}" if child.last_exit else "")
        for child in children
        if child.state != "running"
    ]
    return Check("processes", not down, "; ".join(down))


def _database_check() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:  # any failure means unhealthy; say which
        return Check("database", False, f"{type(error).__name__}: {error}".splitlines()[0])
    return Check("database", True)


def _broker_check() -> Check:
    try:
        with app.connection_for_read(settings.CELERY_BROKER_URL) as broker:
            broker.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_SECONDS)
    except Exception as error:
        return Check("broker", False, f"{type(error).__name__}: {error}".splitlines()[0])
    return Check("broker", True)


def queue_depths() -> dict[str, int]:
    """Messages waiting in each of the platform's Celery queues (not counting ones being run)."""
    depths = {}
    with app.connection_for_read(settings.CELERY_BROKER_URL) as broker:
        for queue in settings.SEPTET_QUEUES:
            with broker.channel() as channel:
                try:
                    depths[queue] = int(channel.queue_declare(queue=queue, passive=True).message_count)
                except ChannelError:  # never declared: no task was ever sent to it
                    depths[queue] = 0
    return depths


def matches_by_status() -> dict[str, int]:
    counts = dict(Match.objects.values_list("status").annotate(count=Count("id")).order_by())
    return {status: counts.get(status, 0) for status in Match.Status.values}


def running_by_worker() -> dict[str, int]:
    rows = Match.objects.filter(status=Match.Status.RUNNING).values_list("worker").annotate(count=Count("id"))
    return dict(rows.order_by())


def finished_per_minute() -> float:
    """Matches finished per minute over the last THROUGHPUT_WINDOW."""
    since = timezone.now() - THROUGHPUT_WINDOW
    finished = Match.objects.filter(status=Match.Status.FINISHED, finished__gte=since).count()
    return finished / (THROUGHPUT_WINDOW.total_seconds() / 60)


def versions_by_status() -> dict[str, int]:
    counts = dict(BotVersion.objects.values_list("status").annotate(count=Count("id")).order_by())
    return {status: counts.get(status, 0) for status in BotVersion.Status.values}
