"""The stable public name of `referee.engine.games.oh7` for bots."""

from referee.engine.games.oh7 import *  # noqa: F403
