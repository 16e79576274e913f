"""The worlds a seat cannot tell from the real one, for every game id (`worlds(info)`).

One module per game family reads an information state into constraints on the unseen cards and
builds engine states from placements of them: `bidding` (Oh Hell!, 7Up7Down), `oh7` (every Oh 7?
variant), `black_sevens`. `dealing` places cards under constraints; `base` holds `Worlds`;
`beliefs` models what the other players' bids say of their hands. Bots use these through
`referee.botkit.search`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from referee.botkit.worlds import bidding, black_sevens, oh7
from referee.botkit.worlds.base import Belief, Placement, Worlds
from referee.botkit.worlds.dealing import Constraints, NoWorld
from referee.engine.games.base import GameError

__all__ = ["Belief", "Constraints", "NoWorld", "Placement", "Worlds", "worlds"]

FAMILIES: dict[str, Callable[[Any], Worlds]] = {
    "oh-hell": bidding.worlds,
    "seven-up-seven-down": bidding.worlds,
    "oh7": oh7.worlds,
    "oh7-advanced": oh7.worlds,
    "oh7-duel": oh7.worlds,
    "black-sevens": black_sevens.worlds,
}
"""Game id -> the worlds of its information states."""


def worlds(info: Any) -> Worlds:
    """The worlds of a seat's information state (any game id); `GameError` for an unknown game."""
    family = FAMILIES.get(getattr(info, "game", None) or "")
    if family is None:
        raise GameError(f"no worlds for {getattr(info, 'game', info)!r} (games: {', '.join(FAMILIES)})")
    return family(info)
