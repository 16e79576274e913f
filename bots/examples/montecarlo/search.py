"""Determinized Monte-Carlo search: sample worlds the seat cannot tell apart, play each action out.

A *world* is a full engine state whose information state for our seat equals the one we were
given: the unseen cards are dealt at random, consistently with everything public (see the
`worlds_*` modules, one per game family). Every legal action is applied in each sampled world
and the round is played to its end with the greedy policy for every seat; the action with the
best average outcome (our round points against the others' average) is chosen. All actions are
tried on the same worlds, so their comparison is not blurred by the luck of the deal.

The search stops at its time budget or its world cap, whichever comes first, and never starts a
world it could not finish in time, except the first (without a world there is nothing to compare).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from referee.games import get_game
from referee.games.base import Action, Game

Sampler = Callable[[Any, random.Random], Any]
"""(information state, rng) -> a full engine state the seat cannot tell from the real one."""

GREEDY_TIE_BONUS = 1e-6
"""Added to greedy's choice so equal averages keep greedy's (tested, sensible) action."""


@dataclass(frozen=True)
class Budget:
    """How long one decision may search, and at most how many worlds it samples."""

    seconds: float = 0.2
    max_worlds: int = 200


@dataclass
class SearchReport:
    """What one search did: worlds sampled, each action's mean value, the chosen action."""

    worlds: int
    means: dict[Any, float]
    chosen: Action
    seconds: float


def rollout_value(game: Game, state: Any, seat: int) -> float:
    """Plays greedy for every seat to the end of the round; our points minus the others' mean.

    The round ends at the next chance step (the next deal) or the game's end. Scores only change
    when a round is scored, so the difference of totals is the round's points.
    """
    start = state
    while (decision := game.to_move(state)) is not None and not decision.is_chance:
        for mover in decision.seats:
            legal = game.legal_actions(state, mover)
            action = legal[0] if len(legal) == 1 else game.greedy(game.information_state(state, mover), legal)
            state = game.apply(state, mover, action)
    return _relative_points(game, start.scores, state.scores, seat)


def _relative_points(game: Game, before: tuple[int, ...], after: tuple[int, ...], seat: int) -> float:
    gains = [now - then for now, then in zip(after, before, strict=True)]
    mine = gains[seat]
    others = [gain for index, gain in enumerate(gains) if index != seat]
    value = mine - sum(others) / len(others)
    return value if game.higher_is_better else -value


def search(
    info: Any, legal: tuple[Action, ...], sample: Sampler, budget: Budget, rng: random.Random
) -> SearchReport:
    """The action with the best mean rollout value over sampled worlds (see the module doc)."""
    started = time.perf_counter()
    deadline = started + budget.seconds
    game = get_game(info.game)
    seat = info.seat
    totals = [0.0] * len(legal)
    worlds = 0
    per_world = 0.0
    while worlds < budget.max_worlds:
        now = time.perf_counter()
        if worlds and now + per_world > deadline:
            break
        world = sample(info, rng)
        for index, action in enumerate(legal):
            totals[index] += rollout_value(game, game.apply(world, seat, action), seat)
        worlds += 1
        per_world = (time.perf_counter() - started) / worlds
    greedy_choice = game.greedy(info, legal)
    means = {action: totals[index] / worlds for index, action in enumerate(legal)}
    best = max(
        range(len(legal)),
        key=lambda index: means[legal[index]] + (GREEDY_TIE_BONUS if legal[index] == greedy_choice else 0.0),
    )
    return SearchReport(worlds, means, legal[best], time.perf_counter() - started)
