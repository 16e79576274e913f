"""Which cards an event of a full replay shows the whole table (RULES.md §5), derived from the
rules rather than from the live filter that tests check against it."""

from __future__ import annotations

from typing import Any

REVEALING = {
    "play": ("card", "cards", "turned"),
    "trick": ("plays",),
    "hand": ("cards", "plays"),
    "bets": ("cards",),
    "leader": ("dummy_up",),
    "deal": ("trump_card",),
    "round_end": ("last_cards", "bet_cards"),
}
"""The events that show cards to every seat, and the keys where they stand."""
LASTING = ("last_cards",)
"""Keys of cards that stay public for the rest of the game (Black Sevens' last cards, R-3.9)."""


def strings_in(value: Any) -> set[str]:
    """Every string anywhere in a value (lists and tuples walked; mappings' values)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, list | tuple):
        return {code for item in value for code in strings_in(item)}
    if isinstance(value, dict):
        return {code for item in value.values() for code in strings_in(item)}
    return set()


def made_public(event: dict[str, Any]) -> set[str]:
    """The card codes `event` shows the whole table (any string it names there)."""
    return {code for key in REVEALING.get(event["type"], ()) for code in strings_in(event.get(key))}


def kept_public(event: dict[str, Any]) -> set[str]:
    """The card codes `event` shows that stay public after the round ends."""
    return {code for key in LASTING for code in strings_in(event.get(key))}
