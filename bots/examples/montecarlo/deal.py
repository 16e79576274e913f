"""Dealing the unseen cards among the seats that hold them, respecting what is known of each hand.

Every game family describes its unseen cards the same way: a pool of cards nobody has shown, how
many of them each seat holds, cards a seat is known to hold (an Oh 7? bet card not yet played),
and cards a seat cannot hold (a suit it failed to follow). `deal_hidden` deals the pool at random
under those constraints; the rest of the pool is left over (the discard, the Dummy's pile).
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence

ATTEMPTS = 50
"""Random deals tried before the constraints that cannot be met together are dropped."""


def deal_hidden(
    pool: Sequence[str],
    counts: Mapping[int, int],
    rng: random.Random,
    *,
    forbidden: Mapping[int, Collection[str]] | None = None,
) -> tuple[dict[int, list[str]], list[str]]:
    """Deals `counts[seat]` cards of `pool` to each seat, none from `forbidden[seat]`.

    The most constrained seat is served first; when a random deal leaves a seat short, the deal is
    tried again, and after ATTEMPTS failures the constraints are dropped (a world slightly off is
    better than no world; with the real deal always possible this is rare). Returns the hands and
    the cards left over, in random order.
    """
    forbidden = forbidden or {}
    for attempt in range(ATTEMPTS + 1):
        rules = forbidden if attempt < ATTEMPTS else {}
        dealt = _try_deal(pool, counts, rules, rng)
        if dealt is not None:
            return dealt
    raise AssertionError("a deal without constraints cannot fail when the pool is large enough")


def _try_deal(
    pool: Sequence[str],
    counts: Mapping[int, int],
    forbidden: Mapping[int, Collection[str]],
    rng: random.Random,
) -> tuple[dict[int, list[str]], list[str]] | None:
    left = list(pool)
    rng.shuffle(left)

    def room(seat: int) -> int:
        barred = forbidden.get(seat, ())
        return sum(1 for card in left if card not in barred) - counts[seat]

    hands: dict[int, list[str]] = {}
    for seat in sorted(counts, key=room):
        barred = forbidden.get(seat, ())
        allowed = [index for index, card in enumerate(left) if card not in barred]
        if len(allowed) < counts[seat]:
            return None
        chosen = set(allowed[: counts[seat]])  # `left` is shuffled: the first allowed are random
        hands[seat] = [left[index] for index in sorted(chosen)]
        left = [card for index, card in enumerate(left) if index not in chosen]
    return hands, left
