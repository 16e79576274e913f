"""The central-ceiling benchmark's exactly-once check (benchmarks/ceiling_check.py) can fail.

Matches are scheduled, claimed, recorded (real replay files) and rated through the services, as
the benchmark's simulated workers do it (benchmarks/ceiling_workers.py), on a ladder of four seats
and a two-seat ladder rated per duplicate set. The check finds nothing wrong; then it reports each
fault made on purpose: a match recorded a second time, a replay lost, a match claimed and never
recorded, a scheduled match whose task is in no queue, a rating change lost, a rating changed."""

from __future__ import annotations

import importlib.util
import random
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from django.db import connection, transaction

from septet_platform.bots.models import BotVersion
from septet_platform.ladders.matchmaking import matches_schedule
from septet_platform.ladders.models import Ladder, Rating, RatingChange
from septet_platform.matches import services
from septet_platform.matches.models import Match

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
MakeBot = Callable[..., BotVersion]


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def checker() -> ModuleType:
    return _module("ceiling_check")


@pytest.fixture(scope="module")
def workers() -> ModuleType:
    return _module("ceiling_workers")


@pytest.fixture
def replays(tmp_path: Path, settings: Any) -> Iterator[Path]:
    """A replay folder of this test's own: the check reads every file in it."""
    settings.SEPTET_REPLAYS_DIR = tmp_path / "replays"
    settings.SEPTET_REPLAYS_DIR.mkdir()
    yield settings.SEPTET_REPLAYS_DIR


def _check(checker: ModuleType, replays: Path, reported: list[tuple[int, int]], queued: set[int]) -> Any:
    with connection.cursor() as cursor:
        return checker.check(cursor, replays, reported=reported, queued=queued)


@pytest.mark.django_db
def test_the_check_passes_a_clean_run_and_reports_every_fault_made_on_purpose(
    checker: ModuleType, workers: ModuleType, replays: Path, ladder_bot_factory: MakeBot
) -> None:
    for owner in ("ada", "bob", "cy", "dee"):
        ladder_bot_factory(owner, owner, games=["oh-hell", "oh7-duel"])
    table = Ladder.objects.create(game="oh-hell", min_players=4, max_players=4)
    duel = Ladder.objects.create(game="oh7-duel", min_players=2, max_players=2)
    rng = random.Random(3)
    scheduled = []
    for ladder, sets in ((table, 2), (duel, 3)):
        with transaction.atomic():
            scheduled += matches_schedule(ladder=ladder, rng=rng, sets=sets)
    *played, waiting = scheduled  # the last one stays queued
    outcomes = workers.Outcomes(referee=False)
    reported: list[tuple[int, int]] = []
    for match in played:
        claimed = workers.claim(match.pk, "simulated", outcomes)
        recorded, _, _ = workers.record_and_rate(claimed, "batched")
        assert recorded
        reported.append((match.pk, claimed.attempt))
    queued = {waiting.pk}

    clean = _check(checker, replays, reported, queued)
    assert clean.clean, clean.summary()
    assert (clean.finished, clean.left_queued, clean.replays_checked) == (len(played), 1, len(played))
    assert clean.rating_changes == RatingChange.objects.count() > 0

    # A match recorded a second time, under a new attempt: reported twice, a second replay file.
    again = played[0]  # of the four-seat ladder
    Match.objects.filter(pk=again.pk).update(status=Match.Status.RUNNING, attempt=2)
    outcome = outcomes.get("oh-hell", 4, again.seed)
    assert services.match_record(match_id=again.pk, attempt=2, outcome=outcome, logs={})
    findings = _check(checker, replays, [*reported, (again.pk, 2)], queued)
    assert not findings.clean and again.pk in findings.doubled, findings.summary()
    assert any("second replay file" in why for why in findings.doubled[again.pk])
    assert any("reported recorded 2 times" in why for why in findings.doubled[again.pk])

    # A replay lost.
    recorded = Match.objects.get(pk=played[2].pk)
    kept = replays.parent / "kept"
    shutil.move(replays / recorded.replay, kept)
    findings = _check(checker, replays, reported, queued)
    assert any("missing" in why for why in findings.lost[recorded.pk]), findings.summary()
    shutil.move(kept, replays / recorded.replay)

    # A scheduled match whose task is in no queue.
    findings = _check(checker, replays, reported, set())
    assert findings.lost[waiting.pk] == ["scheduled, and its task is in no queue"]

    # A match claimed and never recorded.
    assert services.match_claim(match_id=waiting.pk, worker="simulated") is not None
    findings = _check(checker, replays, reported, queued)
    assert findings.lost[waiting.pk] == ["claimed and never recorded (still running)"]

    # A rating change lost, and a stored rating changed behind the writer's back.
    lost = RatingChange.objects.filter(match__ladder=table).order_by("id").last()
    assert lost is not None
    lost.delete()
    findings = _check(checker, replays, reported, queued)
    assert any("rating changes for 4 results" in why for why in findings.lost[lost.match_id])
    Rating.objects.filter(ladder=duel).update(mu=30.0)
    findings = _check(checker, replays, reported, queued)
    assert any("not the replayed one" in line for line in findings.ratings), findings.summary()
