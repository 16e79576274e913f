"""What a player sees, for OpenSpiel: strings and tensors of a seat's Septet information state.

Both come from the engine's `information_state(state, seat)`, so nothing hidden can leak (RULES.md
§5), and the tensor is the PettingZoo observation of that seat (`referee.pettingzoo.encoding`),
written by the same encoder: one encoding, two libraries. Septet's information state is the
seat's whole view of the round so far (its hand, every bid, bet and card played, with who played
it) plus the public facts of the game (scores, rounds, the cards on the table), so it serves as
both OpenSpiel's information state and its observation: the two are the same string and tensor.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np

from referee.pettingzoo.encoding import Encoding

_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    """An information state class's fields, less the ones every state of a game shares."""
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = tuple(field.name for field in fields(kind) if field.name not in _CONSTANT)
        _FIELD_NAMES[kind] = names
    return names


_CONSTANT = frozenset(("game", "num_players", "num_seats", "options", "rounds", "target", "dummy"))


def describe(info: Any) -> str:
    """One line per information state: every field that can differ, `name=value`, in field order.

    Two seats' information states give the same string exactly when they are equal, which is
    what OpenSpiel's search keys its nodes by."""
    return " ".join(f"{name}={_plain(getattr(info, name))}" for name in _field_names(type(info)))


def _plain(value: Any) -> str:
    """Nested tuples as compact text: `((0, 'TH'), (1, '2H'))` -> `[0:TH 1:2H]`."""
    if isinstance(value, tuple):
        if len(value) == 2 and isinstance(value[0], int) and isinstance(value[1], str | tuple):
            return f"{value[0]}:{_plain(value[1])}"  # a (seat, card) play or (seat, set) pair
        return "[" + " ".join(_plain(item) for item in value) + "]"
    if value is None:
        return "-"
    return str(value)


class SeptetObserver:
    """OpenSpiel's Python observer protocol (`set_from`, `string_from`, `tensor`, `dict`) over the
    PettingZoo encoding; `dict` names the encoding's segments, shaped as its layout says."""

    def __init__(self, encoding: Encoding) -> None:
        self.encoding = encoding
        self.tensor = np.zeros(encoding.layout.size, np.float32)
        self.dict = {
            name: self.tensor[segment.start : segment.stop].reshape(segment.shape)
            for name, segment in encoding.layout.segments.items()
        }

    def set_from(self, state: Any, player: int) -> None:
        """Writes `player`'s information state in `state` into `tensor`."""
        self.tensor.fill(0)
        self.encoding.fill(state.information_state_of(player), self.tensor)

    def string_from(self, state: Any, player: int) -> str:
        return describe(state.information_state_of(player))
