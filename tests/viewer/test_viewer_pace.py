"""The replay viewer's pace (issue 24): at its default speed the longest round of every game, at
the game's largest table, plays in under half a minute, and slower than a blur.

Played on Playwright's fake clock, so the figure is the viewer's own timing, whatever the load of
the machine running the test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from referee.engine.games import GAMES
from referee.engine.match import play_match
from referee.engine.players import GreedyPlayer
from referee.tools.viewer import build_page

pytestmark = pytest.mark.browser

LONGEST_ROUND_MS = 30_000
"""A round at the default speed, the longest of a seven-seat game included, takes less."""
SHORTEST_LONG_ROUND_MS = 10_000
"""...and the longest round of a game is not over sooner: one can follow the cards."""

LONGEST_ROUND = """() => {
  const viewer = document.querySelector('.septet-viewer').septetViewer;
  const rounds = viewer.model.rounds;
  const last = viewer.model.steps.length - 1;
  let best = null;
  rounds.forEach((round, slot) => {
    const end = slot + 1 < rounds.length ? rounds[slot + 1].start : last;
    if (best === null || end - round.start > best.end - best.start) best = {slot, start: round.start, end};
  });
  return best;
}"""

START_S = 1_800_000_000
"""The fake clock's start (seconds since 1970)."""

STEP = "Number(document.querySelector('.septet-viewer').dataset.step)"


@pytest.mark.parametrize("game_id", list(GAMES))
def test_the_longest_round_of_a_full_table_plays_in_under_half_a_minute(
    page: Any, tmp_path: Path, game_id: str
) -> None:
    game = GAMES[game_id]
    seats = max(game.players)
    replay = play_match(game, [GreedyPlayer(game) for _ in range(seats)], seed=3).replay
    path = tmp_path / f"{game_id}.html"
    path.write_text(build_page(replay), encoding="utf-8")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.clock.install(time=START_S)
    page.goto(path.as_uri())
    page.wait_for_selector(".septet-viewer.sv-ready")
    page.clock.pause_at(START_S + 60)  # time moves only as the test says from here
    longest = page.evaluate(LONGEST_ROUND)
    page.select_option("[data-role='seek-round']", str(longest["slot"]))
    assert page.evaluate(STEP) == longest["start"]

    page.click("[data-action='play']")
    page.clock.run_for(SHORTEST_LONG_ROUND_MS)
    assert page.evaluate(STEP) < longest["end"], "the round is not over in a blur"
    page.clock.run_for(LONGEST_ROUND_MS - SHORTEST_LONG_ROUND_MS)
    steps = longest["end"] - longest["start"]
    assert page.evaluate(STEP) >= longest["end"], f"{game_id} at {seats} seats: a round of {steps} steps"
    assert errors == []
