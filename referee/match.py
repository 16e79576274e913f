"""`play_match`: the one game loop. One game, one player per seat, a replay of everything.

The loop samples chance from one `random.Random(seed)`, asks each seat for its decisions with
only that seat's information state, applies forced decisions itself (R-0.2), and applies the
forfeit policy of DESIGN.md: a player that raises, answers an illegal action or runs out of time
forfeits; its seat is played by the game's greedy policy for the rest of the game and ranks below
every seat that did not forfeit. Player adapters (the gRPC player) report trouble by raising
`PlayerTimeout` or `PlayerError`; the loop only sees outcomes (DONE, INVALID, ERROR, TIMEOUT).
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import referee
from referee.games import get_game
from referee.games.base import CHANCE, Action, Event, Game, Result, competition_ranks
from referee.players import Player

REPLAY_FORMAT = "septet-replay/1"


class Status(StrEnum):
    """How a seat's decision went (the names kaggle-environments uses)."""

    DONE = "DONE"
    INVALID = "INVALID"  # answered something that is not a legal action
    ERROR = "ERROR"  # raised, crashed, answered garbage
    TIMEOUT = "TIMEOUT"  # ran past its decision time and its bank


class PlayerTimeout(Exception):
    """Raised by a player adapter when the player missed its deadline."""


class PlayerError(Exception):
    """Raised by a player adapter when the player failed (crashed, garbage answer)."""


@dataclass(frozen=True)
class TimeControl:
    """Seconds a seat may think per decision, plus a bank it may draw on over the game."""

    per_decision: float = 1.0
    bank: float = 10.0

    def to_json(self) -> dict[str, float]:
        return {"per_decision": self.per_decision, "bank": self.bank}


@dataclass(frozen=True)
class Forfeit:
    """A seat that forfeited: why, and at which replay event."""

    seat: int
    status: Status
    reason: str
    event_index: int

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "status": str(self.status),
            "reason": self.reason,
            "event": self.event_index,
        }


@dataclass
class MatchResult:
    """The outcome of `play_match`: the final result (forfeits applied) and the replay."""

    result: Result
    game_result: Result
    forfeits: list[Forfeit]
    replay: dict[str, Any]
    decisions: int = 0
    forced: int = 0
    seconds: float = 0.0
    names: list[str] = field(default_factory=list)


def rank_with_forfeits(result: Result, forfeited: Sequence[int]) -> Result:
    """Ranks where every forfeited seat is below every seat that did not forfeit (DESIGN.md).

    Among forfeited seats, the game's own order is kept. An aborted game stays unranked.
    """
    if result.ranks is None or not forfeited:
        return result
    lost = set(forfeited)
    keys = [(seat not in lost, -rank) for seat, rank in enumerate(result.ranks)]
    return Result(result.scores, competition_ranks(keys), result.aborted, result.reason)


def result_to_json(result: Result) -> dict[str, Any]:
    return {
        "scores": list(result.scores),
        "ranks": None if result.ranks is None else list(result.ranks),
        "aborted": result.aborted,
        "reason": result.reason,
    }


class _Seats:
    """Asks the players, keeps their time banks, and records forfeits."""

    def __init__(
        self,
        game: Game,
        players: Sequence[Player],
        time_control: TimeControl | None,
        clock: Callable[[], float],
        events: list[Event],
    ) -> None:
        self.game = game
        self.players = players
        self.time_control = time_control
        self.clock = clock
        self.events = events
        self.banks = [time_control.bank if time_control else 0.0] * len(players)
        self.forfeits: dict[int, Forfeit] = {}
        self.decisions = 0

    def ask(self, seat: int, info: Any, legal: tuple[Action, ...]) -> tuple[Action, int | None]:
        """The seat's action (its fallback's after a forfeit) and its thinking time in µs."""
        if seat in self.forfeits:
            return self.game.greedy(info, legal), None
        self.decisions += 1
        clock = self.clock
        started = clock()
        try:
            action = self.players[seat].decide(info, legal)
        except PlayerTimeout as error:
            return self._forfeit(seat, Status.TIMEOUT, str(error) or "missed its deadline", info, legal)
        except Exception as error:  # a bot's bug must not stop the other seats' game
            reason = f"raised {type(error).__name__}: {error}"
            return self._forfeit(seat, Status.ERROR, reason, info, legal)
        elapsed = clock() - started
        if self.time_control is not None:
            over = elapsed - self.time_control.per_decision
            if over > self.banks[seat]:
                reason = f"took {elapsed:.3f} s, more than its decision time and bank allowed"
                return self._forfeit(seat, Status.TIMEOUT, reason, info, legal)
            if over > 0:
                self.banks[seat] -= over
        canonical = _legal_match(action, legal)
        if canonical is None:
            shown = repr(action)
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            reason = f"answered {shown}, which is not one of the {len(legal)} legal actions"
            return self._forfeit(seat, Status.INVALID, reason, info, legal)
        return canonical, round(elapsed * 1_000_000)

    def _forfeit(
        self, seat: int, status: Status, reason: str, info: Any, legal: tuple[Action, ...]
    ) -> tuple[Action, None]:
        forfeit = Forfeit(seat, status, reason, len(self.events))
        self.forfeits[seat] = forfeit
        self.events.append({"type": "forfeit", **forfeit.to_json()})
        return self.game.greedy(info, legal), None


def _legal_match(action: Any, legal: tuple[Action, ...]) -> Action | None:
    """The legal action equal to `action` and of the same type (True is not the bid 1)."""
    try:
        index = legal.index(action)
    except (ValueError, TypeError):
        return None
    canonical = legal[index]
    return canonical if type(canonical) is type(action) else None


def play_match(
    game: Game | str,
    players: Sequence[Player],
    *,
    seed: int,
    options: Mapping[str, Any] | None = None,
    time_control: TimeControl | None = None,
    clock: Callable[[], float] = time.perf_counter,
    match_id: str | None = None,
) -> MatchResult:
    """Plays one game of `game` with `players` in seat order; returns its result and replay.

    `clock` times each decision (inject a deterministic one for byte-identical replays).
    `time_control` None means in-process players are not timed out.
    """
    if isinstance(game, str):
        game = get_game(game)
    checked_options = game.check_options(options)
    state = game.start(len(players), checked_options)
    rng = random.Random(seed)
    events: list[Event] = []
    seats = _Seats(game, players, time_control, clock, events)
    to_move, legal_actions, apply = game.to_move, game.legal_actions, game.apply
    information_state, sample_chance = game.information_state, game.sample_chance
    forced = 0
    started = time.perf_counter()
    for seat, player in enumerate(players):
        _notify(player, "start_match", {"seat": seat, "game": game.id, "seed": seed})

    while (decision := to_move(state)) is not None:
        seats_asked = decision.seats
        if not seats_asked:
            outcome = sample_chance(state, rng)
            state = apply(state, CHANCE, outcome)
            events.append({"type": "chance", "outcome": outcome})
            events.extend(state.events)
            continue
        # Every seat of a simultaneous decision is asked before any answer is applied.
        answers: list[tuple[int, Action, str, int | bool]] = []
        for seat in seats_asked:
            legal = legal_actions(state, seat)
            if len(legal) == 1:
                forced += 1
                answers.append((seat, legal[0], "forced", True))
            else:
                action, micros = seats.ask(seat, information_state(state, seat), legal)
                answers.append(
                    (seat, action, "us", micros) if micros is not None else (seat, action, "fallback", True)
                )
        kind = decision.kind.value
        for seat, action, how, value in answers:
            state = apply(state, seat, action)
            events.append({"type": "action", "seat": seat, "kind": kind, "action": action, how: value})
            events.extend(state.events)

    game_result = game.result(state)
    assert game_result is not None, "a game with no decision left must have a result"
    forfeited = sorted(seats.forfeits)
    result = rank_with_forfeits(game_result, forfeited)
    for player in players:
        _notify(player, "end_match", result_to_json(result))
    names = [player.name for player in players]
    replay = {
        "format": REPLAY_FORMAT,
        "engine": f"septet {referee.__version__}",
        "match_id": match_id,
        "game": game.id,
        "options": checked_options,
        "seed": seed,
        "seats": [{"seat": seat, "name": name} for seat, name in enumerate(names)],
        "time_control": time_control.to_json() if time_control else None,
        "events": events,
        "forfeits": [seats.forfeits[seat].to_json() for seat in forfeited],
        "result": result_to_json(result),
    }
    return MatchResult(
        result=result,
        game_result=game_result,
        forfeits=[seats.forfeits[seat] for seat in forfeited],
        replay=replay,
        decisions=seats.decisions,
        forced=forced,
        seconds=time.perf_counter() - started,
        names=names,
    )


def _notify(player: Player, hook: str, payload: dict[str, Any]) -> None:
    """Calls an optional player hook (start_match / end_match); a failing hook is ignored."""
    method = getattr(player, hook, None)
    if method is None:
        return
    with contextlib.suppress(Exception):  # a courtesy: a bot's failure here changes nothing
        method(payload)
