"""The search API's speed: rollouts and worlds per second, the SDK's search against the montecarlo
bot's own search of commit REV (default: its last version before the SDK had a search API).

    python benchmarks/search.py [--before REV] [--game oh-hell ...] [--rounds 5] [--positions 24]

For each game id (default: all), the same positions (a greedy game, every few decisions) are
searched by both, interleaved: each round times every position once with REV's search and once
with the SDK's, with the same world cap, and the medians over the rounds are printed. REV's bot
folder is read with `git show` into a temporary folder and imported from there; both run on this
tree's engine, so the figures compare the searches, not the engines. Printed per game id:

- rollouts/s: each action played out in a world to the end of the round, greedy for every seat
  (REV: every action in every world; the SDK without its race, the same work, and with it, as
  the bot searches: fewer rollouts on actions clearly behind);
- worlds/s: worlds sampled and built alone (no rollouts);
- the ratios SDK / REV.

With `--quality N`, also the quality of the decisions at the same number of rollouts
(`--rollouts`, default 80): for N positions per game id, the mean regret of each search's choice
under the action means of a long search (`--converged` worlds, no race): REV's search, the SDK's
without and with its race (how well a search spends a fixed number of rollouts; no belief, which
changes the reference itself).

CPU time of this process is measured (time.process_time), so other load on a shared machine
counts less.
"""

from __future__ import annotations

import argparse
import importlib
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

# benchmarks/referee.py would shadow the referee package: keep this script's folder off the path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
ROOT = _HERE.parent

from referee.botkit import search as sdk  # noqa: E402
from referee.engine.games import all_games, get_game  # noqa: E402
from referee.engine.games.base import CHANCE, Action, Game  # noqa: E402

BEFORE_COMMIT = "b6d2d35a7a91aa8dcabe93db43d823768f801459"
"""The montecarlo bot's last version with its own worlds and search (bots/examples/montecarlo)."""
FOLDER = "bots/examples/montecarlo"
OLD_MODULES = ("bot", "search", "deal", "worlds_bidding", "worlds_black_sevens", "worlds_oh7")
TABLES = {
    "oh-hell": 4,
    "seven-up-seven-down": 4,
    "black-sevens": 4,
    "oh7": 3,
    "oh7-advanced": 4,
    "oh7-duel": 2,
}

Position = tuple[Any, tuple[Action, ...]]


def load_before(commit: str, into: Path) -> tuple[ModuleType, ModuleType]:
    """REV's montecarlo `search` and `bot` modules, read from git into `into` and imported."""
    for name in OLD_MODULES:
        shown = subprocess.run(
            ["git", "show", f"{commit}:{FOLDER}/{name}.py"], cwd=ROOT, capture_output=True, text=True
        )
        if shown.returncode != 0:
            raise SystemExit(
                f"search benchmark: cannot read {FOLDER}/{name}.py at {commit}: {shown.stderr.strip()}"
            )
        (into / f"{name}.py").write_text(shown.stdout)
    for name in OLD_MODULES:
        sys.modules.pop(name, None)
    sys.path.insert(0, str(into))
    try:
        return importlib.import_module("search"), importlib.import_module("bot")
    finally:
        sys.path.remove(str(into))
        for name in OLD_MODULES:  # keep the loaded objects, forget the names
            sys.modules.pop(name, None)


def positions(game: Game, players: int, count: int, seed: int = 1) -> list[Position]:
    """`count` positions with a choice from greedy games, spread over each game's rounds."""
    found: list[Position] = []
    rng = random.Random(seed)
    while len(found) < count:
        state = game.start(players)
        every: list[Position] = []
        while (decision := game.to_move(state)) is not None:
            if decision.is_chance:
                state = game.apply(state, CHANCE, game.sample_chance(state, rng))
                continue
            for seat in decision.seats:
                legal = game.legal_actions(state, seat)
                info = game.information_state(state, seat)
                if len(legal) > 1:
                    every.append((info, legal))
                state = game.apply(state, seat, game.greedy(info, legal))
        found += every[:: max(1, len(every) // count)]
    return found[:count]


def timed(run: Callable[[], tuple[int, int]]) -> tuple[float, float]:
    """(rollouts/s, worlds/s) of one run, in CPU seconds of this process."""
    started = time.process_time()
    rollouts, worlds = run()
    seconds = max(time.process_time() - started, 1e-9)
    return rollouts / seconds, worlds / seconds


def measure(game_id: str, old_search: ModuleType, old_bot: ModuleType, args: argparse.Namespace) -> None:
    game = get_game(game_id)
    table = positions(game, args.players or TABLES[game_id], args.positions)
    sampler = old_bot.SAMPLERS[game_id]
    cap = args.worlds

    def before() -> tuple[int, int]:
        rng, rollouts, worlds = random.Random(1), 0, 0
        for info, legal in table:
            report = old_search.search(info, legal, sampler, old_search.Budget(1e9, cap), rng)
            rollouts += report.worlds * len(legal)
            worlds += report.worlds
        return rollouts, worlds

    def after(race: bool) -> Callable[[], tuple[int, int]]:
        def run() -> tuple[int, int]:
            rng, rollouts, worlds = random.Random(1), 0, 0
            for info, legal in table:
                report = sdk.search(info, legal, rng, sdk.Budget(1e9, cap), race=race)
                rollouts += report.rollouts
                worlds += report.worlds
            return rollouts, worlds

        return run

    def sample_before() -> tuple[int, int]:
        rng = random.Random(1)
        for info, _ in table:
            for _ in range(cap):
                sampler(info, rng)
        return 0, cap * len(table)

    def sample_after() -> tuple[int, int]:
        rng = random.Random(1)
        for info, _ in table:
            possible = sdk.worlds(info)
            for _ in range(cap):
                possible.sample(rng)
        return 0, cap * len(table)

    runs = {"before": before, "after": after(False), "race": after(True), "sample_before": sample_before,
            "sample_after": sample_after}  # fmt: skip
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            figures[name].append(timed(run))

    def median(name: str, index: int) -> float:
        return statistics.median(figure[index] for figure in figures[name])

    old, new, race = median("before", 0), median("after", 0), median("race", 0)
    worlds_ratio = median("race", 1) / median("before", 1)
    sampled_old, sampled_new = median("sample_before", 1), median("sample_after", 1)
    sampled_ratio = sampled_new / sampled_old
    print(
        f"{game_id:20} {len(table):3} positions | rollouts/s before {old:6.0f}, SDK {new:6.0f} "
        f"({new / old:.2f}x), SDK raced {race:6.0f} ({race / old:.2f}x; worlds/s {worlds_ratio:.2f}x) | "
        f"worlds sampled/s before {sampled_old:6.0f}, SDK {sampled_new:6.0f} ({sampled_ratio:.2f}x)",
        flush=True,
    )


def quality(game_id: str, old_search: ModuleType, old_bot: ModuleType, args: argparse.Namespace) -> None:
    """How close each search's choice comes to the converged one, at the same number of rollouts:
    the regret of the chosen action under the means of a search of `--converged` worlds."""
    game = get_game(game_id)
    table = positions(game, args.players or TABLES[game_id], args.quality, seed=7)
    cap = args.rollouts
    regrets: dict[str, list[float]] = {"before": [], "SDK": [], "SDK raced": []}
    for index, (info, legal) in enumerate(table):
        converged = sdk.search(
            info, legal, random.Random(10**6 + index), sdk.Budget(1e9, args.converged), race=False
        )
        best = max(converged.means.values())
        worlds = max(1, cap // len(legal))
        chosen = {
            "before": old_search.search(
                info, legal, old_bot.SAMPLERS[game_id], old_search.Budget(1e9, worlds), random.Random(index)
            ).chosen,
            "SDK": sdk.search(
                info, legal, random.Random(index), sdk.Budget(1e9, 10**6, cap), race=False
            ).chosen,
            "SDK raced": sdk.search(info, legal, random.Random(index), sdk.Budget(1e9, 10**6, cap)).chosen,
        }
        for name, action in chosen.items():
            regrets[name].append(best - converged.means[action])
    line = [f"{game_id:20} {len(table):3} positions, {cap} rollouts a decision | mean regret (points):"]
    for name, values in regrets.items():
        gaps = [mine - theirs for mine, theirs in zip(values, regrets["before"], strict=True)]
        error = statistics.stdev(gaps) / math.sqrt(len(gaps)) if len(gaps) > 1 else 0.0
        line.append(
            f"{name} {statistics.mean(values):.3f}"
            + ("" if name == "before" else f" ({statistics.mean(gaps):+.3f} +- {error:.3f})")
        )
    print(" ".join(line[:1]) + " " + ", ".join(line[1:]), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", default=BEFORE_COMMIT, metavar="REV", help="the montecarlo bot's commit")
    parser.add_argument("--game", action="append", help="game id (repeatable; default: every game)")
    parser.add_argument("--players", type=int, help="seats at the table (default: per game, see TABLES)")
    parser.add_argument("--positions", type=int, default=24, help="positions per game id (default 24)")
    parser.add_argument("--worlds", type=int, default=12, help="worlds per position and search (default 12)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds; medians are printed")
    parser.add_argument(
        "--quality",
        type=int,
        default=0,
        metavar="N",
        help="also: the regret of N positions' choices (see doc)",
    )
    parser.add_argument(
        "--rollouts", type=int, default=80, help="rollouts a decision for --quality (default 80)"
    )
    parser.add_argument(
        "--converged", type=int, default=300, help="worlds of the reference search (default 300)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="septet-search-before-") as folder:
        old_search, old_bot = load_before(args.before, Path(folder))
        print(
            f"search speed: SDK (this tree) against the montecarlo bot of {args.before[:12]}, same engine, "
            f"{args.worlds} worlds a position, medians of {args.rounds} interleaved rounds (CPU time)"
        )
        for game_id in args.game or list(all_games()):
            measure(game_id, old_search, old_bot, args)
        if args.quality:
            print(
                f"decision quality: regret of the choice under the means of a {args.converged}-world search "
                f"(no belief), lower is better; difference to before +- its standard error"
            )
            for game_id in args.game or list(all_games()):
                quality(game_id, old_search, old_bot, args)


if __name__ == "__main__":
    main()
