"""Card codes (RULES.md §0) for the 52-card games, with the lookup tables the games rank by.

Cards are their two-character codes (`TH`, `7S`, `AC`): readable in replays, the protocol and
tests, hashable, and cheap to compare through the tables below. Oh 7?'s own deck lives in
`referee.engine.games.oh7`.
"""

from __future__ import annotations

from referee.engine.games.base import Card

RANKS = "23456789TJQKA"
"""Ranks from low to high (aces high)."""

SUITS = "SHDC"
"""The four suits of the 52-card deck, in the order decks are built."""

DECK_52: tuple[Card, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)

RANK_VALUE: dict[Card, int] = {card: RANKS.index(card[0]) + 2 for card in DECK_52}
"""2..14 by rank: the order of tricks in Oh Hell! and 7Up7Down (aces high)."""


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
