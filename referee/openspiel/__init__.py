"""Septet's games as OpenSpiel games, for OpenSpiel's algorithms and bots (docs/openspiel.md).

    import pyspiel
    import referee.openspiel  # registers every game id

    game = pyspiel.load_game("septet_oh_hell", {"players": 4})
    state = game.new_initial_state()

Importing the package registers one OpenSpiel Python game per game id (`GAME_NAMES`, `septet_`
+ the id with `_` for `-`), written over the engine's public verbs: explicit chance nodes (a deal
is drawn card by card, `chance`), the PettingZoo encoding's action numbering and observation
tensors, information state strings from the engine's information states, returns from the result
(ranks or scores), `resample_from_infostate` from the bot kit's world sampler, and cheap clones
(`position`). `bots` seats OpenSpiel's bots (ISMCTS, MCTS, random) as Septet players.

It needs the optional extra `openspiel` (OpenSpiel, and the `pettingzoo` extra's encodings):
`pip install -e '.[openspiel]'`.
"""

from __future__ import annotations

try:
    import numpy  # noqa: F401
    import pyspiel  # noqa: F401
except ImportError as missing:
    raise ImportError(
        f"referee.openspiel needs the optional extra 'openspiel' ({missing.name} is not installed): "
        "pip install -e '.[openspiel]'"
    ) from missing

from referee.openspiel.game import SeptetGame, register_all, short_name
from referee.openspiel.position import RETURNS
from referee.openspiel.state import SeptetState

GAME_NAMES: tuple[str, ...] = register_all()
"""The OpenSpiel name of every game id, in the engine's order (`septet_oh7`, ...)."""

__all__ = ["GAME_NAMES", "RETURNS", "SeptetGame", "SeptetState", "short_name"]
