"""Evaluate an agent against Septet's built-in bots in the PettingZoo environment (docs/pettingzoo.md).

    python docs/examples/pettingzoo_evaluate.py --game oh-hell --deals 5

Each agent plays every deal once from every seat (duplicate format: the same cards, the agent in
seat 0, then 1, ...) against the built-in bots in the other seats, and the table shows its mean
final score, mean rank and share of games won. Two agents are measured: `random`, a uniformly
random action from the observation's action mask (the floor any learner must clear), and
`greedy`, the engine's own greedy bot in the agent's seat (a reference). Write your agent as a
function `(observation, agent) -> action id` and add it to AGENTS.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from referee.engine.games.base import GameError
from referee.pettingzoo import GAME_IDS, EngineBot, env

Agent = Callable[[dict[str, Any], str], int]
"""(observation, agent name) -> action id; the observation holds "observation" and "action_mask"."""


def random_agent(seed: int) -> Agent:
    rng = np.random.default_rng(seed)

    def act(observation: dict[str, Any], agent: str) -> int:
        return int(rng.choice(np.flatnonzero(observation["action_mask"])))

    return act


def greedy_agent(table: Any) -> Agent:
    bots: dict[str, EngineBot] = {}

    def act(observation: dict[str, Any], agent: str) -> int:
        bot = bots.setdefault(agent, EngineBot.builtin(table, "greedy", agent))
        return bot(agent)

    return act


AGENTS: dict[str, Callable[[Any, int], Agent]] = {
    "random": lambda table, seed: random_agent(seed),
    "greedy": lambda table, seed: greedy_agent(table),
}


def play(table: Any, learner: str, act: Agent, bots: dict[str, EngineBot], seed: int) -> dict[str, Any]:
    """One game with `act` in the `learner` seat; returns the learner's final info (score, rank)."""
    table.reset(seed=seed)
    final = {}
    for agent in table.agent_iter():
        observation, _reward, terminated, truncated, info = table.last()
        if terminated or truncated:
            final[agent] = info
            table.step(None)
        elif agent == learner:
            table.step(act(observation, agent))
        else:
            table.step(bots[agent](agent))
    return final[learner]


def evaluate(game_id: str, players: int | None, deals: int, seed: int, opponent: str) -> list[str]:
    table = env(game_id, num_players=players)
    agents = table.possible_agents
    title = f"{table.unwrapped.game.title} ({game_id}), {len(agents)} players"
    lines = [
        f"{title}, {deals} deals x {len(agents)} seats against {opponent} bots",
        f"{'agent':<8} {'games':>5} {'mean score':>10} {'mean rank':>9} {'won':>5} {'games/s':>7}",
    ]
    for name, make in AGENTS.items():
        act = make(table, seed)
        scores, ranks, started = [], [], time.perf_counter()
        for deal in range(deals):
            for learner in agents:
                bots = {agent: EngineBot.builtin(table, opponent, agent, seed=deal) for agent in agents}
                final = play(table, learner, act, bots, seed=seed + deal)
                scores.append(final["score"])
                ranks.append(final["rank"])
        rate = len(scores) / (time.perf_counter() - started)
        won = sum(rank == 1 for rank in ranks) / len(ranks)
        mean_score, mean_rank = np.mean(scores), np.mean(ranks)
        lines.append(
            f"{name:<8} {len(scores):>5} {mean_score:>10.1f} {mean_rank:>9.2f} {won:>5.0%} {rate:>7.1f}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=GAME_IDS, default="oh-hell")
    parser.add_argument("--players", type=int, help="seats at the table (default: 4, or 2 for oh7-duel)")
    parser.add_argument("--deals", type=int, default=5, help="deals, each played once from every seat")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--opponent", choices=("greedy", "random"), default="greedy")
    args = parser.parse_args()
    if args.deals < 1:
        parser.error("--deals must be at least 1")
    try:
        lines = evaluate(args.game, args.players, args.deals, args.seed, args.opponent)
    except GameError as error:
        parser.error(str(error))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
