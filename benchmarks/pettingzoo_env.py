"""What the PettingZoo environments cost over the bare engine, per game id.

    python benchmarks/pettingzoo_env.py [--games 20] [--repeats 3]

For each game id (default seat count) it plays the same seeds twice, interleaved: through the
environment (random actions from the mask, `last()` every step, so every decision builds the
agent's observation and mask) and through the engine alone (`referee.engine.playout` with random
legal actions, no observation). It prints decisions per second of both, the environment's share
of the engine's speed, and the cost of one observation. Figures are the best of the repeats (the
least disturbed by other load on the machine).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

# benchmarks/referee.py would shadow the referee package when this runs as a script.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np  # noqa: E402

from referee.engine.games.base import CHANCE  # noqa: E402
from referee.engine.playout import playout  # noqa: E402
from referee.pettingzoo import GAME_IDS, raw_env  # noqa: E402


def env_decisions(game_id: str, seeds: range) -> tuple[int, float, int, float]:
    """Decisions, seconds through the environment; observations built and their seconds."""
    table = raw_env(game_id)
    rng = np.random.default_rng(0)
    decisions, observing = 0, 0.0
    started = time.perf_counter()
    for seed in seeds:
        table.reset(seed=seed)
        for _agent in table.agent_iter():
            before = time.perf_counter()
            observation, _reward, terminated, truncated, _info = table.last()
            observing += time.perf_counter() - before
            if terminated or truncated:
                table.step(None)
                continue
            decisions += 1
            table.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return decisions, time.perf_counter() - started, decisions, observing


def engine_decisions(game_id: str, seeds: range) -> tuple[int, float]:
    """Decisions, seconds of the engine's own random playouts of the same seeds."""
    table = raw_env(game_id)
    game, players = table.game, table.num_players
    decisions = 0
    started = time.perf_counter()
    for seed in seeds:
        for step in playout(game, game.start(players), random.Random(seed)):
            decisions += step.seat != CHANCE
    return decisions, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games per game id and repeat")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    seeds = range(args.games)
    print(f"{args.games} games per game id, best of {args.repeats} interleaved repeats")
    header = ("game id", "env dec/s", "engine dec/s", "env/engine", "obs µs", "obs size")
    print("{:<22} {:>10} {:>12} {:>10} {:>7} {:>8}".format(*header))
    for game_id in GAME_IDS:
        env_rates, engine_rates, observe_costs = [], [], []
        for _ in range(args.repeats):
            decisions, seconds, observed, observing = env_decisions(game_id, seeds)
            env_rates.append(decisions / seconds)
            observe_costs.append(observing / observed)
            decisions, seconds = engine_decisions(game_id, seeds)
            engine_rates.append(decisions / seconds)
        env_rate, engine_rate = max(env_rates), max(engine_rates)
        size = raw_env(game_id).encoding.layout.size
        print(
            f"{game_id:<22} {env_rate:>10,.0f} {engine_rate:>12,.0f} {env_rate / engine_rate:>10.2f} "
            f"{min(observe_costs) * 1e6:>7.1f} {size:>8}"
        )


if __name__ == "__main__":
    main()
