"""Players: whoever answers a seat's decisions during a match.

A player is any object with a `name` and `decide(info_state, legal_actions) -> action`; the
match runner never shows it more than the seat's information state. Built in:

- `RandomPlayer`: a uniformly random legal action, from its own seeded RNG.
- `GreedyPlayer`: the game's sensible policy (`Game.greedy`), also the fallback for a forfeited seat.
- `PolicyPlayer`: wraps a plain function, for bots written as one function.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from referee.engine.games.base import Action, Game, GameError


@runtime_checkable
class Player(Protocol):
    """The in-process player API: answer one decision from the seat's information state."""

    name: str

    def decide(self, info_state: Any, legal_actions: tuple[Action, ...]) -> Action:
        """Return one of `legal_actions`; anything else forfeits the seat (DESIGN.md)."""
        ...


class RandomPlayer:
    """Plays a uniformly random legal action; seeded, so a match with it replays exactly."""

    def __init__(self, rng: random.Random, name: str = "random") -> None:
        self.name = name
        self._rng = rng

    def decide(self, info_state: Any, legal_actions: tuple[Action, ...]) -> Action:
        return legal_actions[self._rng.randrange(len(legal_actions))]


class GreedyPlayer:
    """Plays the game's greedy policy: sensible bids, tries to make them exactly."""

    def __init__(self, game: Game, name: str = "greedy") -> None:
        self.name = name
        self._policy = game.greedy

    def decide(self, info_state: Any, legal_actions: tuple[Action, ...]) -> Action:
        return self._policy(info_state, legal_actions)


class PolicyPlayer:
    """A player from a function `(info_state, legal_actions) -> action`."""

    def __init__(self, policy: Callable[[Any, tuple[Action, ...]], Action], name: str) -> None:
        self.name = name
        self._policy = policy

    def decide(self, info_state: Any, legal_actions: tuple[Action, ...]) -> Action:
        return self._policy(info_state, legal_actions)


BUILTIN_PLAYERS = ("random", "greedy")


def builtin_player(name: str, game: Game, seed: int, seat: int) -> Player:
    """A built-in player by name; `random` gets an RNG derived from the game seed and seat."""
    if name == "random":
        return RandomPlayer(random.Random(f"{seed}/{seat}"))
    if name == "greedy":
        return GreedyPlayer(game)
    raise GameError(f"unknown bot {name!r} (built-in bots: {', '.join(BUILTIN_PLAYERS)})")
