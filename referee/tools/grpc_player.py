"""The gRPC player: the referee's client of a bot process (protos/septet/v1/bot.proto).

One channel per bot. Each seat's match goes on a `Play` stream of its own when the bot offers it:
`start_match` opens the seat's stream, every decision is one exchange on it and `end_match` closes
it, and a decision carries only what changed in the seat's information state since the stream's
last one (convert.play_decide_request): it costs each side less CPU than a unary call.
A bot that answers the stream with UNIMPLEMENTED is asked by the unary calls (StartMatch, Decide,
EndMatch) from then on: it is tried once per player. A stream is never shared between seats or
matches, so a bot learns nothing on it that its seat's unary requests would not tell it.

Every decision carries the seat's time left (decision time plus what is left in its bank), so a bot
that stops answering costs at most that: a unary call's gRPC deadline, or on a stream the watchdog
that cancels it (referee/tools/grpc_stream.py). Both ways map to the forfeit policy alike:
DEADLINE_EXCEEDED -> TIMEOUT; an answer that is not a legal action -> INVALID; anything else (crash,
refused connection, oversized or malformed reply, a stream ended or answered out of turn) -> ERROR.
Simultaneous decisions (Oh 7?'s bets) are asked in parallel (`concurrent`), each seat on its stream.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import grpc
from google.protobuf.message import DecodeError

from referee.botkit.protocol import bot_pb2, bot_pb2_grpc, convert
from referee.engine.games.base import Action
from referee.engine.match import MatchEnd, MatchStart, PlayerError, PlayerInvalid, PlayerTimeout, Turn
from referee.tools.grpc_stream import BlockingStream, StreamError

MAX_MESSAGE_BYTES = 1 << 20
"""The largest reply a bot may send (a Decide answer is a few bytes)."""
UNTIMED_DEADLINE = 60.0
"""Seconds a decision may take when the match has no time control, so nothing waits forever."""
NOTIFY_DEADLINE = 2.0
"""Seconds for StartMatch / EndMatch (on a stream: its start and its end), which are courtesies."""
DEADLINE_SLACK = 0.05
"""Seconds added to the gRPC deadline for the network; the referee's own clock still decides."""
PLAY_METHOD = "/septet.v1.Bot/Play"
EXIT_WAIT = 1.0
"""Seconds a failed call waits for the bot's process to end when the connection was lost (a
crash closes the socket a moment before the process is reaped): the exit code is then known."""
LOST = ("unreachable", "Socket closed", "Stream removed", "Connection reset", "CANCELLED", "UNAVAILABLE")
"""Words of a failed call's reason that mean the connection to the bot itself went away."""


def _connection_lost(reason: str) -> bool:
    return any(word in reason for word in LOST)


class PlayStream(Protocol):
    """One seat's `Play` stream as the player drives it: a gRPC call of its own
    (`grpc_stream.BlockingStream`), or one relayed to a bot that dialled out to the Arena."""

    expired: bool

    def exchange(self, request: bytes, timeout: float) -> bytes: ...

    def close(self, request: bytes, timeout: float) -> bytes | None: ...

    def close_now(self) -> None: ...


@runtime_checkable
class ResumableStream(PlayStream, Protocol):
    """A stream whose far end may lose the seat's state and need it again whole: a relayed seat,
    whose bot can restart its process and reconnect within its time. Before each decision the
    player gives it the same decision as a whole request (every field, as on a stream's first),
    which the relay sends, after the seat's `start`, to a connection that may not know the seat."""

    def remember_whole(self, request: bytes) -> None: ...


@dataclass
class _Seat:
    """One seat of one match this player plays: its stream (None: unary calls) and what its
    requests carried (a stream's next request is a delta of it)."""

    stream: PlayStream | None = None
    sent: convert.SeatSent = field(default_factory=convert.SeatSent)


class GrpcPlayer:
    """A seat played by a bot that serves `septet.v1.Bot` at `address` (`host:port`, `unix:/path`).

    It may play several seats of a match and many matches in turn (one at a time: a match that
    starts ends what is left of an earlier one that never ended). `stream=False` never tries the
    `Play` stream (benchmarks compare both ways with it).
    """

    concurrent = True

    def __init__(
        self,
        address: str,
        name: str | None = None,
        *,
        stream: bool = True,
        exited: Callable[[float], str | None] | None = None,
        channel: bool = True,
    ) -> None:
        self.address = address
        self.name = name or address
        self.exited = exited
        """For a bot process the caller started: how it ended (waiting up to the seconds given),
        None while it runs. Added to the reason of a failed call, so a crash mid-game says its
        exit code or signal (and whatever else the caller adds: the reason goes into the replay)."""
        self._channel: grpc.Channel | None = None
        """None for a player whose streams are not gRPC calls of its own (`channel=False`: a
        subclass opens them, `_open_stream`, and never falls back to unary calls)."""
        if channel:
            self._channel = grpc.insecure_channel(
                address,
                options=[
                    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                    ("grpc.max_send_message_length", 16 * MAX_MESSAGE_BYTES),
                    ("grpc.enable_retries", 0),
                ],
            )
            self._stub = bot_pb2_grpc.BotStub(self._channel)  # type: ignore[no-untyped-call]
        self.streaming: bool | None = None if stream else False
        """Whether the bot plays on `Play` streams: None until a match starts, False once it answered
        UNIMPLEMENTED (or with stream=False), True once one of its streams started."""
        self._seats: dict[tuple[str, int], _Seat] = {}
        """The seats of matches under way, by (match id, seat)."""

    def close(self) -> None:
        """Ends every stream still open (a match that stopped before its end) and the channel."""
        seats, self._seats = list(self._seats.values()), {}
        for seat in seats:
            if seat.stream is not None:
                seat.stream.close_now()
        if self._channel is not None:
            self._channel.close()

    def _open_stream(self) -> PlayStream:
        """A new `Play` call to the bot (one per seat per match)."""
        assert self._channel is not None
        return BlockingStream(self._channel, PLAY_METHOD)

    def decide(self, info_state: Any, legal_actions: tuple[Action, ...]) -> Action:
        """Without a match context (tests, tools): an untimed decision for the info's seat."""
        raise PlayerError("a gRPC player needs the decision's context: use decide_turn")

    def decide_turn(self, turn: Turn, info_state: Any, legal_actions: tuple[Action, ...]) -> Action:
        timed = turn.decision_time is not None and turn.bank_time is not None
        budget = (turn.decision_time or 0.0) + (turn.bank_time or 0.0) if timed else UNTIMED_DEADLINE
        seat = self._seats.setdefault((turn.match_id, turn.seat), _Seat())
        stream = seat.stream
        asked = {
            "match_id": turn.match_id,
            "seat": turn.seat,
            "game": turn.game,
            "kind": turn.kind,
            "info": info_state,
            "legal": legal_actions,
            "decision_ms": round((turn.decision_time or UNTIMED_DEADLINE) * 1000),
            "bank_ms": round((turn.bank_time or 0.0) * 1000),
            "sent": seat.sent,
        }
        if stream is None and self._channel is None:
            raise PlayerError("its Play stream did not start or was closed (no unary calls to fall back on)")
        if stream is None:
            try:
                response = self._stub.Decide(convert.decide_request(**asked), timeout=budget + DEADLINE_SLACK)
            except grpc.RpcError as error:
                raise self._explained(_mapped_rpc(error, budget)) from None
        else:
            if isinstance(stream, ResumableStream):
                whole = convert.play_decide_request(**{**asked, "sent": convert.SeatSent()})
                stream.remember_whole(whole.SerializeToString())
            response = self._exchange(seat, stream, convert.play_decide_request(**asked), budget)
        try:
            action: Action = convert.action_from_response(response, legal_actions)
            return action
        except convert.ProtocolError as error:
            raise PlayerInvalid(str(error)) from None

    def _exchange(
        self, seat: _Seat, stream: PlayStream, request: bot_pb2.PlayRequest, budget: float
    ) -> bot_pb2.DecideResponse:
        """One decision on the seat's stream; a stream that failed is dropped (the seat forfeits)."""
        try:
            answer = _play_response(stream.exchange(request.SerializeToString(), budget + DEADLINE_SLACK))
        except StreamError as error:
            seat.stream = None
            raise self._explained(_mapped(error.code, error.details, budget)) from None
        except PlayerError:
            seat.stream = None
            stream.close_now()
            raise
        if answer.WhichOneof("message") != "decision":
            seat.stream = None
            stream.close_now()
            raise PlayerError(_out_of_turn(answer, "decision"))
        return answer.decision

    def _explained(self, error: Exception) -> Exception:
        """`error` with how the bot's process ended, when it ended (the stream or connection of a
        process that died breaks a moment before the process is reaped: it is waited for a while)."""
        if self.exited is None or isinstance(error, (PlayerTimeout, PlayerInvalid)):
            return error
        ended = self.exited(EXIT_WAIT if _connection_lost(str(error)) else 0.0)
        if ended is None:
            return error
        return type(error)(f"{error}; {ended}")

    def start_match(self, start: MatchStart) -> None:
        """Opens the seat's stream (its `start` answered by `started`), else StartMatch."""
        key = (start.match_id, start.seat)
        for left in [other for other in self._seats if other == key or other[0] != start.match_id]:
            earlier = self._seats.pop(left)  # of a match that never ended: one match at a time
            if earlier.stream is not None:
                earlier.stream.close_now()
        seat = self._seats[key] = _Seat()
        request = convert.start_match_request(
            match_id=start.match_id,
            game=start.game,
            seat=start.seat,
            num_players=start.num_players,
            options=start.options,
            seat_names=start.seat_names,
            time_control=start.time_control,
        )
        if self.streaming is not False:
            stream = self._open_stream()
            try:
                answer = _play_response(
                    stream.exchange(bot_pb2.PlayRequest(start=request).SerializeToString(), NOTIFY_DEADLINE)
                )
            except StreamError as error:
                if error.code is not grpc.StatusCode.UNIMPLEMENTED:
                    raise self._explained(PlayerError(f"the Play stream did not start: {error}")) from None
                self.streaming = False  # a bot of unary calls only: asked that way from now on
            except PlayerError:
                stream.close_now()
                raise
            else:
                if answer.WhichOneof("message") != "started" or stream.expired:
                    stream.close_now()
                    late = f"started after its {NOTIFY_DEADLINE:.0f} s on the Play stream"
                    raise PlayerError(late if stream.expired else _out_of_turn(answer, "started"))
                seat.stream = stream
                self.streaming = True
                return
        self._stub.StartMatch(request, timeout=NOTIFY_DEADLINE)

    def end_match(self, end: MatchEnd) -> None:
        """Ends one of this match's seats (the match loop calls it once per seat this player has):
        `end` on its stream, which the bot then ends, or EndMatch."""
        request = convert.end_match_request(match_id=end.match_id, result=end.result, forfeits=end.forfeits)
        keys = sorted(key for key in list(self._seats) if key[0] == end.match_id)
        seat = self._seats.pop(keys[0], None) if keys else None
        if seat is not None and seat.stream is not None:
            try:
                seat.stream.close(bot_pb2.PlayRequest(end=request).SerializeToString(), NOTIFY_DEADLINE)
            except StreamError as error:
                raise PlayerError(f"the Play stream did not end cleanly: {error}") from None
            return
        if self._channel is None:
            return  # its stream is gone already: nothing to tell it the end on
        self._stub.EndMatch(request, timeout=NOTIFY_DEADLINE)


def _play_response(answer: bytes) -> bot_pb2.PlayResponse:
    try:
        return bot_pb2.PlayResponse.FromString(answer)
    except DecodeError:
        raise PlayerError("answered bytes that are not a PlayResponse on the Play stream") from None


def _out_of_turn(answer: bot_pb2.PlayResponse, due: str) -> str:
    return f"answered `{answer.WhichOneof('message') or 'nothing'}` on the Play stream where `{due}` was due"


def _mapped_rpc(error: grpc.RpcError, budget: float) -> Exception:
    code = error.code() if isinstance(error, grpc.Call) else grpc.StatusCode.UNKNOWN
    details = (error.details() if isinstance(error, grpc.Call) else "") or ""
    return _mapped(code, details, budget)


def _mapped(code: grpc.StatusCode, details: str, budget: float) -> Exception:
    """The forfeit a failed call means, alike for a unary call and a stream."""
    details = details if len(details) <= 200 else details[:197] + "..."
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return PlayerTimeout(f"no answer within {budget:.2f} s (decision time and bank)")
    if code == grpc.StatusCode.UNAVAILABLE:
        return PlayerError(f"bot unreachable: {details or 'connection failed'}")
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return PlayerError(f"reply too large or resources exhausted: {details}")
    return PlayerError(f"{code.name}: {details}" if details else code.name)
