"""The stable public name of `referee.engine.games.oh_hell` for bots."""

from referee.engine.games.oh_hell import *  # noqa: F403
