"""Test helpers shared by the exact-bid games' tests (Oh Hell!, 7Up7Down): explicit deals and
scripted actions through the shared engine (referee.engine.games.bidding)."""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from referee.engine.cards import parse_cards
from referee.engine.games import bidding
from referee.engine.games.base import CHANCE, Game
from referee.engine.games.bidding import State
from referee.engine.playout import playout


def deal(state: State, hands: Iterable[str], trump_card: str, dealer: int | None = None) -> State:
    """Applies an explicit deal: one string of card codes per seat."""
    outcome: dict[str, Any] = {"hands": [list(parse_cards(hand)) for hand in hands]}
    outcome["trump_card"] = trump_card
    if dealer is not None:
        outcome["dealer"] = dealer
    return bidding.apply(state, CHANCE, outcome)


def seat_to_move(state: State) -> int:
    """The one seat that decides next (no simultaneous decisions in these games)."""
    decision = bidding.to_move(state)
    assert decision is not None and len(decision.seats) == 1
    return decision.seats[0]


def act(state: State, *actions: Any) -> State:
    """Applies each action for the seat to move, checking it is legal."""
    for action in actions:
        seat = seat_to_move(state)
        assert action in bidding.legal_actions(state, seat), (seat, action)
        state = bidding.apply(state, seat, action)
    return state


def game_events(
    game: Game, players: int, seed: int, policy: Any = None
) -> tuple[list[dict[str, Any]], State]:
    """Plays a whole seeded game (random, or `policy`) and returns its events and final state."""
    rng = random.Random(seed)
    state = game.start(players)
    events: list[dict[str, Any]] = []
    steps = playout(game, state, rng) if policy is None else playout(game, state, rng, policy)
    for step in steps:
        events.extend(step.state.events)
        state = step.state
    return events, state


def views_compared(first: State, second: State, seat: int, rng: random.Random) -> int:
    """Plays the same random actions on two deals while `seat`'s information states are equal
    (asserted); stops where the deals part (an action legal in one only). Returns how many."""
    compared = 0
    while (decision := bidding.to_move(first)) is not None and not decision.is_chance:
        assert bidding.information_state(first, seat) == bidding.information_state(second, seat)
        compared += 1
        mover = decision.seats[0]
        legal = bidding.legal_actions(first, mover)
        action = legal[rng.randrange(len(legal))]
        if action not in bidding.legal_actions(second, mover):
            break  # a swapped card shows: the deals part here
        first, second = bidding.apply(first, mover, action), bidding.apply(second, mover, action)
    return compared
