"""Septet's games as PettingZoo environments, for agents that learn (docs/pettingzoo.md).

    from referee.pettingzoo import env
    table = env("oh-hell", num_players=4)
    table.reset(seed=1)

One AEC environment per game id (`GAME_IDS`), with a fixed `Discrete` action space and an
`action_mask` in every observation, a fixed-size float32 encoding of the seat's information state
(`referee.pettingzoo.encoding`; `python -m referee.pettingzoo` prints every layout), chance inside
the environment, seeded by `reset(seed=...)`. `EngineBot` seats the engine's built-in bots (or any
engine `Player`) at a table, to evaluate or train an agent against them.

This room is a consumer of the engine: it uses the engine's public verbs and information states
and imports nothing of the bot kit, the tools or the wire. It needs the optional extra
`pettingzoo` (PettingZoo, Gymnasium, NumPy): `pip install -e '.[pettingzoo]'`.
"""

from __future__ import annotations

from typing import Any

try:
    import gymnasium  # noqa: F401
    import numpy  # noqa: F401
    import pettingzoo  # noqa: F401
except ImportError as missing:
    raise ImportError(
        f"referee.pettingzoo needs the optional extra 'pettingzoo' ({missing.name} is not installed): "
        "pip install -e '.[pettingzoo]'"
    ) from missing

from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from referee.engine.games import all_games
from referee.pettingzoo.encoding import Encoding, Layout, encoding_for
from referee.pettingzoo.env import REWARD_MODES, EngineBot, SeptetEnv, default_players

GAME_IDS: tuple[str, ...] = tuple(all_games())
"""Every game id Septet plays; each is an environment."""


def raw_env(game_id: str, **kwargs: Any) -> SeptetEnv:
    """The environment itself, without PettingZoo's order-enforcing wrapper."""
    return SeptetEnv(game_id, **kwargs)


def env(game_id: str, **kwargs: Any) -> Any:
    """The environment of `game_id`, wrapped as PettingZoo's classic environments are (calls out
    of order, such as `step` before `reset`, raise). Keywords: `num_players`, `options`, `reward`
    ("points" or "rank"), `render_mode` (None, "human" or "ansi")."""
    return OrderEnforcingWrapper(SeptetEnv(game_id, **kwargs))


__all__ = [
    "GAME_IDS",
    "REWARD_MODES",
    "Encoding",
    "EngineBot",
    "Layout",
    "SeptetEnv",
    "default_players",
    "encoding_for",
    "env",
    "raw_env",
]
