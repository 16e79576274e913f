"""The stable public name of `referee.engine.games.oh7_dummy` for bots."""

from referee.engine.games.oh7_dummy import *  # noqa: F403
