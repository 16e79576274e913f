"""docs/pettingzoo.md says what referee.pettingzoo does: its layout tables are the encoders' own, its
quick-start block and the example script run, and the example's output shown is what it prints."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

from referee.pettingzoo import GAME_IDS
from referee.pettingzoo.__main__ import describe

ROOT = pathlib.Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "pettingzoo.md"
EXAMPLE = ROOT / "docs" / "examples" / "pettingzoo_evaluate.py"


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *command], capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_the_guide_is_linked_from_the_readme() -> None:
    assert "(docs/pettingzoo.md)" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_the_guide_shows_the_layout_the_encoder_writes_for_every_game_id(game_id: str) -> None:
    """Regenerate with `python -m referee.pettingzoo` when an encoder changes."""
    assert describe(game_id) in GUIDE.read_text()


def test_the_layout_command_prints_every_game_and_refuses_bad_input_clearly() -> None:
    listed = run("-m", "referee.pettingzoo")
    assert listed.returncode == 0 and listed.stdout == "\n".join(describe(game_id) for game_id in GAME_IDS)
    seven = run("-m", "referee.pettingzoo", "oh-hell", "7")
    assert seven.returncode == 0 and seven.stdout == describe("oh-hell", 7)
    for arguments, message in [
        (("poker",), "error: unknown game 'poker' (games: " + ", ".join(GAME_IDS) + ")"),
        (("oh-hell", "9"), "error: oh-hell is played by 3-7 players, not 9"),
        (("oh-hell", "four"), "error: PLAYERS must be a number, not 'four'"),
    ]:
        refused = run("-m", "referee.pettingzoo", *arguments)
        assert refused.returncode == 2 and refused.stdout == "" and refused.stderr.strip() == message


def test_the_guides_quick_start_block_runs_and_reports_the_agents_result() -> None:
    block = re.search(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    assert block is not None
    ran = run("-c", block.group(1))
    assert ran.returncode == 0, ran.stderr
    assert re.fullmatch(r"player_0 scored -?\d+ and ranks [1-4]\n", ran.stdout)


def test_the_example_evaluates_both_agents_and_prints_what_the_guide_shows() -> None:
    """Same seed, same games: every column but the speed matches the guide's run; greedy, the
    reference, scores better than random against greedy bots."""
    shown = re.search(
        r"\$ python docs/examples/pettingzoo_evaluate.py (.*?)\n(.*?)```", GUIDE.read_text(), re.S
    )
    assert shown is not None
    ran = run(str(EXAMPLE.relative_to(ROOT)), *shown.group(1).split())
    assert ran.returncode == 0, ran.stderr

    def without_speed(text: str) -> list[list[str]]:
        return [line.split()[:-1] for line in text.strip().splitlines()]

    assert without_speed(ran.stdout) == without_speed(shown.group(2))
    rows = {line.split()[0]: line.split() for line in ran.stdout.splitlines()[2:]}
    assert set(rows) == {"random", "greedy"}
    assert float(rows["greedy"][2]) > float(rows["random"][2])


def test_the_example_refuses_a_bad_table_with_one_line() -> None:
    refused = run(str(EXAMPLE.relative_to(ROOT)), "--game", "black-sevens", "--players", "3", "--deals", "1")
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("error: black-sevens is played by 4 players, not 3")
