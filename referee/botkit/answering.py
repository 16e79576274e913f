"""A `Bot`'s answers to the protocol's messages, whichever way they reach it.

A served bot gets them as gRPC calls (`referee.botkit.sdk.BotServicer`: `Play`, `Decide`,
`StartMatch`, `EndMatch`); a self-hosted bot gets the very same `PlayRequest`s over its one
connection to the Arena (`referee.botkit.connect`). Both ask `BotAnswers`, and both keep one
`SeatStream` per seat of a match, so what the bot sees (whole information states, engine values,
forced answers held as long as chosen ones take) does not depend on the way. A request the bot
cannot answer raises `SeatFailure`, which a server turns into the call's status and a connection
into an empty answer (the seat forfeits either way).
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import grpc

from referee.botkit.protocol import bot_pb2, convert
from referee.botkit.protocol.convert import ProtocolError
from referee.botkit.tempo import ForcedTempo, MatchPaces

if TYPE_CHECKING:
    from referee.botkit.sdk import Bot


class SeatFailure(Exception):
    """A request the bot could not answer: the status a served bot ends the call with (INVALID_ARGUMENT
    for a request that does not fit the contract, INTERNAL for the bot's own error), and one line
    saying why."""

    def __init__(self, code: grpc.StatusCode, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class BotAnswers:
    """Protobuf in, protobuf out, engine values for the bot. Calls into the bot are serialized (one
    lock), so a bot needs no locks of its own however many seats it plays at once; a forced answer's
    hold (`referee.botkit.tempo`) waits outside the lock, so the bot's other seats go on meanwhile."""

    def __init__(self, bot: Bot, tempo: ForcedTempo | None = None) -> None:
        self.bot = bot
        self._lock = threading.Lock()
        self.tempo = tempo or ForcedTempo()
        """The chosen decisions' durations, from which a forced answer's hold is drawn."""
        self.paces = MatchPaces()
        """Each seat's time so far in each match, which a hold may not push past its budget."""

    def decision(
        self, request: bot_pb2.DecideRequest, state: convert.StreamState | None
    ) -> bot_pb2.DecideResponse:
        """The bot's answer to one decision; `state`: the seat's stream (None: a whole request)."""
        started = time.perf_counter()
        try:
            info = convert.info_from_request(request, state)
            legal = convert.legal_from_request(request)
        except ProtocolError as error:
            raise SeatFailure(grpc.StatusCode.INVALID_ARGUMENT, str(error)) from None
        action = self._call(self.bot.decide, info, legal)
        self._keep_tempo(request, len(legal), started)
        for index, candidate in enumerate(legal):
            if type(candidate) is type(action) and candidate == action:
                return bot_pb2.DecideResponse(index=index)
        try:  # not legal: answer it anyway, the referee rules on it (INVALID) and says why
            return bot_pb2.DecideResponse(action=convert.action_to_proto(action))
        except ProtocolError:
            shown = repr(action)[:80]
            raise SeatFailure(
                grpc.StatusCode.INTERNAL, f"{self.bot.name}: decide returned {shown}, not an action"
            ) from None

    def started(self, request: bot_pb2.StartMatchRequest) -> bot_pb2.StartMatchResponse:
        """A match begins for one seat: the bot's `start_match` hook, and the seat's pace."""
        start = convert.match_start_from_request(request)
        if start.time_control is not None:
            self.paces.start(start.match_id, start.seat, start.time_control.seat_budget)
        self._call(self.bot.start_match, start)
        return bot_pb2.StartMatchResponse()

    def ended(self, request: bot_pb2.EndMatchRequest) -> bot_pb2.EndMatchResponse:
        """A match is over: the bot's `end_match` hook; the match's paces are forgotten."""
        try:
            end = convert.match_end_from_request(request)
        except ProtocolError as error:
            raise SeatFailure(grpc.StatusCode.INVALID_ARGUMENT, str(error)) from None
        self.paces.end(end.match_id)
        self._call(self.bot.end_match, end)
        return bot_pb2.EndMatchResponse()

    def _keep_tempo(self, request: bot_pb2.DecideRequest, legal: int, started: float) -> None:
        """Notes a chosen decision's duration; holds a forced one's answer (outside the bot's lock,
        so the bot's other seats go on) until a chosen decision's time has passed."""
        if not getattr(self.bot, "pad_forced", True):
            return
        key = (request.game, request.kind)
        elapsed = time.perf_counter() - started
        pace = self.paces.get(request.match_id, request.seat)
        hold = 0.0
        if legal > 1:
            self.tempo.chosen(key, elapsed)
        else:
            time_left = request.decision_time_ms / 1000 if request.decision_time_ms > 0 else None
            hold = self.tempo.hold(key, elapsed, time_left)
            if pace is not None:
                hold = min(hold, pace.allowed_hold(elapsed))
            if hold > 0:
                time.sleep(hold)
        if pace is not None:
            pace.record(elapsed + hold)

    def _call(self, method: Callable[..., Any], *args: Any) -> Any:
        """The method's result; SeatFailure (INTERNAL) with a one-line reason when it raised.

        The traceback goes to stderr for the bot's author; the referee gets the one line.
        """
        try:
            with self._lock:
                return method(*args)
        except Exception as error:
            traceback.print_exc(file=sys.stderr)
            name = getattr(method, "__name__", "bot")
            reason = f"{self.bot.name}: {name} raised {type(error).__name__}: {error}".splitlines()[0]
            raise SeatFailure(grpc.StatusCode.INTERNAL, reason) from None


class SeatStream:
    """One seat of one match, as on a `Play` stream: each request answered in order, the seat's
    information state kept here (each `decide` is a delta of it), so `decide` sees whole states."""

    def __init__(self, answers: BotAnswers) -> None:
        self._answers = answers
        self._state = convert.StreamState()

    def answer(self, request: bot_pb2.PlayRequest) -> bot_pb2.PlayResponse:
        """`started`, `decision` or `ended` for `start`, `decide` or `end`; SeatFailure otherwise."""
        which = request.WhichOneof("message")
        if which == "decide":
            return bot_pb2.PlayResponse(decision=self._answers.decision(request.decide, self._state))
        if which == "start":
            return bot_pb2.PlayResponse(started=self._answers.started(request.start))
        if which == "end":
            return bot_pb2.PlayResponse(ended=self._answers.ended(request.end))
        raise SeatFailure(grpc.StatusCode.INVALID_ARGUMENT, "a PlayRequest with no message set")

    def close(self) -> None:
        """Nothing to let go of: the seat's state is plain memory."""
