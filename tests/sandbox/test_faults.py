"""Fault tests on the match pipeline with real parts: Celery workers on a private redis-server,
the test's PostgreSQL database, sandboxed bots.

- a worker killed with -9 mid-match: the attempt is voided (the reaper hands the match back),
  it runs again, is recorded exactly once and scored against no bot; its bots die with it;
- redis restarted while matches are queued: nothing is lost;
- the database unreachable for a while: the task retries and the match is recorded once;
- the connection a worker keeps between matches cut by the database: the next matches are
  recorded all the same;
- a worker killed mid-match: with the beat's reaper every 10 s, another worker plays the match
  again within a minute (lease of 30 s renewed while it plays);
- a lost task (no message in the broker's queue, or one held by a dead consumer) is told apart from
  a merely waiting one by reading the broker, and sent again once, not at every sweep.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from bot_versions import tar_folder, version_from_archive
from django.conf import settings
from django.db import connection
from django.utils import timezone
from pipeline import FlakyProxy, PrivateRedis, Worker
from sandbox_helpers import EXAMPLES, processes

from septet_platform.bots.models import BotVersion
from septet_platform.celery import app
from septet_platform.ladders.models import Ladder, RatingChange
from septet_platform.matches import services
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.tasks import match_run_task

SLOW_RANDOM = Path(__file__).parent / "slow-random"
WAIT_SECONDS = 180


@pytest.fixture
def seated(django_user_model: type) -> list[BotVersion]:
    owner = django_user_model.objects.create_user("house")
    return [
        version_from_archive(owner, "slow-a", tar_folder(SLOW_RANDOM), games=["oh-hell"], is_house=True),
        version_from_archive(
            owner, "random-b", tar_folder(EXAMPLES / "random"), games=["oh-hell"], is_house=True
        ),
        version_from_archive(owner, "slow-c", tar_folder(SLOW_RANDOM), games=["oh-hell"], is_house=True),
    ]


@pytest.fixture
def quick(django_user_model: type) -> list[BotVersion]:
    owner = django_user_model.objects.create_user("quick")
    return [
        version_from_archive(
            owner, f"random-{n}", tar_folder(EXAMPLES / "random"), games=["oh-hell"], is_house=True
        )
        for n in range(3)
    ]


def _matches(versions: list[BotVersion], count: int) -> list[Match]:
    ladder, _ = Ladder.objects.get_or_create(
        game="oh-hell", pool=Ladder.Pool.SANDBOXED, defaults={"min_players": 3, "max_players": 7}
    )
    made = []
    for n in range(count):
        match = Match.objects.create(ladder=ladder, seed=100 + n)
        for seat, version in enumerate(versions):
            Seat.objects.create(match=match, seat=seat, bot_version=version)
        made.append(match)
    return made


class Pipeline:
    """A private broker, a queue of this test's own, and the workers started on it."""

    def __init__(self, folder: Path, database_url: str) -> None:
        self.redis = PrivateRedis(folder / "redis").start()
        self.queue = f"septet-faults-{uuid.uuid4().hex[:8]}"
        self.database_url = database_url
        self.workers: list[Worker] = []

    def worker(self, database_url: str | None = None, threads: int = 2) -> Worker:
        worker = Worker(
            threads=threads,
            queue=self.queue,
            broker=self.redis.url,
            database_url=database_url or self.database_url,
            data_dir=Path(settings.DATA_DIR),
            name=f"{self.queue}-{len(self.workers)}",
        )
        self.workers.append(worker)
        return worker

    def enqueue(self, match_id: int) -> None:
        with app.connection_for_write(self.redis.url) as broker:
            match_run_task.apply_async((match_id,), queue=self.queue, connection=broker)

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.redis.stop()
        for worker in self.workers:
            print(worker.log.read_text(errors="replace")[-3000:])  # shown when the test failed


@pytest.fixture
def pipeline(tmp_path: Path) -> Iterator[Pipeline]:
    if connection.vendor != "postgresql":
        pytest.skip("the workers share the test database: needs PostgreSQL")
    database = connection.settings_dict
    url = f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
    pipe = Pipeline(tmp_path, url)
    try:
        yield pipe
    finally:
        pipe.close()


def _wait(predicate: Any, what: str, timeout: float = WAIT_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _status(match: Match) -> str:
    match.refresh_from_db()
    return str(match.status)


def _recorded_once(match: Match) -> None:
    """Finished, one replay file, one rating change per seat, no seat scored as a forfeit."""
    _wait(lambda: Match.objects.get(pk=match.pk).ratings_applied, f"the ratings of match {match.pk}", 30)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    replays = sorted(p.name for p in Path(settings.SEPTET_REPLAYS_DIR).glob(f"{match.pk}-*"))
    assert replays == [f"{match.pk}-a{match.attempt}.json.gz"], replays
    seats = list(match.seats.all())
    assert all(seat.rank is not None and seat.forfeit_status == "" for seat in seats)
    assert RatingChange.objects.filter(match=match).count() == len(seats)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_match_voids_it_and_it_is_recorded_once_on_rerun(
    pipeline: Pipeline, seated: list[BotVersion]
) -> None:
    (match,) = _matches(seated, 1)
    first = pipeline.worker()
    pipeline.enqueue(match.pk)
    _wait(lambda: _status(match) == Match.Status.RUNNING, "the first worker's claim")
    time.sleep(1.0)  # mid-game: the slow bots need several seconds
    first.kill()
    assert _status(match) == Match.Status.RUNNING and match.attempt == 1
    time.sleep(0.5)
    assert not [cmd for uid, cmd in processes().values() if "slow-random" in cmd or "septet-slow" in cmd], (
        "the dead worker's bots outlived it"
    )

    # The lease of the dead worker runs out: the reaper hands the match back, voided.
    assert services.matches_reap(now=timezone.now() + services.LEASE + timedelta(seconds=1)) == [match.pk]
    assert not Seat.objects.filter(match=match, rank__isnull=False).exists(), "the voided attempt was scored"
    pipeline.worker()
    pipeline.enqueue(match.pk)
    pipeline.enqueue(match.pk)  # and the broker redelivers the dead worker's message too
    _wait(lambda: _status(match) == Match.Status.FINISHED, "the rerun")
    time.sleep(2)  # the duplicate delivery runs and (correctly) finds nothing to do
    _recorded_once(match)
    assert match.attempt == 2


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_restarting_redis_while_matches_are_queued_loses_none(
    pipeline: Pipeline, quick: list[BotVersion]
) -> None:
    matches = _matches(quick, 4)
    for match in matches:
        pipeline.enqueue(match.pk)
    pipeline.redis.restart()
    pipeline.worker()
    for match in matches:
        _wait(lambda match=match: _status(match) == Match.Status.FINISHED, f"match {match.pk}")
    for match in matches:
        _recorded_once(match)
        assert match.attempt == 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_briefly_unreachable_database_makes_the_task_retry(
    pipeline: Pipeline, quick: list[BotVersion]
) -> None:
    database = connection.settings_dict
    proxy = FlakyProxy((database["HOST"], int(database["PORT"])))
    try:
        proxy.down = True
        url = f"postgres://{database['USER']}@127.0.0.1:{proxy.port}/{database['NAME']}"
        pipeline.worker(database_url=url)
        (match,) = _matches(quick, 1)
        pipeline.enqueue(match.pk)
        # Each attempt opens one connection: two refused means the task failed and ran again.
        _wait(lambda: proxy.refused >= 2, "a retry", timeout=60)
        assert _status(match) == Match.Status.SCHEDULED
        proxy.down = False
        _wait(lambda: _status(match) == Match.Status.FINISHED, "the match after the database returned")
        _recorded_once(match)
        assert match.attempt == 1
    finally:
        proxy.close()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_kept_database_connection_cut_between_matches_costs_no_match(
    pipeline: Pipeline, quick: list[BotVersion]
) -> None:
    """Workers keep their connection from task to task (CONN_MAX_AGE); a database restart or an
    idle timeout cuts it. The next tasks must notice (health check, or the error closing it) and
    reconnect, not fail on the dead connection again and again. One thread, so one connection
    serves every task."""
    pipeline.worker(threads=1)
    first, *after_the_cut = _matches(quick, 3)
    pipeline.enqueue(first.pk)
    _wait(lambda: _status(first) == Match.Status.FINISHED, "the first match")
    with connection.cursor() as cursor:
        cursor.execute(
            "select pg_terminate_backend(pid) from pg_stat_activity "
            "where datname = current_database() and pid <> pg_backend_pid()"
        )
        cut = len(cursor.fetchall())
    assert cut >= 1, "the worker kept no connection to cut"

    for match in after_the_cut:
        pipeline.enqueue(match.pk)
    for match in after_the_cut:
        _wait(lambda match=match: _status(match) == Match.Status.FINISHED, f"match {match.pk}", 90)
        _recorded_once(match)
        assert match.attempt == 1


def _attempt(match: Match) -> int:
    match.refresh_from_db()
    return match.attempt


def _beat_once(pipeline: Pipeline) -> list[int]:
    """What the beat's reaper does every 10 s, sending to this test's queue: dead workers' matches
    back, lost tasks again, unrated matches rated."""
    services.matches_rate_unrated()
    again = services.matches_reap() + services.matches_requeue_stale()
    for match_id in again:
        pipeline.enqueue(match_id)
    return again


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_match_has_it_played_again_within_a_minute(
    pipeline: Pipeline, seated: list[BotVersion], settings: Any
) -> None:
    settings.CELERY_BROKER_URL, settings.SEPTET_QUEUES = pipeline.redis.url, (pipeline.queue,)
    (match,) = _matches(seated, 1)
    first = pipeline.worker()
    pipeline.enqueue(match.pk)
    _wait(lambda: _status(match) == Match.Status.RUNNING, "the first worker's claim")
    time.sleep(1.0)
    first.kill()
    killed = time.monotonic()
    pipeline.worker()
    while match.attempt < 2 and time.monotonic() - killed < 90:
        _beat_once(pipeline)
        deadline = time.monotonic() + 10  # the beat's period
        while time.monotonic() < deadline and _attempt(match) < 2:
            time.sleep(0.2)
    recovered = time.monotonic() - killed
    print(f"played again {recovered:.1f} s after its worker was killed")
    assert match.attempt == 2, "the dead worker's match was never played again"
    assert recovered < 60, f"played again only {recovered:.0f} s after its worker died"
    _wait(lambda: _status(match) == Match.Status.FINISHED, "the rerun")
    _recorded_once(match)


@pytest.mark.django_db(transaction=True)
def test_a_lost_task_is_told_from_a_waiting_or_held_one_by_the_broker_and_sent_once(
    pipeline: Pipeline, quick: list[BotVersion], settings: Any
) -> None:
    """No worker runs: one match's message waits in the queue, one is held (delivered, not
    acknowledged) by a consumer of the test's own, one match has no message at all (lost)."""
    from kombu import Connection

    settings.CELERY_BROKER_URL, settings.SEPTET_QUEUES = pipeline.redis.url, (pipeline.queue,)
    held, waiting, lost_one = _matches(quick, 3)
    pipeline.enqueue(held.pk)
    with Connection(pipeline.redis.url) as consumer_connection:
        consumer = consumer_connection.SimpleQueue(pipeline.queue)
        message = consumer.get(timeout=5)  # delivered and held, never acknowledged
        assert message.payload[0] == [held.pk]
        pipeline.enqueue(waiting.pk)
        soon = timezone.now() + services.lost.LOST_GRACE + timedelta(seconds=1)

        assert services.matches_requeue_stale() == [], "a match made just now was judged lost"
        assert services.matches_requeue_stale(now=soon) == [lost_one.pk]
        # A worker holding a message this long without claiming its match is dead.
        late = timezone.now() + services.lost.HELD_LIMIT + timedelta(seconds=1)
        assert services.matches_requeue_stale(now=late) == [held.pk, lost_one.pk]

        # Once sent again, the lost match's message is found: it is not sent at every sweep.
        pipeline.enqueue(lost_one.pk)
        assert services.matches_requeue_stale(now=soon) == []
        consumer.close()
