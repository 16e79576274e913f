"""The stable public name of `referee.engine.games.black_sevens` for bots."""

from referee.engine.games.black_sevens import *  # noqa: F403
