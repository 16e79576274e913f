"""A worker takes its next match from the broker while the current one plays (prefetch), and a
worker killed outright with a match playing and the next one prefetched loses neither: the lease
reaper gives back the claimed one, the lost-task sweep the prefetched one (never claimed), and each
is then recorded exactly once. Real worker process, real Redis index, real PostgreSQL."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from bot_versions import tar_folder, version_from_archive
from celery_workers import private_queue, worker_start, worker_stop
from django.utils import timezone
from platform_support import EXAMPLES, match_with

from septet_platform.bots.models import BotVersion
from septet_platform.celery import app
from septet_platform.ladders.models import RatingChange
from septet_platform.matches import lost, services
from septet_platform.matches.models import Match
from septet_platform.matches.tasks import match_run_task

SLOW = """
import time
from referee.botkit.sdk import Bot, serve


class Thoughtful(Bot):
    \"\"\"Takes a third of a second over every decision: a match that lasts.\"\"\"

    name = "thoughtful"

    def decide(self, info, legal):
        time.sleep(0.3)
        return legal[0]


serve(Thoughtful())
"""


def _until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} within {seconds:g} s")
        time.sleep(0.1)


def _status(match: Match) -> tuple[str, int]:
    match.refresh_from_db()
    return match.status, match.attempt


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_holding_a_prefetched_match_loses_neither_match(
    private_redis_url: str, settings: Any, played_versions: list[BotVersion], django_user_model: Any
) -> None:
    from referee.tools.sandbox import SandboxError, check_available

    try:
        check_available()  # a sandboxed bot dies with the killed worker; a bare one would outlive it
    except SandboxError as error:
        pytest.skip(f"needs the sandbox: {error}")
    settings.CELERY_BROKER_URL = private_redis_url  # the sweep reads this test's broker
    queue = private_queue("septet-prefetch")
    manifest = (
        'name = "thoughtful"\ngames = ["oh-hell"]\ncommand = ["python", "bot.py", "--address", "{address}"]\n'
    )
    thoughtful = version_from_archive(
        django_user_model.objects.create_user("ada"),
        "thoughtful",
        tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest, "bot.py": SLOW}),
    )
    playing = match_with("oh-hell", [played_versions[0], thoughtful, played_versions[1]], seed=5)
    prefetched = match_with("oh-hell", played_versions, seed=6)

    worker = worker_start(queue, queue, redis_url=private_redis_url, concurrency=1)
    try:
        with app.connection_for_write(private_redis_url) as broker:
            match_run_task.apply_async((playing.pk,), queue=queue, connection=broker)
            match_run_task.apply_async((prefetched.pk,), queue=queue, connection=broker)
        _until(lambda: _status(playing)[0] == Match.Status.RUNNING, 60, "playing the first match")
        _until(
            lambda: prefetched.pk in (lost.match_ids_in_broker(now=timezone.now()) or set()),
            20,
            "holding the second match's message while the first plays",
        )
        assert _status(prefetched) == (Match.Status.SCHEDULED, 0), "prefetched, not claimed"
        os.kill(worker.pid, signal.SIGKILL)  # a machine lost mid-match
        worker.wait(30)
    finally:
        worker_stop(worker)

    # The beat's reaper, a lease and a held message's limit later.
    later = timezone.now() + max(services.LEASE, lost.HELD_LIMIT + lost.LOST_GRACE) + timedelta(seconds=1)
    assert services.matches_reap(now=later) == [playing.pk]
    assert set(services.matches_requeue_stale(now=later)) == {playing.pk, prefetched.pk}
    assert _status(playing) == (Match.Status.SCHEDULED, 1) and _status(prefetched) == (
        Match.Status.SCHEDULED,
        0,
    )

    replacement = worker_start(queue, f"{queue}-2", redis_url=private_redis_url, concurrency=1)
    try:
        with app.connection_for_write(private_redis_url) as broker:
            for match in (playing, prefetched, playing):  # the reaper's and the sweep's messages
                match_run_task.apply_async((match.pk,), queue=queue, connection=broker)
        _until(
            lambda: _status(playing)[0] == _status(prefetched)[0] == Match.Status.FINISHED,
            180,
            "both recorded by the next worker",
        )
        time.sleep(2)  # the duplicate message is taken and does nothing
    finally:
        worker_stop(replacement)
    assert _status(playing) == (Match.Status.FINISHED, 2) and _status(prefetched) == (
        Match.Status.FINISHED,
        1,
    )
    folder = Path(settings.SEPTET_REPLAYS_DIR)
    assert sorted(path.name for path in folder.glob(f"{playing.pk}-*")) == [f"{playing.pk}-a2.json.gz"]
    assert sorted(path.name for path in folder.glob(f"{prefetched.pk}-*")) == [f"{prefetched.pk}-a1.json.gz"]
    for match in (playing, prefetched):
        assert RatingChange.objects.filter(match=match).count() == 3, "rated once"
