"""Rating quality: how many rated matches a ladder needs before its order is right, with and without
duplicate seating.

A ladder of bots of known strength order, weakest first: random, greedy half of the time (random
otherwise), greedy 80% of the time, greedy, and the montecarlo example bot (8 worlds a decision). Their
games are real games played in process (`play_match`); the ratings are the platform's own update
(`septet_platform.ladders.ratings.rate`: openskill's Plackett-Luce, every seat its own team, the
ladder ordered by mu), applied game by game as the ladder applies them.

Playing games is the slow part, so a library of games is played once: for each of `--seeds` deals
and each table of `--players` of the bots, every cyclic rotation of the seating. Each simulated
ladder then draws from it: a table uniformly among all tables (the platform's matchmaking prefers
close ratings; uniform is the simpler, slower-to-converge case), a deal uniformly among the seeds,
and rates, by scheme:

- independent: one game, one random rotation of the seating;
- duplicate: every rotation of the deal, each rated as its own match (what the ladder does today);
- duplicate, rated once: every rotation played, the set rated as one game whose ranks order the
  bots' mean ranks over the set (ties shared).

Each scheme counts matches played (a duplicate set of an n-player table is n matches). At every
checkpoint the share of `--runs` simulated ladders whose order by mu is exactly the true order is
recorded; a scheme "needs" the first checkpoint from which that share stays at or above 95%.

    python benchmarks/rating_quality.py [--game oh7] [--players 3] [--seeds 30] [--runs 200]
        [--max-matches 1200] [--mc-worlds 8]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# benchmarks/referee.py would shadow the referee package: keep this script's folder off the path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
# The montecarlo bot is a bot folder, not a package: its modules import each other by name.
sys.path.insert(0, str(_HERE.parent / "bots" / "examples" / "montecarlo"))

from bot import Budget, MonteCarloBot  # noqa: E402
from openskill.models import PlackettLuce  # noqa: E402

from referee.engine.games import get_game  # noqa: E402
from referee.engine.games.base import Action, Game, competition_ranks  # noqa: E402
from referee.engine.match import play_match  # noqa: E402
from referee.engine.players import Player  # noqa: E402
from septet_platform.ladders import ratings  # noqa: E402

LADDER = ("random", "greedy-50", "greedy-80", "greedy", "montecarlo")
"""The bots, weakest first: the order a ladder should find."""
GREEDY_SHARE = {"random": 0.0, "greedy-50": 0.5, "greedy-80": 0.8, "greedy": 1.0}
CONFIDENCE = 0.95
SCHEMES = ("independent", "duplicate", "duplicate, rated once")


class HandicappedGreedy:
    """Greedy with probability `share`, else a random legal action, from an RNG seeded per seat."""

    def __init__(self, game: Game, name: str, share: float, rng: random.Random) -> None:
        self.name, self._game, self._share, self._rng = name, game, share, rng

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        if self._share >= 1.0 or self._rng.random() < self._share:
            return self._game.greedy(info, legal)
        return legal[self._rng.randrange(len(legal))]


@dataclass(frozen=True)
class Deal:
    """One seed at one table: for each rotation, (bot index, rank) per seat."""

    table: tuple[int, ...]
    rotations: tuple[tuple[tuple[int, int], ...], ...]


def player(game: Game, bot: int, seed: int, seat: int, mc_worlds: int) -> Player:
    name = LADDER[bot]
    if name == "montecarlo":
        return MonteCarloBot(Budget(seconds=10.0, max_worlds=mc_worlds))  # capped by worlds: repeatable
    return HandicappedGreedy(game, name, GREEDY_SHARE[name], random.Random(f"{name}/{seed}/{seat}"))


def play_library(game: Game, players: int, seeds: int, mc_worlds: int) -> list[Deal]:
    """Every table of `players` ladder bots, every seed, every rotation of the seating."""
    deals = []
    started = time.perf_counter()
    tables = list(itertools.combinations(range(len(LADDER)), players))
    for seed in range(seeds):
        for table in tables:
            rotations = []
            for rotation in range(players):
                seating = table[rotation:] + table[:rotation]
                seats = [player(game, bot, seed, seat, mc_worlds) for seat, bot in enumerate(seating)]
                outcome = play_match(game, seats, seed=seed, match_id=f"rq-{seed}-{table}-{rotation}")
                ranks = outcome.result.ranks
                assert ranks is not None, "no game of the library is aborted"
                rotations.append(tuple(zip(seating, ranks, strict=True)))
            deals.append(Deal(table, tuple(rotations)))
        elapsed = time.perf_counter() - started
        print(
            f"  library: {seed + 1}/{seeds} seeds, {len(deals) * players} games, {elapsed:.0f} s", flush=True
        )
    return deals


def save_library(deals: Sequence[Deal], path: Path) -> None:
    path.write_text(json.dumps([{"table": d.table, "rotations": d.rotations} for d in deals]))


def load_library(path: Path) -> list[Deal]:
    return [
        Deal(tuple(d["table"]), tuple(tuple((bot, rank) for bot, rank in r) for r in d["rotations"]))
        for d in json.loads(path.read_text())
    ]


def mean_ranks(deals: Sequence[Deal]) -> list[float]:
    """Each bot's mean rank over the library's games (checks the order the ladder should find)."""
    totals = [0.0] * len(LADDER)
    counts = [0] * len(LADDER)
    for deal in deals:
        for rotation in deal.rotations:
            for bot, rank in rotation:
                totals[bot] += rank
                counts[bot] += 1
    return [total / count for total, count in zip(totals, counts, strict=True)]


def rated_games(deal: Deal, scheme: str, rng: random.Random) -> tuple[list[tuple[tuple[int, int], ...]], int]:
    """The games one draw of `deal` rates, and the matches it costs (see the module doc)."""
    if scheme == "independent":
        return [deal.rotations[rng.randrange(len(deal.rotations))]], 1
    if scheme == "duplicate":
        return list(deal.rotations), len(deal.rotations)
    totals = {bot: 0 for bot in deal.table}
    for rotation in deal.rotations:
        for bot, rank in rotation:
            totals[bot] += rank
    bots = list(deal.table)
    ranks = competition_ranks([-totals[bot] for bot in bots])  # a lower mean rank is better
    return [tuple(zip(bots, ranks, strict=True))], len(deal.rotations)


def simulate(
    deals: Sequence[Deal], scheme: str, runs: int, checkpoints: Sequence[int]
) -> tuple[list[float], list[list[float]]]:
    """At each checkpoint, the share of simulated ladders whose whole order by mu is the true one,
    and for each pair of neighbours in the true order the share that orders that pair right."""
    whole = [0] * len(checkpoints)
    pairs = [[0] * len(checkpoints) for _ in range(len(LADDER) - 1)]
    truth = list(range(len(LADDER)))
    for run in range(runs):
        rng = random.Random(f"{scheme}/{run}")
        beliefs = [ratings.initial() for _ in LADDER]
        matches = 0
        point = 0
        while point < len(checkpoints):
            games, cost = rated_games(deals[rng.randrange(len(deals))], scheme, rng)
            for game in games:
                bots = [bot for bot, _ in game]
                after = ratings.rate([beliefs[bot] for bot in bots], [rank for _, rank in game])
                for bot, belief in zip(bots, after, strict=True):
                    beliefs[bot] = belief
            matches += cost
            # Checkpoints are multiples of the table size, so a duplicate set never straddles one.
            while point < len(checkpoints) and matches >= checkpoints[point]:
                order = sorted(truth, key=lambda bot: beliefs[bot].mu)
                whole[point] += order == truth
                for weaker in range(len(LADDER) - 1):
                    pairs[weaker][point] += beliefs[weaker].mu < beliefs[weaker + 1].mu
                point += 1
    return [count / runs for count in whole], [[count / runs for count in pair] for pair in pairs]


def needed(shares: Sequence[float], checkpoints: Sequence[int]) -> int | None:
    """The first checkpoint from which the share stays at or above CONFIDENCE (None: never)."""
    for index in range(len(checkpoints)):
        if all(share >= CONFIDENCE for share in shares[index:]):
            return checkpoints[index]
    return None


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--game", default="oh7")
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=30, help="deals in the game library")
    parser.add_argument("--runs", type=int, default=200, help="simulated ladders per scheme")
    parser.add_argument("--max-matches", type=int, default=3000)
    parser.add_argument("--mc-worlds", type=int, default=8, help="montecarlo's worlds per decision")
    parser.add_argument("--library", type=Path, help="JSON file: the game library, reused if it exists")
    parser.add_argument(
        "--tau",
        type=float,
        help="what if: rate with openskill's dynamics factor tau set to this (the platform uses the "
        "default, 25/300); the same update otherwise",
    )
    args = parser.parse_args()
    if args.tau is not None:
        # ratings.rate reads its model from ratings.MODEL: a what-if swaps it for this process only.
        ratings.MODEL = PlackettLuce(tau=args.tau)
        print(f"what if: tau = {args.tau} (the platform's ladder uses {PlackettLuce().tau:.4f})")
    game = get_game(args.game)
    game.check_players(args.players)
    print(f"rating quality on {game.id}, {args.players} players; ladder weakest first: {', '.join(LADDER)}")
    if args.library is not None and args.library.exists():
        deals = load_library(args.library)
        print(f"  library: {len(deals)} tables read from {args.library}")
    else:
        deals = play_library(game, args.players, args.seeds, args.mc_worlds)
        if args.library is not None:
            save_library(deals, args.library)
    means = mean_ranks(deals)
    print(
        "library mean ranks: "
        + ", ".join(f"{name} {mean:.2f}" for name, mean in zip(LADDER, means, strict=True))
    )
    if sorted(range(len(LADDER)), key=lambda bot: -means[bot]) != list(range(len(LADDER))):
        print("warning: the library's mean ranks do not follow the assumed order")
    step = args.players * 5
    checkpoints = list(range(step, args.max_matches + 1, step))
    marks = (15, 30, 60, 90, 150, 300, 600, 900, 1500, 3000)
    shown = [c for c in checkpoints if c in marks or c == checkpoints[-1]]
    print(f"share of {args.runs} simulated ladders in the right order after N matches (N = games rated):")
    print(f"  {'scheme':<24}" + "".join(f"{c:>7}" for c in shown) + "   matches for 95%")
    pair_needs: dict[str, list[str]] = {}
    for scheme in SCHEMES:
        whole, pairs = simulate(deals, scheme, args.runs, checkpoints)
        by_point = dict(zip(checkpoints, whole, strict=True))
        print(
            f"  {scheme:<24}"
            + "".join(f"{by_point[c]:>7.2f}" for c in shown)
            + f"   {_need(whole, checkpoints, args)}"
        )
        pair_needs[scheme] = [_need(pair, checkpoints, args) for pair in pairs]
    print("matches until each neighbouring pair is ordered right in 95% of the ladders:")
    names = [f"{LADDER[i]} < {LADDER[i + 1]}" for i in range(len(LADDER) - 1)]
    print(f"  {'scheme':<24}" + "".join(f"{name:>24}" for name in names))
    for scheme, needs in pair_needs.items():
        print(f"  {scheme:<24}" + "".join(f"{need:>24}" for need in needs), flush=True)


def _need(shares: Sequence[float], checkpoints: Sequence[int], args: argparse.Namespace) -> str:
    need = needed(shares, checkpoints)
    return str(need) if need is not None else f"> {args.max_matches}"


if __name__ == "__main__":
    main()
