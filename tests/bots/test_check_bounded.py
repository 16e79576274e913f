"""`septet check` is bounded by default: the montecarlo example, which thinks 0.2 s a decision,
gets every game it declares checked and a report that says how long it took and how to ask for a
longer run. (How long it takes is measured by benchmarks/check_time.py, never asserted here.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from referee.tools.botfolder import load_manifest

ROOT = Path(__file__).resolve().parents[2]
SEPTET = str(Path(sys.executable).with_name("septet"))


def test_check_of_the_montecarlo_example_finishes_with_every_game_checked(tmp_path: Path) -> None:
    folder = tmp_path / "montecarlo"
    shutil.copytree(ROOT / "bots" / "examples" / "montecarlo", folder)
    run = subprocess.run(
        [SEPTET, "check", str(folder), "--json"], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["passed"]
    assert {game["game"] for game in report["games"]} == set(load_manifest(folder).games)
    assert all(game["games"] >= 1 and game["decisions"] > 0 for game in report["games"]), report
    text = subprocess.run(
        [SEPTET, "check", str(folder), "--game", "oh7-duel"], capture_output=True, text=True, timeout=600
    )
    assert text.returncode == 0 and "PASS" in text.stdout
    assert "checked in" in text.stdout and "for a longer run" in text.stdout


def test_check_refuses_a_negative_budget_and_plays_nothing(tmp_path: Path) -> None:
    """Tried: --budget -1; the bot folder is never started (no process, no build)."""
    folder = tmp_path / "random"
    shutil.copytree(ROOT / "bots" / "examples" / "random", folder)
    run = subprocess.run(
        [SEPTET, "check", str(folder), "--budget", "-1"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 2 and "--budget must be 0 (no limit) or more" in run.stderr
    assert run.stdout == ""
