"""The montecarlo example bot: it conforms, plays every game in process, and keeps to its budget.

Its worlds, rollouts and search are the SDK's (referee.botkit.search), tested in tests/botkit/.
The bot's bot.py sits in a bot folder, not a package, so the tests put that folder on sys.path,
as running `python bot.py` in it does.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.engine.games import GAMES, get_game
from referee.engine.match import MatchStart, TimeControl, play_match

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "bots" / "examples" / "montecarlo"
SEPTET = str(Path(sys.executable).with_name("septet"))


MODULES = ("bot",)


@pytest.fixture(scope="module")
def mc() -> Iterator[Any]:
    """The bot's module, imported from its folder (and forgotten after, so another folder's
    `bot` module is never mistaken for it)."""
    for name in MODULES:
        sys.modules.pop(name, None)
    sys.path.insert(0, str(FOLDER))
    try:
        import bot

        assert Path(bot.__file__).parent == FOLDER
        yield bot
    finally:
        sys.path.remove(str(FOLDER))
        for name in MODULES:
            sys.modules.pop(name, None)


@pytest.mark.parametrize("game_id", list(GAMES))
def test_the_bot_plays_a_whole_game_of_every_game_id_in_process(game_id: str, mc: Any) -> None:
    """Every seat is the bot, with a budget of a few worlds a decision: the game ends, every
    answer is legal (the match loop forfeits a seat that answers an illegal action)."""
    game = get_game(game_id)
    bots = [mc.MonteCarloBot(mc.Budget(seconds=60.0, max_worlds=3)) for _ in range(game.players.start)]
    outcome = play_match(game, bots, seed=4, match_id=f"mc-{game_id}")
    assert outcome.result.ranks is not None
    assert not outcome.forfeits
    searched = [bot.last for bot in bots if bot.last is not None]
    assert searched and all(report.worlds <= 3 for report in searched)


def test_budget_comes_from_the_command_line_then_the_environment(mc: Any) -> None:
    budget_from, budget = mc.budget_from, mc.Budget
    assert budget_from([], {}) == budget(0.2, 200)
    assert budget_from(["--address", "unix:x.sock"], {"SEPTET_MC_BUDGET": "0.05"}) == budget(0.05, 200)
    given = ["--budget", "0.1", "--max-worlds", "9"]
    assert budget_from(given, {"SEPTET_MC_BUDGET": "0.05"}) == budget(0.1, 9)
    for bad in (["--budget", "0"], ["--max-worlds", "0"]):
        with pytest.raises(SystemExit, match="montecarlo: --budget must be"):
            budget_from(bad, {})
    with pytest.raises(SystemExit, match="SEPTET_MC_BUDGET must be a number"):
        budget_from([], {"SEPTET_MC_BUDGET": "fast"})


def test_a_fast_clock_shortens_the_search(mc: Any) -> None:
    bot = mc.MonteCarloBot(mc.Budget(0.2, 50))
    start = MatchStart("m", "oh-hell", 0, 3, {}, ["a", "b", "c"], TimeControl(0.1, 1.0))
    bot.start_match(start)
    assert bot.budget == mc.Budget(0.1 * mc.CLOCK_SHARE, 50)
    bot.start_match(MatchStart("m", "oh-hell", 0, 3, {}, ["a", "b", "c"], TimeControl(1.0, 10.0)))
    assert bot.budget == mc.Budget(0.2, 50), "a slow clock leaves the configured budget"


@pytest.mark.slow
def test_septet_check_passes_every_game_it_declares(tmp_path: Path) -> None:
    """The bot as a process over gRPC, in every seat of each game; a copy with a small budget
    (the check plays every seat with it, so the default 0.2 s would take minutes)."""
    folder = tmp_path / "montecarlo"
    shutil.copytree(FOLDER, folder, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = (folder / "septet-bot.toml").read_text()
    (folder / "septet-bot.toml").write_text(
        manifest.replace('"{address}"]', '"{address}", "--budget", "0.005", "--max-worlds", "8"]')
    )
    run = subprocess.run(
        [SEPTET, "check", str(folder), "--games", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert report["passed"] is True
    assert {entry["game"] for entry in report["games"]} == set(GAMES)
