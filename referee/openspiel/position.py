"""`Table` and `Position`: the facts of one loaded game, and one point of a playthrough.

A `Position` wraps an engine state, which is a value (`apply` returns a new one and never changes
its argument), plus the draws made so far of a deal in progress. It is never changed once made:
an action makes a new one. So an OpenSpiel state holds a reference to one, and a clone shares it
(`__deepcopy__` returns the position itself): cloning costs what OpenSpiel's own bookkeeping
costs, not a copy of the game. What a position works out on demand (legal actions, the mover's
information state) it keeps, which clones then share too: it is the same for every copy.
"""

from __future__ import annotations

from functools import cache
from types import SimpleNamespace
from typing import Any

from referee.engine.games import get_game
from referee.engine.games.base import CHANCE, Action, Decision, DecisionKind, Game, Result
from referee.openspiel.chance import DealPlan, plan_deal
from referee.pettingzoo.encoding import BlackSevensEncoding, Encoding, encoding_for

_PHASES = {kind: SimpleNamespace(phase=kind.value) for kind in DecisionKind}
"""A decision kind as the `phase` an information state would show (Oh 7?'s action ids read it)."""

RETURNS = ("ranks", "scores")
"""What `returns()` pays: "ranks" (+1 for rank 1 down to -1 for the last, evenly spaced, as the
PettingZoo environment's rank reward) or "scores" (the final scores, negated where lower is
better, so more is always better)."""
SCORE_BOUND = 100_000.0
"""Bound of every final score (the PettingZoo encoding's): OpenSpiel's utility range in "scores"."""


class Table:
    """One game id at one seat count with its options: the engine game, its encoding, returns."""

    def __init__(
        self, game_id: str, num_players: int, options: tuple[tuple[str, Any], ...], returns: str
    ) -> None:
        self.game: Game = get_game(game_id)
        self.num_players = num_players
        self.options = dict(options)
        self.returns = returns
        self.encoding: Encoding = encoding_for(self.game, num_players)
        self.ids_need_info = isinstance(self.encoding, BlackSevensEncoding)
        """Black Sevens numbers a set by the positions of its cards in the hand, which the
        information state gives; the other encodings read at most the kind of decision."""
        self.key = (game_id, num_players, options, returns)
        self.initial = Position(self, self.game.start(num_players, self.options))
        """The game before its first deal: every new state starts from this one position (and
        OpenSpiel clones a state by making a new one, then copying the position in)."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its key (a serialized state names its table, never copies it)."""
        return table_of, self.key

    def id_context(self, decision: Decision | None) -> Any:
        """What the encoding's `action_id` reads of the decision when it needs no information
        state: Oh 7?'s phase (a card is a bet or a play), nothing for the exact-bid games."""
        return _PHASES[decision.kind] if decision is not None else None

    def payoffs(self, result: Result) -> list[float]:
        """Every player's return from a finished game (an aborted one pays 0 to all)."""
        n = self.num_players
        if self.returns == "scores":
            sign = 1.0 if self.game.higher_is_better else -1.0
            return [sign * result.scores[seat] for seat in range(n)]
        if result.ranks is None:
            return [0.0] * n
        return [1.0 - 2.0 * (result.ranks[seat] - 1) / (n - 1) for seat in range(n)]

    def utility_bounds(self) -> tuple[float, float]:
        return (-SCORE_BOUND, SCORE_BOUND) if self.returns == "scores" else (-1.0, 1.0)


@cache
def table_of(game_id: str, num_players: int, options: tuple[tuple[str, Any], ...], returns: str) -> Table:
    """The one `Table` of these facts (states of one loaded game share it)."""
    return Table(game_id, num_players, options, returns)


class Position:
    """An engine state, or a deal in progress: the engine state before it and the draws so far."""

    __slots__ = (
        "_info", "_legal", "_sorted", "decision", "drawn", "engine", "mover", "plan", "pool", "table",
    )  # fmt: skip

    def __init__(
        self,
        table: Table,
        engine: Any,
        plan: DealPlan | None = None,
        drawn: tuple[int, ...] = (),
        mover: int | None = None,
        pool: tuple[int, ...] | None = None,
    ) -> None:
        self.table = table
        self.engine = engine
        self.drawn = drawn
        self.decision: Decision | None = table.game.to_move(engine)
        if plan is None and self.decision is not None and self.decision.is_chance:
            plan = plan_deal(table.game, engine)
        self.plan = plan
        self.pool = plan.pool if pool is None and plan is not None else (pool or ())
        """The cards a deal in progress has yet to draw (outcome ids, one per copy)."""
        seats = self.decision.seats if self.decision is not None else ()
        self.mover = (mover if mover in seats else seats[0]) if seats else -1
        """The seat asked next: -1 at chance or the end. Of Oh 7?'s simultaneous bettors the first,
        unless `mover` names another (a world sampled for that seat asks it, whoever else has
        yet to bet: the engine takes simultaneous bets in any order)."""
        self._legal: dict[int, Action] | None = None
        self._sorted: list[int] | None = None
        self._info: Any = None

    def __deepcopy__(self, memo: dict[int, Any]) -> Position:
        return self  # never changed once made: a clone may share it

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return Position, (self.table, self.engine, self.plan, self.drawn, self.mover, self.pool)

    def information_state(self, seat: int) -> Any:
        if seat == self.mover:
            if self._info is None:
                self._info = self.table.game.information_state(self.engine, seat)
            return self._info
        return self.table.game.information_state(self.engine, seat)

    def legal(self) -> dict[int, Action]:
        """The mover's legal actions by action id (the PettingZoo encoding's numbering)."""
        if self._legal is None:
            seat, table = self.mover, self.table
            context = self.information_state(seat) if table.ids_need_info else table.id_context(self.decision)
            action_id = table.encoding.action_id
            legal = table.game.legal_actions(self.engine, seat)
            self._legal = {action_id(context, action): action for action in legal}
        return self._legal

    def legal_ids(self) -> list[int]:
        """The mover's legal action ids, ascending (one list, kept: OpenSpiel copies it out)."""
        if self._sorted is None:
            self._sorted = sorted(self.legal())
        return self._sorted

    def outcomes(self) -> list[tuple[int, float]]:
        assert self.plan is not None
        return self.plan.outcomes(self.drawn, self.pool)

    def after(self, action: int) -> Position:
        """The position after an action id (a player's) or an outcome id (chance's)."""
        table, plan = self.table, self.plan
        if plan is not None:
            drawn = (*self.drawn, action)
            if len(drawn) == plan.length:
                return Position(table, table.game.apply(self.engine, CHANCE, plan.outcome(drawn)))
            pool = self.pool if plan.draws_seat(self.drawn) else plan.without(self.pool, action)
            return self._dealing(drawn, pool)
        return Position(table, table.game.apply(self.engine, self.mover, self.legal()[action]))

    def _dealing(self, drawn: tuple[int, ...], pool: tuple[int, ...]) -> Position:
        """The next node of this deal: the same engine state and decision, one more draw."""
        new = Position.__new__(Position)
        new.table, new.engine, new.decision, new.plan = self.table, self.engine, self.decision, self.plan
        new.drawn, new.pool, new.mover = drawn, pool, -1
        new._legal = new._sorted = new._info = None
        return new
