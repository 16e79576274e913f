"""`play_match`: the one game loop. One game, one player per seat, a replay of everything.

The loop samples chance from one `random.Random(seed)`, asks each seat for its decisions with
only that seat's information state, and applies the forfeit policy of DESIGN.md: a player that
raises, answers an illegal action or runs out of time (its decision time and bank, or its budget
for the whole match) forfeits; its seat is played by the game's greedy policy for the rest of the
game and ranks below every seat that did not forfeit.

Forced decisions (R-0.2, one legal action) are applied by the loop itself for in-process players,
but a bot elsewhere (a turn-aware player) is asked them like any other decision: if they were
skipped, the gap before a bot's next request would tell it whether the seats between had a choice.

Player adapters (the gRPC player) report trouble by raising `PlayerTimeout` or `PlayerError`;
the loop only sees outcomes (DONE, INVALID, ERROR, TIMEOUT).
"""

from __future__ import annotations

import contextlib
import random
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import referee
from referee.engine.games import get_game
from referee.engine.games.base import (
    CHANCE,
    Action,
    DecisionKind,
    Event,
    Game,
    GameError,
    Result,
    competition_ranks,
    rebuilt_by_init,
)
from referee.engine.players import Player

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


class PlayerInvalid(Exception):
    """Raised by a player adapter when the player's answer is not one of the legal actions."""


MATCH_DECISIONS = 60
"""Decision times a seat's whole-match budget holds when no `match_seconds` is given: a game
asks a seat up to about 130 decisions, so a bot may think its full decision time on about half
of them (the Monte-Carlo example spends 0.4 of it), and one that stalls on every decision
forfeits instead of holding a worker for the whole game (docs/rules.md, Forfeits)."""


def new_match_id() -> str:
    """A fresh match id for a bot to see: random, so it says nothing of seed, rotation or kind."""
    return secrets.token_hex(8)


@dataclass(frozen=True)
class TimeControl:
    """Seconds a seat may think per decision, plus a bank it may draw on over the game, within a
    budget for the whole match (`match_seconds`; by default bank + MATCH_DECISIONS decision times),
    which bounds a match's wall time by its time control."""

    per_decision: float = 1.0
    bank: float = 10.0
    match_seconds: float | None = None

    @property
    def seat_budget(self) -> float:
        """Seconds one seat may think over the whole match, all decisions together."""
        if self.match_seconds is not None:
            return self.match_seconds
        return self.bank + MATCH_DECISIONS * self.per_decision

    def to_json(self) -> dict[str, float]:
        return {"per_decision": self.per_decision, "bank": self.bank, "match_seconds": self.seat_budget}

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)


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

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)


@dataclass(frozen=True)
class MatchStart:
    """Told to each player (its optional `start_match` hook) before the first decision."""

    match_id: str
    game: str
    seat: int
    num_players: int
    options: Mapping[str, Any]
    seat_names: Sequence[str]
    time_control: TimeControl | None

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)


@dataclass(frozen=True)
class MatchEnd:
    """Told to each player (its optional `end_match` hook) once the game is over."""

    match_id: str
    result: Result
    forfeits: Sequence[Forfeit]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)


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


@dataclass(frozen=True, slots=True)
class Turn:
    """The context of one decision, for players that talk to a bot elsewhere (ids, deadlines)."""

    match_id: str
    game: str
    seat: int
    kind: DecisionKind
    decision_time: float | None
    """Seconds this decision may take before the bank is drawn on; None when untimed."""
    bank_time: float | None
    """Seconds left in the seat's bank for the rest of the game; None when untimed."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)


class TurnAwarePlayer(Protocol):
    """A player that wants each decision's context (the gRPC player): `decide_turn` is called
    instead of `decide`. With `concurrent = True`, simultaneous decisions are asked in parallel.
    """

    name: str
    concurrent: bool

    def decide_turn(self, turn: Turn, info_state: Any, legal_actions: tuple[Action, ...]) -> Action: ...


@dataclass(frozen=True, slots=True)
class SeatClock:
    """One asked seat's clock when it is asked: seconds for this decision before its bank is
    drawn on, and the bank left (None for both when the seat is untimed)."""

    seat: int
    decision_time: float | None
    bank_time: float | None

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)


@dataclass(frozen=True, slots=True)
class Asking:
    """A decision the loop is about to ask: its kind and each asked seat's clock (a forfeited
    seat, played by the fallback policy, is not asked)."""

    kind: DecisionKind
    clocks: tuple[SeatClock, ...]

    @property
    def seats(self) -> tuple[int, ...]:
        return tuple([clock.seat for clock in self.clocks])

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)


class MatchObserver(Protocol):
    """Watches a match as it is played (the platform's live stream): `step` is called with the
    replay events that happened since its last call, just before the loop asks seats a decision
    (`asking`), and once more when the game is over (`asking` None). It runs on the loop's
    thread, so it must be quick; what it raises is ignored (a viewer must never stop a match)."""

    def step(self, events: Sequence[Event], asking: Asking | None) -> None: ...


_Answer = tuple[Any, BaseException | None, float]
"""What a player call gave: (its answer, or the exception it raised, and the seconds it took)."""


class _Seats:
    """Asks the players, keeps their time banks, and records forfeits."""

    def __init__(
        self,
        game: Game,
        players: Sequence[Player],
        time_controls: Sequence[TimeControl | None],
        clock: Callable[[], float],
        events: list[Event],
        match_id: str,
        *,
        ask_forced: bool = True,
    ) -> None:
        self.game = game
        self.players = players
        self.time_controls = time_controls
        """Each seat's time control (None: untimed)."""
        self.clock = clock
        self.events = events
        self.match_id = match_id
        self.banks = [control.bank if control else 0.0 for control in time_controls]
        self.budgets = [control.seat_budget if control else 0.0 for control in time_controls]
        """Seconds each seat has left of its whole-match budget."""
        self.forfeits: dict[int, Forfeit] = {}
        self.decisions = 0
        self.turn_aware = [callable(getattr(player, "decide_turn", None)) for player in players]
        self.ask_forced = ask_forced
        self.concurrent = [bool(getattr(player, "concurrent", False)) for player in players]
        self._pool: ThreadPoolExecutor | None = None

    def ask_one(
        self, kind: DecisionKind, seat: int, info: Any, legal: tuple[Action, ...]
    ) -> tuple[Action, int | None]:
        """One seat's action and its thinking time in µs (None: the forfeited seat's fallback):
        `ask` for the one-seat decisions that make nearly all of a game, kept short."""
        if seat in self.forfeits:
            return self.game.greedy(info, legal), None
        self.decisions += 1
        if self.turn_aware[seat] or self.time_controls[seat] is not None:
            return self._settle(seat, info, legal, self._call(kind, seat, info, legal))
        clock = self.clock
        player: Any = self.players[seat]
        started = clock()
        try:
            action = player.decide(info, legal)
        except Exception as error:  # a bot's bug must not stop the other seats' game
            return self._settle(seat, info, legal, (None, error, clock() - started))
        elapsed = clock() - started
        for option in legal:  # a player's answer is usually one of the legal actions themselves
            if option is action:
                return option, round(elapsed * 1_000_000)
        return self._settle(seat, info, legal, (action, None, elapsed))

    def ask(
        self, kind: DecisionKind, asks: Sequence[tuple[int, Any, tuple[Action, ...]]]
    ) -> list[tuple[Action, int | None]]:
        """Each seat's action (a forfeited seat's fallback's) and its thinking time in µs.

        Simultaneous decisions of concurrent players are asked in parallel; forfeits are then
        settled in seat order, so the replay does not depend on who answered first.
        """
        if len(asks) == 1:
            seat, info, legal = asks[0]
            return [self.ask_one(kind, seat, info, legal)]
        live = [index for index, (seat, _, _) in enumerate(asks) if seat not in self.forfeits]
        self.decisions += len(live)
        answers: dict[int, _Answer] = {}
        if len(live) > 1 and any(self.concurrent[asks[index][0]] for index in live):
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=len(self.players), thread_name_prefix="septet-ask"
                )
            futures = {index: self._pool.submit(self._call, kind, *asks[index]) for index in live}
            answers = {index: future.result() for index, future in futures.items()}
        else:
            answers = {index: self._call(kind, *asks[index]) for index in live}
        return [
            self._settle(seat, info, legal, answers[index])
            if index in answers
            else (self.game.greedy(info, legal), None)
            for index, (seat, info, legal) in enumerate(asks)
        ]

    def asks_forced(self, seat: int) -> bool:
        """Whether a forced decision (one legal action) is asked of `seat` rather than applied:
        a bot elsewhere that has not forfeited is asked, so no seat can tell from the timing of
        its own requests whether another seat had a choice; in-process players are not."""
        return self.ask_forced and self.turn_aware[seat] and seat not in self.forfeits

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def _call(self, kind: DecisionKind, seat: int, info: Any, legal: tuple[Action, ...]) -> _Answer:
        clock = self.clock
        player: Any = self.players[seat]
        started = clock()
        try:
            if self.turn_aware[seat]:
                action = player.decide_turn(self._turn(kind, seat), info, legal)
            else:
                action = player.decide(info, legal)
        except Exception as error:  # a bot's bug must not stop the other seats' game
            return None, error, clock() - started
        return action, None, clock() - started

    def _turn(self, kind: DecisionKind, seat: int) -> Turn:
        """The decision's context; its decision time and bank never exceed the seat's match budget
        left, so a player's deadline (the gRPC one) ends the call before the budget runs out."""
        decision_time, bank_time = self.clock_of(seat)
        return Turn(self.match_id, self.game.id, seat, kind, decision_time, bank_time)

    def clock_of(self, seat: int) -> tuple[float | None, float | None]:
        """(decision time, bank) the seat would be given if asked now; (None, None) untimed."""
        control = self.time_controls[seat]
        if control is None:
            return None, None
        left = max(self.budgets[seat], 0.0)
        decision_time = min(control.per_decision, left)
        return decision_time, min(self.banks[seat], left - decision_time)

    def asking(self, kind: DecisionKind, seats: Sequence[int]) -> Asking:
        """The observer's view of a decision about to be asked of `seats` (forfeited ones left out)."""
        clocks = [SeatClock(seat, *self.clock_of(seat)) for seat in seats if seat not in self.forfeits]
        return Asking(kind, tuple(clocks))

    def _settle(
        self, seat: int, info: Any, legal: tuple[Action, ...], answer: _Answer
    ) -> tuple[Action, int | None]:
        action, error, elapsed = answer
        control = self.time_controls[seat]
        if control is not None:
            self.budgets[seat] -= elapsed
            if self.budgets[seat] < 0:  # past its budget, whatever it answered (or its deadline)
                budget = control.seat_budget
                reason = f"used up its match budget of {budget:.1f} s (this decision took {elapsed:.3f} s)"
                return self._forfeit(seat, Status.TIMEOUT, reason, info, legal)
        if isinstance(error, PlayerTimeout):
            return self._forfeit(seat, Status.TIMEOUT, str(error) or "missed its deadline", info, legal)
        if isinstance(error, PlayerInvalid):
            return self._forfeit(seat, Status.INVALID, str(error), info, legal)
        if isinstance(error, PlayerError):
            return self._forfeit(seat, Status.ERROR, str(error), info, legal)
        if error is not None:
            return self._forfeit(seat, Status.ERROR, f"raised {type(error).__name__}: {error}", info, legal)
        if control is not None:
            over = elapsed - control.per_decision
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
    ask_forced: bool = True,
    seat_time_controls: Mapping[int, TimeControl] | None = None,
    observer: MatchObserver | None = None,
) -> MatchResult:
    """Plays one game of `game` with `players` in seat order; returns its result and replay.

    `clock` times each decision (inject a deterministic one for byte-identical replays).
    `time_control` None means in-process players are not timed out; `seat_time_controls` gives
    some seats their own (a person at a table of bots thinks longer than a bot), recorded on
    their seat in the replay. `ask_forced=False` applies every forced decision without asking, as
    the referee once did (benchmarks/forced_timing.py measures the timing channel that opens).
    `observer` sees the events as they happen (`MatchObserver`).
    """
    if isinstance(game, str):
        game = get_game(game)
    checked_options = game.check_options(options)
    state = game.start(len(players), checked_options)
    rng = random.Random(seed)
    events: list[Event] = []
    names = [player.name for player in players]
    own_controls = dict(seat_time_controls or {})
    if any(seat not in range(len(players)) for seat in own_controls):
        raise GameError(f"seat_time_controls names a seat outside 0-{len(players) - 1}")
    controls = [own_controls.get(seat, time_control) for seat in range(len(players))]
    seats = _Seats(game, players, controls, clock, events, match_id or "", ask_forced=ask_forced)
    published = 0
    """Events the observer has been shown."""
    to_move, legal_actions, apply = game.to_move, game.legal_actions, game.apply
    information_state, sample_chance = game.information_state, game.sample_chance
    forced = 0
    started = time.perf_counter()
    for seat, player in enumerate(players):
        start = MatchStart(
            match_id or "", game.id, seat, len(players), checked_options, names, controls[seat]
        )
        _notify(player, "start_match", start)
    kind_of: DecisionKind | None = None
    kind = ""
    try:
        while (decision := to_move(state)) is not None:
            seats_asked = decision.seats
            if not seats_asked:
                outcome = sample_chance(state, rng)
                state = apply(state, CHANCE, outcome)
                events.append({"type": "chance", "outcome": outcome})
                events.extend(state.events)
                continue
            if decision.kind is not kind_of:  # the replay's kind, as a plain string
                kind_of = decision.kind
                kind = kind_of.value
            if len(seats_asked) == 1:  # one seat decides: nearly every decision of every game
                seat = seats_asked[0]
                legal = legal_actions(state, seat)
                if len(legal) == 1:
                    forced += 1
                    if not seats.asks_forced(seat):
                        action = legal[0]
                        state = apply(state, seat, action)
                        events.append({"type": "action", "seat": seat, "kind": kind, "action": action,
                                       "forced": True})  # fmt: skip
                        events.extend(state.events)
                        continue
                if observer is not None and seat not in seats.forfeits:
                    published = _observe(observer, events, published, seats.asking(kind_of, (seat,)))
                action, micros = seats.ask_one(kind_of, seat, information_state(state, seat), legal)
                state = apply(state, seat, action)
                event: Event = {"type": "action", "seat": seat, "kind": kind, "action": action}
                if len(legal) == 1:
                    event["forced"] = True
                if micros is not None:
                    event["us"] = micros
                else:
                    event["fallback"] = True
                events.append(event)
                events.extend(state.events)
                continue
            # Every seat of a simultaneous decision is asked before any answer is applied.
            answers: list[tuple[int, Action, dict[str, int | bool]]] = []
            asks = []
            for seat in seats_asked:
                legal = legal_actions(state, seat)
                if len(legal) == 1:
                    forced += 1
                    if not seats.asks_forced(seat):
                        answers.append((seat, legal[0], {"forced": True}))
                        continue
                asks.append((seat, information_state(state, seat), legal))
            if asks:
                if observer is not None:
                    asked_seats = [seat for seat, _, _ in asks if seat not in seats.forfeits]
                    if asked_seats:
                        asking = seats.asking(decision.kind, asked_seats)
                        published = _observe(observer, events, published, asking)
                asked = seats.ask(decision.kind, asks)
                for (seat, _, legal), (action, micros) in zip(asks, asked, strict=True):
                    how: dict[str, int | bool] = {"forced": True} if len(legal) == 1 else {}
                    how.update({"us": micros} if micros is not None else {"fallback": True})
                    answers.append((seat, action, how))
                if len(answers) > 1:
                    answers.sort(key=lambda answer: seats_asked.index(answer[0]))
            for seat, action, how in answers:
                state = apply(state, seat, action)
                events.append({"type": "action", "seat": seat, "kind": kind, "action": action, **how})
                events.extend(state.events)
    finally:
        seats.close()
    if observer is not None:
        _observe(observer, events, published, None)

    game_result = game.result(state)
    assert game_result is not None, "a game with no decision left must have a result"
    forfeited = sorted(seats.forfeits)
    result = rank_with_forfeits(game_result, forfeited)
    end = MatchEnd(match_id or "", result, [seats.forfeits[seat] for seat in forfeited])
    for player in players:
        _notify(player, "end_match", end)
    replay = {
        "format": REPLAY_FORMAT,
        "engine": f"septet {referee.__version__}",
        "match_id": match_id,
        "game": game.id,
        "options": checked_options,
        "seed": seed,
        "seats": [_seat_entry(seat, name, own_controls.get(seat)) for seat, name in enumerate(names)],
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


def _seat_entry(seat: int, name: str, own_control: TimeControl | None) -> dict[str, Any]:
    """A seat of the replay: its number and name, and its own time control if it had one."""
    entry: dict[str, Any] = {"seat": seat, "name": name}
    if own_control is not None:
        entry["time_control"] = own_control.to_json()
    return entry


def _observe(observer: MatchObserver, events: list[Event], published: int, asking: Asking | None) -> int:
    """Shows the observer the events since `published` and what is asked next; the number of
    events shown so far. An observer's failure is ignored: a viewer never stops a match."""
    with contextlib.suppress(Exception):
        observer.step(events[published:], asking)
    return len(events)


def _notify(player: Player, hook: str, payload: MatchStart | MatchEnd) -> None:
    """Calls an optional player hook (start_match / end_match); a failing hook is ignored."""
    method = getattr(player, hook, None)
    if method is None:
        return
    with contextlib.suppress(Exception):  # a courtesy: a bot's failure here changes nothing
        method(payload)
