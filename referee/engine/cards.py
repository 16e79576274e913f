"""Card codes (RULES.md §0) for the 52-card games, with the lookup tables the games rank by.

Cards are their two-character codes (`TH`, `7S`, `AC`): readable in replays, the protocol and
tests, hashable, and cheap to compare through the tables below. Oh 7?'s own deck lives in
`referee.engine.games.oh7`.
"""

from __future__ import annotations

import random
from typing import Final

from referee.engine.games.base import Card

RANKS = "23456789TJQKA"
"""Ranks from low to high (aces high)."""

SUITS = "SHDC"
"""The four suits of the 52-card deck, in the order decks are built."""

DECK_52: Final[tuple[Card, ...]] = tuple(rank + suit for suit in SUITS for rank in RANKS)

RANK_VALUE: Final[dict[Card, int]] = {card: RANKS.index(card[0]) + 2 for card in DECK_52}
"""2..14 by rank: the order of tricks in Oh Hell! and 7Up7Down (aces high)."""

DECK_INDEX: Final[dict[Card, int]] = {card: index for index, card in enumerate(DECK_52)}
"""A card's place in `DECK_52` (suits S H D C, then rank from 2 to ace): how hands are sorted."""


def suit_of(card: Card) -> str:
    """The suit letter of a 52-card code."""
    return card[1]


def parse_cards(text: str) -> tuple[Card, ...]:
    """`"8D qh as"` -> `("8D", "QH", "AS")`; accepts `10` for `T`. Raises ValueError when unknown."""
    cards = []
    for word in text.replace(",", " ").split():
        code = word.upper().replace("10", "T")
        if code not in RANK_VALUE:
            raise ValueError(f"not a card code: {word!r} (expected e.g. TH, 7S, AC)")
        cards.append(code)
    return tuple(cards)


def shuffled_order(count: int, rng: random.Random) -> list[int]:
    """`list(range(count))` shuffled exactly as `rng.shuffle` shuffles it: the same draws from
    the RNG, the same permutation. So `[DECK_52[i] for i in shuffled_order(52, rng)]` is the deck
    `rng.shuffle(list(DECK_52))` makes, and a seed deals the same cards as it always did.

    Why not `rng.shuffle`: its loop runs in Python, a third of a deal's cost. For a plain
    `random.Random` the same Fisher-Yates draws run here (compiled with the engine); a subclass,
    or a Python whose `shuffle` draws differently (checked once), gets `rng.shuffle` itself.
    """
    order = list(range(count))
    if type(rng) is not random.Random or not _draws_like_shuffle():
        rng.shuffle(order)
        return order
    getrandbits = rng.getrandbits
    for i in range(count - 1, 0, -1):
        below = i + 1
        bits = below.bit_length()
        j = getrandbits(bits)
        while j >= below:  # as random.Random._randbelow_with_getrandbits draws
            j = getrandbits(bits)
        order[i], order[j] = order[j], order[i]
    return order


_checked: list[bool] = []


def _draws_like_shuffle() -> bool:
    """Whether the draws above are this Python's `Random.shuffle` (compared once, on a copy)."""
    if not _checked:
        _checked.append(True)  # the comparison itself runs the fast path
        expected = list(range(52))
        random.Random(1).shuffle(expected)
        _checked[0] = shuffled_order(52, random.Random(1)) == expected
    return _checked[0]
