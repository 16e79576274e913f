"""Dealing the cards a seat cannot see among the seats that hold them, under what is known of each hand.

Every game family describes its unseen cards the same way (`Constraints`): a pool of cards nobody
has shown, how many of them each seat holds, and the cards each seat cannot hold (a suit it
failed to follow, cards below the ones it laid low). The pool's other cards are the *rest*: the
undealt deck, the discard, the Dummy's face-down pile.

`deal` places the pool at random so that every constraint holds, and always succeeds when a
placement exists (the real one always does):

1. Plain shuffles, kept only when they break no constraint: each such deal is exactly uniform
   over the consistent ones. With few constraints (the usual case) the first shuffle or two do.
2. A shuffle dealt most constrained seat first, each seat taking the first cards it may hold
   (near uniform: a seat's hand is uniform over what the seats before it left).
3. A matching of cards to seats by augmenting paths, in shuffled order: exact and certain, for
   the rare positions where the constraints are tight.

Everything random comes from the RNG passed in, and no step depends on the order of a set, so a
deal is the same for the same RNG in every process (string hashes differ between processes).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from referee.engine.games.base import Card

SHUFFLES = 4
"""Plain shuffles tried first (exactly uniform when one meets the constraints)."""
GREEDY_DEALS = 24
"""Most-constrained-first deals tried next, before the exact matching."""


class NoWorld(ValueError):
    """No placement of the unseen cards meets the constraints: the information state given cannot
    have come from a real game (or a constraint is wrong)."""


@dataclass(frozen=True, slots=True)
class Constraints:
    """What a seat knows of the cards it cannot see.

    `pool` is every unseen card, a multiset in a fixed order (Oh 7? advanced holds `N` twice);
    `counts[seat]` how many of them the seat holds (0 for a seat whose hand is known whole);
    `forbidden[seat]` the pool cards it cannot hold. Cards known to be in a hand are not in the
    pool (`known`), and neither are the cards the seat sees.
    """

    pool: tuple[Card, ...]
    counts: tuple[int, ...]
    forbidden: tuple[frozenset[Card], ...]
    known: tuple[tuple[Card, ...], ...]
    """Per seat: the cards it holds for certain beyond the ones the seat sees (its own hand, in
    full, for the seat itself; an Oh 7? bet card not played yet for the others)."""

    @property
    def rest_size(self) -> int:
        """How many pool cards no seat holds (undealt, discard, the Dummy's pile)."""
        return len(self.pool) - sum(self.counts)

    def admits(self, hands: Sequence[Sequence[Card]]) -> bool:
        """Whether full hands (known cards included) meet these constraints: the known cards are
        there, the other cards come from the pool (no card twice) and no seat holds one it cannot."""
        if len(hands) != len(self.counts):
            return False
        left = list(self.pool)
        for seat, hand in enumerate(hands):
            unknown = list(hand)
            for card in self.known[seat]:
                if card not in unknown:
                    return False
                unknown.remove(card)
            if len(unknown) != self.counts[seat]:
                return False
            for card in unknown:
                if card in self.forbidden[seat] or card not in left:
                    return False
                left.remove(card)
        return True


def deal(constraints: Constraints, rng: random.Random) -> tuple[list[list[Card]], list[Card]]:
    """The pool dealt at random: per seat the unseen cards it gets, and the rest in random order.

    Raises NoWorld when no placement meets the constraints.
    """
    pool, counts, forbidden = constraints.pool, constraints.counts, constraints.forbidden
    if constraints.rest_size < 0:
        raise NoWorld(f"the seats hold {sum(counts)} unseen cards, but only {len(pool)} are unseen")
    seats = [seat for seat, count in enumerate(counts) if count]
    barred = [seat for seat in seats if forbidden[seat]]
    for _ in range(SHUFFLES if barred else 1):
        cards = shuffled(pool, rng)
        dealt = _slices(cards, counts)
        if all(not forbidden[seat].intersection(dealt[seat]) for seat in barred):
            return dealt, cards[sum(counts) :]
    for _ in range(GREEDY_DEALS):
        greedy = _most_constrained_first(shuffled(pool, rng), counts, forbidden)
        if greedy is not None:
            return greedy
    return _matching(shuffled(pool, rng), counts, forbidden, rng)


def shuffled(cards: Sequence[Card], rng: random.Random) -> list[Card]:
    """The cards in a uniformly random order: sorted by a random key each (`rng.random` is a C
    call; `rng.shuffle` draws each index in Python, about three times slower for a deck)."""
    keys = [rng.random() for _ in cards]
    return [cards[index] for index in sorted(range(len(cards)), key=keys.__getitem__)]


def _slices(cards: list[Card], counts: Sequence[int]) -> list[list[Card]]:
    hands, start = [], 0
    for count in counts:
        hands.append(cards[start : start + count])
        start += count
    return hands


def _most_constrained_first(
    cards: list[Card], counts: Sequence[int], forbidden: Sequence[frozenset[Card]]
) -> tuple[list[list[Card]], list[Card]] | None:
    """Seats with the least room first, each taking the first cards (of the shuffled pool) it may
    hold; None when a seat is left short."""
    left = cards
    hands: list[list[Card]] = [[] for _ in counts]

    def room(seat: int) -> int:
        return sum(1 for card in left if card not in forbidden[seat]) - counts[seat]

    for seat in sorted((seat for seat, count in enumerate(counts) if count), key=room):
        barred, need = forbidden[seat], counts[seat]
        taken: list[int] = []
        for index, card in enumerate(left):
            if card not in barred:
                taken.append(index)
                if len(taken) == need:
                    break
        if len(taken) < need:
            return None
        chosen = set(taken)
        hands[seat] = [left[index] for index in taken]
        left = [card for index, card in enumerate(left) if index not in chosen]
    return hands, left


def _matching(
    cards: list[Card], counts: Sequence[int], forbidden: Sequence[frozenset[Card]], rng: random.Random
) -> tuple[list[list[Card]], list[Card]]:
    """An exact placement: cards in shuffled order, each put in a seat (or the rest) with room,
    moving earlier cards along an augmenting path when every seat it may go to is full."""
    rest = len(counts)  # the rest is one more "seat" that may hold anything
    capacity = [*counts, len(cards) - sum(counts)]
    allowed = [
        [seat for seat in range(len(counts)) if counts[seat] and card not in forbidden[seat]] + [rest]
        for card in cards
    ]
    for options in allowed:
        rng.shuffle(options)
    holder: list[int | None] = [None] * len(cards)
    held: list[list[int]] = [[] for _ in capacity]
    for index in range(len(cards)):
        if not _augment(index, allowed, capacity, holder, held, set()):
            raise NoWorld("the unseen cards cannot be placed: the constraints contradict each other")
    hands = [[cards[index] for index in held[seat]] for seat in range(len(counts))]
    return hands, [cards[index] for index in held[rest]]


def _augment(
    index: int,
    allowed: list[list[int]],
    capacity: list[int],
    holder: list[int | None],
    held: list[list[int]],
    visited: set[int],
) -> bool:
    """Places card `index`, moving others along a path to a seat with room (Kuhn's algorithm)."""
    for seat in allowed[index]:
        if seat in visited:
            continue
        visited.add(seat)
        if len(held[seat]) < capacity[seat]:
            holder[index] = seat
            held[seat].append(index)
            return True
        for other in list(held[seat]):
            if _augment(other, allowed, capacity, holder, held, visited):
                held[seat].remove(other)
                held[seat].append(index)
                holder[index] = seat
                return True
    return False
