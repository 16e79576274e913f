"""The stable public name of `referee.engine.games.base` for bots."""

from referee.engine.games.base import *  # noqa: F403
