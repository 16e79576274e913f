"""Random positions of every game for the search API's tests, and what a test may read of them.

A position is a real game (state) and a seat with a choice in it. The tests read hands through
the engine's public verbs (information states), as a bot would, so they hold whatever the engine
keeps inside its states.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from referee.engine.games.base import CHANCE, Game


def positions(game: Game, players: int, seed: int, greedy_share: float = 0.7) -> Iterator[tuple[Any, int]]:
    """Every (state, seat) of one game where the seat has a choice; the seats play greedy with
    probability `greedy_share` (realistic positions), else at random (odd ones)."""
    rng = random.Random(seed)
    state = game.start(players)
    while (decision := game.to_move(state)) is not None:
        if decision.is_chance:
            state = game.apply(state, CHANCE, game.sample_chance(state, rng))
            continue
        for seat in decision.seats:
            legal = game.legal_actions(state, seat)
            if len(legal) > 1:
                yield state, seat
            if rng.random() < greedy_share:
                action = game.greedy(game.information_state(state, seat), legal)
            else:
                action = legal[rng.randrange(len(legal))]
            state = game.apply(state, seat, action)


def some_positions(game: Game, players: int, seed: int, count: int) -> list[tuple[Any, int]]:
    """`count` positions spread over one game (every k-th, so late rounds are there too)."""
    every = list(positions(game, players, seed))
    step = max(1, len(every) // count)
    return every[::step][:count]


def true_hands(game: Game, state: Any) -> list[tuple[str, ...]]:
    """Every seat's cards (the Dummy's: none), read from the seats' information states; in a blind
    7Up7Down round a seat's own card is what the others see."""
    seats = range(len(game.information_state(state, 0).scores) + len(game.dummy_seats))
    infos = [game.information_state(state, seat) for seat in seats]
    hands = [tuple(info.hand) for info in infos]
    for info in infos:
        for other, card in getattr(info, "visible_cards", ()):
            hands[other] = (card,)
    return hands


def table_sizes(game: Game) -> tuple[int, ...]:
    """The smallest and the largest table of a game."""
    return tuple(dict.fromkeys((game.players.start, game.players.stop - 1)))
