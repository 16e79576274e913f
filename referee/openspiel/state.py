"""`SeptetState`: one playthrough of a Septet game, as OpenSpiel's `pyspiel.State`.

The state holds one `Position` (`referee.openspiel.position`) and nothing else, so OpenSpiel's
clone (a deep copy of the Python object's `__dict__`) shares it instead of copying a game, and its
serialization pickles it (the engine state and the draws of a deal in progress; the table by name).
`resample_from_infostate` draws a world the player cannot tell from this one with the search API's
world sampler (`referee.botkit.worlds`): every hidden card placed where the public history allows.
"""

from __future__ import annotations

import random
from typing import Any

import pyspiel

from referee.botkit.worlds import worlds
from referee.openspiel.chance import outcome_name
from referee.openspiel.observer import describe
from referee.openspiel.position import Position

SEED_RANGE = 2**62
"""A resampled world's generator is seeded from OpenSpiel's sampler scaled to this range."""


class SeptetState(pyspiel.State):  # type: ignore[misc]  # pyspiel ships no type information
    """A Septet game in progress, for OpenSpiel's algorithms and bots."""

    def __init__(self, game: Any, position: Position) -> None:
        super().__init__(game)
        self.at = position

    # The game so far

    def current_player(self) -> int:
        """The seat to decide, CHANCE during a deal, TERMINAL once the game is over."""
        at = self.at
        if at.decision is None:
            return int(pyspiel.PlayerId.TERMINAL)
        if at.plan is not None:
            return int(pyspiel.PlayerId.CHANCE)
        return at.mover

    def is_terminal(self) -> bool:
        return self.at.decision is None

    # Asked from Python, these answer without a trip through OpenSpiel's C++ State (which would
    # call back into the methods above): the same answers, a few microseconds sooner each. C++
    # callers (OpenSpiel's C++ algorithms and checks) go through `current_player` and
    # `_legal_actions` as before.

    def is_chance_node(self) -> bool:
        return self.at.plan is not None

    def legal_actions(self, player: int | None = None) -> list[int]:
        """The legal action ids of `player` (default: the one to move); at chance, the outcomes."""
        at = self.at
        if at.plan is not None:
            chance = player is None or player == pyspiel.PlayerId.CHANCE
            return [outcome for outcome, _ in at.outcomes()] if chance else []
        if at.decision is None or player not in (None, at.mover):
            return []
        return list(at.legal_ids())

    def _legal_actions(self, player: int) -> list[int]:
        """The player's legal action ids, ascending (none when it is not the player's turn)."""
        at = self.at
        if player != at.mover or at.plan is not None:
            return []
        return at.legal_ids()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The next draw's outcomes (cards or seats) and their probabilities."""
        if self.at.plan is None:
            raise pyspiel.SpielError("chance_outcomes: not a chance node")
        return self.at.outcomes()

    def _apply_action(self, action: int) -> None:
        self.at = self.at.after(action)

    def _action_to_string(self, player: int, action: int) -> str:
        at = self.at
        if player == pyspiel.PlayerId.CHANCE and at.plan is not None:
            return outcome_name(at.plan, at.drawn, action)
        engine_action = at.legal().get(action) if player == at.mover else None
        if engine_action is None:
            return f"action {action}"
        kind = at.decision.kind.value if at.decision is not None else "act"
        if isinstance(engine_action, tuple):
            return f"{kind} {' '.join(engine_action)}"
        return f"{kind} {engine_action}"

    def returns(self) -> list[float]:
        """Each player's return: 0 until the end, then from the result (the game's `returns`)."""
        at = self.at
        if at.decision is not None:
            return [0.0] * at.table.num_players
        result = at.table.game.result(at.engine)
        assert result is not None
        return at.table.payoffs(result)

    def information_state_of(self, player: int) -> Any:
        """The engine's information state of the player's seat (RULES.md §5)."""
        return self.at.information_state(player)

    def engine_state(self) -> Any:
        """The engine state (during a deal: the one before it), for engine-level tools."""
        return self.at.engine

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> SeptetState:
        """A state the player cannot tell from this one: the hidden cards placed at random where
        the public history allows (the bot kit's world sampler), seeded from OpenSpiel's sampler."""
        at = self.at
        if at.plan is not None or at.decision is None:
            raise pyspiel.SpielError("resample_from_infostate: only between deals, before the game ends")
        rng = random.Random(int(float(probability_sampler()) * SEED_RANGE))
        world = worlds(self.information_state_of(player_id)).sample(rng)
        return SeptetState(self.get_game(), Position(at.table, world, mover=at.mover))

    def __str__(self) -> str:
        """Every seat's view, one line each (for debugging: it shows every hand)."""
        at = self.at
        return "\n".join(describe(at.information_state(seat)) for seat in range(at.table.num_players))
