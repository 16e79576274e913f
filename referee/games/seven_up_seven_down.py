"""The stable public name of `referee.engine.games.seven_up_seven_down` for bots."""

from referee.engine.games.seven_up_seven_down import *  # noqa: F403
