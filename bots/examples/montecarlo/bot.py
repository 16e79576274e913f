"""A Septet bot that searches: determinized Monte-Carlo over the worlds its seat cannot rule out.

For every decision with a choice it deals the cards it cannot see at random, consistently with
everything public (the `worlds_*` modules, one per game family), plays each legal action out to
the end of the round with the greedy policy for every seat, and picks the action with the best
average (`search.py`). It plays every game id. Its time per decision is `--budget SECONDS`
(default 0.2, well under the referee's 1 s) or $SEPTET_MC_BUDGET, and at most `--max-worlds`
worlds (default 200). Run it with `septet bot serve bots/examples/montecarlo`, or directly:
`python bot.py --address 127.0.0.1:50052 --budget 0.2`.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import worlds_bidding
import worlds_black_sevens
import worlds_oh7
from search import Budget, Sampler, search

from referee.sdk import Action, Bot, MatchStart, serve

BUDGET_ENV = "SEPTET_MC_BUDGET"
DEFAULT_BUDGET = Budget()
CLOCK_SHARE = 0.4
"""At most this share of the match's time per decision is spent searching (the rest is margin)."""

SAMPLERS: dict[str, Sampler] = {
    "oh-hell": worlds_bidding.sample_world,
    "seven-up-seven-down": worlds_bidding.sample_world,
    "black-sevens": worlds_black_sevens.sample_world,
    "oh7": worlds_oh7.sample_world,
    "oh7-advanced": worlds_oh7.sample_world,
    "oh7-duel": worlds_oh7.sample_world,
}
"""Game id -> the sampler of its worlds."""


class MonteCarloBot(Bot):
    """Answers each decision with `search` over worlds from the game's sampler."""

    name = "montecarlo"

    def __init__(self, budget: Budget = DEFAULT_BUDGET, seed: int | str | None = None) -> None:
        super().__init__()
        self.configured = self.budget = budget
        self.rng = random.Random(seed)

    def start_match(self, start: MatchStart) -> None:
        """Reseeds from the match and seat, and keeps each search within the match's clock."""
        self.rng = random.Random(f"{start.match_id}/{start.seat}")
        self.budget = self.configured
        clock = start.time_control
        if clock is not None and clock.per_decision * CLOCK_SHARE < self.budget.seconds:
            self.budget = Budget(clock.per_decision * CLOCK_SHARE, self.budget.max_worlds)

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        if len(legal) == 1:
            return legal[0]
        return search(info, legal, SAMPLERS[info.game], self.budget, self.rng).chosen


def budget_from(argv: Sequence[str], environ: Mapping[str, str]) -> Budget:
    """The budget from `--budget`/`--max-worlds` (else $SEPTET_MC_BUDGET, else the defaults)."""
    try:
        default_seconds = float(environ.get(BUDGET_ENV, DEFAULT_BUDGET.seconds))
    except ValueError:
        raise SystemExit(f"montecarlo: {BUDGET_ENV} must be a number of seconds") from None
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--budget", type=float, default=default_seconds)
    parser.add_argument("--max-worlds", type=int, default=DEFAULT_BUDGET.max_worlds)
    known, _ = parser.parse_known_args(list(argv))
    if known.budget <= 0 or known.max_worlds < 1:
        raise SystemExit("montecarlo: --budget must be > 0 seconds and --max-worlds at least 1")
    return Budget(known.budget, known.max_worlds)


if __name__ == "__main__":
    serve(MonteCarloBot(budget_from(sys.argv[1:], os.environ)))
