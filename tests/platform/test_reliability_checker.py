"""The chaos benchmark's checker (benchmarks/reliability.py `check`) can fail: on a database and
replay folder of real recorded matches it finds nothing, and it reports each loss or double made
on purpose: a deleted replay, a deleted rating change, a second replay file, a match left running,
a replaced replay."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
from django.db import connection
from platform_support import match_with

from septet_platform.bots.models import BotVersion
from septet_platform.ladders.models import RatingChange
from septet_platform.matches import services
from septet_platform.matches.models import Match

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "reliability.py"


@pytest.fixture(scope="module")
def reliability() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reliability_benchmark", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _check(reliability: ModuleType, replays: Path) -> object:
    with connection.cursor() as cursor:
        return reliability.check(cursor, replays)


@pytest.mark.django_db(transaction=True)
def test_the_checker_passes_recorded_matches_and_reports_every_loss_made_on_purpose(
    reliability: ModuleType, storage: tuple[Path, Path], played_versions: list[BotVersion]
) -> None:
    replays = storage[1]
    first, second = (match_with("oh-hell", played_versions, seed=seed) for seed in (31, 32))
    for match in (first, second):
        assert services.match_play(match_id=match.pk, worker="w").outcome == "recorded"
        match.refresh_from_db()
    findings = _check(reliability, replays)
    assert findings.clean, (findings.lost, findings.doubled, findings.ratings)
    assert (findings.matches, findings.rated, findings.replays_verified) == (2, 2, 2)

    # A replay deleted: that match is lost.
    kept = replays.parent / "kept.json.gz"
    shutil.move(replays / first.replay, kept)
    findings = _check(reliability, replays)
    assert list(findings.lost) == [first.pk] and "missing" in findings.lost[first.pk][0]
    shutil.move(kept, replays / first.replay)

    # The other match's replay put in its place: lost too (checksum).
    shutil.copyfile(replays / first.replay, kept)
    shutil.copyfile(replays / second.replay, replays / first.replay)
    findings = _check(reliability, replays)
    assert list(findings.lost) == [first.pk] and "SHA-256" in findings.lost[first.pk][0]
    shutil.move(kept, replays / first.replay)

    # A second replay file of one match: doubled.
    shutil.copyfile(replays / second.replay, replays / f"{second.pk}-a9.json.gz")
    findings = _check(reliability, replays)
    assert list(findings.doubled) == [second.pk] and not findings.lost
    (replays / f"{second.pk}-a9.json.gz").unlink()

    # A match left running: never ended.
    Match.objects.filter(pk=first.pk).update(status=Match.Status.RUNNING)
    findings = _check(reliability, replays)
    assert list(findings.lost) == [first.pk] and "never ended" in findings.lost[first.pk][0]
    Match.objects.filter(pk=first.pk).update(status=Match.Status.FINISHED)
    assert _check(reliability, replays).clean

    # A rating change deleted: the match lost a seat's change, and its rating no longer chains.
    RatingChange.objects.filter(match=second).order_by("-id").first().delete()
    findings = _check(reliability, replays)
    assert list(findings.lost) == [second.pk] and "2 rating changes for 3 seats" in findings.lost[second.pk]
    assert any("stored value is not its last change's" in problem for problem in findings.ratings)
