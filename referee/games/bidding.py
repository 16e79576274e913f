"""The stable public name of `referee.engine.games.bidding` for bots."""

from referee.engine.games.bidding import *  # noqa: F403
