"""What an organiser watches: whether the database and the broker answer, how deep each Celery
queue is, how many matches are in each state and how fast they finish. Read-only."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

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


@dataclass(frozen=True)
class Check:
    """One dependency's health: ok, or the one-line reason it is not."""

    name: str
    ok: bool
    detail: str = ""


def health_checks() -> list[Check]:
    """The database and the broker, each asked the cheapest real question."""
    return [_database_check(), _broker_check(), Check(*storage_check())]  # storage: replays writable


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
