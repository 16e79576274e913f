"""A Septet bot that searches: determinized Monte-Carlo over the worlds its seat cannot rule out.

For every decision with a choice it samples worlds its seat cannot tell from the real one (the
SDK's search API, `referee.botkit.search`: every hidden card placed where the public history
allows, voids and lay-lows respected, worlds chosen by how well the others' bids fit their
hands), plays each legal action out to the end of the round with the greedy policy for every
seat, drops actions that are clearly behind, and picks the best mean of its points against the
others' (and, when the round ends the game, of its rank). It plays every game id.
Its time per decision is `--budget SECONDS` (default 0.2, well under the referee's 1 s) or
$SEPTET_MC_BUDGET, and at most `--max-worlds` worlds (default 200). A forced decision (one legal
action) needs no search, but the SDK's server holds its answer about as long as a search takes
(`referee.botkit.tempo`), so the other seats cannot tell from its speed that it had no choice;
`--no-pad-forced` answers forced decisions at once (to measure what the padding hides). Run it
with `septet bot serve bots/examples/montecarlo`, or directly:
`python bot.py --address 127.0.0.1:50052 --budget 0.2`.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from referee.botkit.search import Budget, SearchReport, bid_belief, search, standing_value
from referee.sdk import Action, Bot, MatchStart, serve

__all__ = ["Budget", "MonteCarloBot", "budget_from", "pad_forced_from"]

BUDGET_ENV = "SEPTET_MC_BUDGET"
DEFAULT_BUDGET = Budget()
CLOCK_SHARE = 0.4
"""At most this share of the match's time per decision is spent searching (the rest is margin)."""


class MonteCarloBot(Bot):
    """Answers each decision with the SDK's `search`, weighing worlds by the others' bids."""

    name = "montecarlo"

    def __init__(
        self, budget: Budget = DEFAULT_BUDGET, seed: int | str | None = None, *, pad_forced: bool = True
    ) -> None:
        super().__init__(pad_forced=pad_forced)
        self.configured = self.budget = budget
        self.rng = random.Random(seed)
        self.last: SearchReport | None = None

    def start_match(self, start: MatchStart) -> None:
        """Reseeds from the match and seat, and keeps each search within the match's clock."""
        self.rng = random.Random(f"{start.match_id}/{start.seat}")
        self.budget = self.configured
        clock = start.time_control
        if clock is not None and clock.per_decision * CLOCK_SHARE < self.budget.seconds:
            self.budget = Budget(clock.per_decision * CLOCK_SHARE, self.budget.max_worlds)

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        if len(legal) == 1:  # nothing to search; the server pads the answer's time (pad_forced)
            return legal[0]
        self.last = search(info, legal, self.rng, self.budget, belief=bid_belief(info), value=standing_value)
        return self.last.chosen


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


def pad_forced_from(argv: Sequence[str]) -> bool:
    """False when `--no-pad-forced` is on the command line: forced decisions answered at once."""
    return "--no-pad-forced" not in argv


if __name__ == "__main__":
    arguments = sys.argv[1:]
    serve(MonteCarloBot(budget_from(arguments, os.environ), pad_forced=pad_forced_from(arguments)))
