"""The greedy policy, with a line appended to the file `SEPTET_MARKS` names for every match it
starts and every decision it makes, after a pause of `SEPTET_PAUSE` seconds per decision: a test
reads the file to act in the middle of a match (cut the network, kill the client) instead of
guessing when one runs, and the pause stretches a match to a few seconds, well inside the time
control (1 s per decision)."""

from __future__ import annotations

import os
import time
from typing import Any

from referee.games import get_game
from referee.sdk import Action, Bot, MatchStart, serve


class MarkingBot(Bot):
    name = "marking"

    def __init__(self) -> None:
        self.marks = os.environ.get("SEPTET_MARKS", "")
        self.pause = float(os.environ.get("SEPTET_PAUSE", "0"))

    def _mark(self, line: str) -> None:
        if self.marks:
            with open(self.marks, "a") as marks:
                marks.write(line + "\n")

    def start_match(self, start: MatchStart) -> None:
        self._mark(f"start {start.match_id}")

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        time.sleep(self.pause)
        self._mark("decide")
        return get_game(info.game).greedy(info, legal)


if __name__ == "__main__":
    serve(MarkingBot())
