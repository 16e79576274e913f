"""A small tournament end to end on real Celery worker processes (real Redis, the test's
PostgreSQL database, real example bots): entry, the freeze at the deadline, every match played
once, standings computed; the worker is stopped mid-way and a new one finishes the event without
replaying or changing what was already played."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from bot_versions import tar_folder, version_from_archive
from celery_workers import private_queue, worker_start, worker_stop
from django.contrib.auth.models import User
from django.utils import timezone

from referee.engine import replay as replays
from referee.engine.match import TimeControl
from septet_platform.bots.models import BotVersion
from septet_platform.matches.models import Match, Seat
from septet_platform.tournaments import selectors, services
from septet_platform.tournaments.models import Tournament
from septet_platform.tournaments.tasks import tournament_match_run_task

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "bots" / "examples"
Worker = Callable[[], subprocess.Popen[str]]


@pytest.fixture
def queue() -> str:
    return private_queue("septet-tournament-test")


@pytest.fixture
def start_worker(queue: str) -> Iterator[Worker]:
    """start_worker() -> a new worker process on the test's own queue (all stopped at the end)."""
    started: list[subprocess.Popen[str]] = []

    def start() -> subprocess.Popen[str]:
        started.append(worker_start(queue, f"{queue}-{len(started)}"))
        return started[-1]

    yield start
    for worker in started:
        worker_stop(worker)


def _wait(condition: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not done within {seconds} s")
        time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_tournament_is_played_once_on_real_workers_across_a_restart(
    queue: str, start_worker: Worker
) -> None:
    from django.conf import settings

    organiser = User.objects.create_user("organiser")
    cup = services.tournament_create(
        organiser=organiser, name="worker-cup", title="Worker cup", game="oh-hell", table_size=3,
        entry_deadline=timezone.now() + timedelta(hours=1), duplicate_sets=2, decision_seconds=2.0, seed=21,
    )  # fmt: skip
    frozen: dict[str, BotVersion] = {}
    for name, example in (("ann-random", "random"), ("ben-greedy", "greedy"), ("cat-random", "random")):
        owner = User.objects.create_user(name.split("-")[0])
        frozen[name] = version_from_archive(owner, name, tar_folder(EXAMPLES / example), games=["oh-hell"])
        services.entrant_add(tournament=cup, user=owner, bot=frozen[name].bot)
    Tournament.objects.filter(pk=cup.pk).update(entry_deadline=timezone.now())

    def enqueue(match_id: int) -> None:
        tournament_match_run_task.apply_async((match_id,), queue=queue)

    held: list[int] = []
    assert services.tournament_start(tournament=cup, enqueue=held.append)
    late = BotVersion.objects.create(
        bot=frozen["ann-random"].bot,
        number=2,
        archive=frozen["ann-random"].archive,
        archive_sha256=frozen["ann-random"].archive_sha256,
        manifest={"games": ["oh-hell"]},
        status=BotVersion.Status.ACTIVE,
    )  # fmt: skip  (submitted after the deadline: must not play)
    matches = Match.objects.filter(tournament=cup)
    assert sorted(held) == sorted(matches.values_list("pk", flat=True))
    assert len(held) == 1 * 3 * 2  # one table of 3, three rotations, two duplicate sets

    first = start_worker()
    for match_id in held[:3]:
        enqueue(match_id)
    _wait(lambda: matches.filter(status=Match.Status.FINISHED).count() == 3, 180)
    worker_stop(first)  # the restart: half the event played
    assert Tournament.objects.get(pk=cup.pk).status == Tournament.Status.RUNNING
    before = {m.pk: (m.finished, m.result, m.replay) for m in matches.filter(status=Match.Status.FINISHED)}
    assert sorted(before) == sorted(held[:3])

    start_worker()
    for match_id in held:
        enqueue(match_id)  # everything again, played or not: what was played must not change
    _wait(lambda: matches.filter(status=Match.Status.FINISHED).count() == 6, 240)
    _wait(lambda: Tournament.objects.get(pk=cup.pk).status == Tournament.Status.FINISHED, 30)
    time.sleep(2)  # let the duplicate deliveries run (and do nothing)

    assert set(matches.values_list("attempt", flat=True)) == {1}  # every match played once
    for match in matches:
        assert [p.name for p in Path(settings.SEPTET_REPLAYS_DIR).glob(f"{match.pk}-*")] == [match.replay]
        if match.pk in before:
            assert (match.finished, match.result, match.replay) == before[match.pk]
    assert not Seat.objects.filter(bot_version=late).exists()
    replay = replays.load(Path(settings.SEPTET_REPLAYS_DIR) / matches.first().replay)  # type: ignore[union-attr]
    # the event's time control, not the ladder's, with the seat's whole-match budget derived from it
    budget = TimeControl(2.0, 10.0).seat_budget
    assert replay["time_control"] == {"per_decision": 2.0, "bank": 10.0, "match_seconds": budget}
    rows = selectors.standings(cup)
    assert sorted(row.bot for row in rows) == sorted(frozen)
    assert all(row.interval.n == 2 and row.games == 6 for row in rows)  # two sets, three rotations each
    assert sum(row.interval.mean for row in rows) == pytest.approx(6.0, abs=1.0)  # ranks 1..3 (ties share)
