"""`Worlds`: the full game states one seat cannot tell from the real one, for one information state.

A game family (`bidding`, `oh7`, `black_sevens`) reads an information state into `Constraints`
(what is unseen and who may hold it), an optional check of a whole hand (what a lay-low in Black
Sevens says of the hand it came from), and a builder that turns a placement of the unseen cards
into an engine state. `Worlds` puts them together: sample, check, build.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from referee.botkit.worlds.dealing import Constraints, NoWorld, deal
from referee.engine.games import get_game
from referee.engine.games.base import Card, Game

REDRAWS = 400
"""Deals tried when a hand check rejects some: the seats it rejects are dealt again each time."""

HandCheck = Callable[[int, Sequence[Card]], bool]
"""(seat, its whole hand in a world) -> whether that hand explains what the seat did."""

Builder = Callable[["Placement"], Any]
"""A placement -> the engine state of that world."""

Belief = Callable[["Placement"], float]
"""A placement -> how likely the seats' own choices (bids, bets) were in it, in (0, 1]; a model of
the other players, not a rule: see `referee.botkit.worlds.beliefs`."""


@dataclass(frozen=True, slots=True)
class Placement:
    """Where the unseen cards are in one world: every seat's whole hand, and the rest (the undealt
    deck or the discard, in a fixed order; the Dummy's face-down pile, top first)."""

    hands: tuple[tuple[Card, ...], ...]
    rest: tuple[Card, ...]


class Worlds:
    """The worlds of one information state: `sample(rng)` draws one as an engine state.

    Every world has the seat's own hand, every card the seat has seen where it was seen, each other
    hand of the right size, and no card a seat has shown it cannot hold; so the seat's information
    state in it equals `info`, and the public history could have happened in it. Engine states are
    values (`apply` returns a new state, never mutating its argument): step a world with the game's
    own verbs, as often as wanted, and keep a state to go back to it.
    """

    def __init__(
        self, info: Any, constraints: Constraints, build: Builder, check: HandCheck | None = None
    ) -> None:
        self.info = info
        self.game: Game = get_game(info.game)
        self.constraints = constraints
        self._build = build
        self._check = check

    def sample(self, rng: random.Random) -> Any:
        """A world drawn at random: an engine state at the seat's decision."""
        return self._build(self.sample_placement(rng))

    def sample_placement(self, rng: random.Random, belief: Belief | None = None, tries: int = 1) -> Placement:
        """A placement drawn at random. With a `belief`, up to `tries` placements are drawn and each
        kept with the probability the belief gives it; none kept, the likeliest drawn is."""
        if belief is None:
            return self._placement(rng)
        best, best_weight = None, -1.0
        for _ in range(max(1, tries)):
            placement = self._placement(rng)
            weight = belief(placement)
            if rng.random() < weight:
                return placement
            if weight > best_weight:
                best, best_weight = placement, weight
        assert best is not None
        return best

    def build(self, placement: Placement) -> Any:
        """The engine state of a placement (from `sample_placement`, or one of your own)."""
        return self._build(placement)

    def admits(self, hands: Sequence[Sequence[Card]]) -> bool:
        """Whether whole hands (one per seat, the seat's own included) could be the real ones."""
        if not self.constraints.admits(hands):
            return False
        check = self._check
        return check is None or all(check(seat, tuple(hand)) for seat, hand in enumerate(hands))

    def _placement(self, rng: random.Random) -> Placement:
        constraints, check = self.constraints, self._check
        known = constraints.known
        dealt, rest = deal(constraints, rng)
        if check is not None:
            for _ in range(REDRAWS):
                rejected = [
                    seat
                    for seat, cards in enumerate(dealt)
                    if cards and not check(seat, (*known[seat], *cards))
                ]
                if not rejected:
                    break
                dealt, rest = _deal_again(constraints, dealt, rest, rejected, rng)
            else:
                raise NoWorld(f"no deal of the unseen cards explains every play ({REDRAWS} tried)")
        hands = tuple(tuple(known[seat]) + tuple(cards) for seat, cards in enumerate(dealt))
        return Placement(hands, tuple(rest))


def _deal_again(
    constraints: Constraints,
    dealt: list[list[Card]],
    rest: list[Card],
    rejected: list[int],
    rng: random.Random,
) -> tuple[list[list[Card]], list[Card]]:
    """The rejected seats' cards and the rest dealt again among them (the other hands kept); every
    few times the whole pool instead, so no seat's lucky hand can lock the others out."""
    if rng.random() < 0.25:
        return deal(constraints, rng)
    keep = set(range(len(dealt))) - set(rejected)
    pool = tuple(rest) + tuple(card for seat in rejected for card in dealt[seat])
    counts = tuple(0 if seat in keep else count for seat, count in enumerate(constraints.counts))
    partial = Constraints(pool, counts, constraints.forbidden, constraints.known)
    try:
        again, rest_again = deal(partial, rng)
    except NoWorld:
        return deal(constraints, rng)
    return [dealt[seat] if seat in keep else again[seat] for seat in range(len(dealt))], rest_again
