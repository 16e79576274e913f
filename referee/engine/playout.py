"""Playing a game to its end with plain policies, without players, deadlines or replays.

Tests, the benchmark's baseline and search-based bots (which simulate many games from a
position) use this; real matches go through `referee.engine.match.play_match`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from referee.engine.games.base import CHANCE, Action, Game, rebuilt_by_init

Policy = Callable[[Any, int, tuple[Action, ...], random.Random], Action]
"""(state, seat, legal actions, rng) -> action: a policy that sees the whole state."""


def random_policy(state: Any, seat: int, legal: tuple[Action, ...], rng: random.Random) -> Action:
    """A uniformly random legal action."""
    return legal[rng.randrange(len(legal))]


@dataclass(frozen=True, slots=True)
class Step:
    """One applied step: who acted (`CHANCE` for chance), what, and the state it led to."""

    seat: int
    action: Any
    state: Any

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)


def playout(game: Game, state: Any, rng: random.Random, policy: Policy = random_policy) -> Iterator[Step]:
    """Yields every step from `state` to the end of the game; chance is sampled from `rng`."""
    while (decision := game.to_move(state)) is not None:
        if decision.is_chance:
            outcome = game.sample_chance(state, rng)
            state = game.apply(state, CHANCE, outcome)
            yield Step(CHANCE, outcome, state)
            continue
        for seat in decision.seats:
            legal = game.legal_actions(state, seat)
            action = legal[0] if len(legal) == 1 else policy(state, seat, legal, rng)
            state = game.apply(state, seat, action)
            yield Step(seat, action, state)
