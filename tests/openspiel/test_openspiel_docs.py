"""docs/openspiel.md says what referee.openspiel does: it is linked where the PettingZoo guide is, its
quick-start block and example script run, and its tables name every game and parameter."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pyspiel

from referee.engine.games import all_games
from referee.openspiel import short_name

ROOT = pathlib.Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "openspiel.md"


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *command], capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_the_guide_is_linked_wherever_the_pettingzoo_guide_is() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "(docs/openspiel.md)" in readme and "openspiel.md (OpenSpiel" in readme
    source = (ROOT / "platform" / "septet_platform" / "web" / "source.py").read_text()
    assert '"docs/openspiel.md"' in source


def test_the_guides_game_table_names_every_game_and_its_parameters() -> None:
    text = GUIDE.read_text()
    for game in all_games().values():
        name = short_name(game.id)
        row = re.search(rf"^\| `{name}` \| `{game.id}` \|.*\| (.*) \|$", text, re.M)
        assert row is not None, name
        parameters = sorted(pyspiel.load_game(name).get_parameters())
        assert sorted(re.findall(r"`(\w+)`", row.group(1))) == parameters


def test_the_guides_quick_start_block_runs() -> None:
    block = re.search(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    assert block is not None
    ran = run("-c", block.group(1))
    assert ran.returncode == 0, ran.stderr
    first, state = ran.stdout.split("\n", 1)
    assert re.fullmatch(r"0 \[(4[6-9]|[5-8]\d|9[01])(, (4[6-9]|[5-8]\d|9[01]))*\]", first)  # bets: 46-91
    assert state.startswith("seat=0 scores=[0 0 0 0]")


def test_the_example_script_prints_what_the_guide_shows() -> None:
    shown = re.search(r"\$ python docs/examples/openspiel_bots.py (.*)\n((?:.*\n)*?)```", GUIDE.read_text())
    assert shown is not None
    ran = run("docs/examples/openspiel_bots.py", *shown.group(1).split())
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == shown.group(2)
