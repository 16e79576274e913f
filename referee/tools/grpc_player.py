"""The gRPC player: the referee's client of a bot process (protos/septet/v1/bot.proto).

One channel per bot; every call carries a gRPC deadline. Each `Decide` gets the seat's time left
(decision time plus what is left in its bank), so a bot that stops answering costs at most that.
Status codes map to the forfeit policy: DEADLINE_EXCEEDED -> TIMEOUT; an answer that is not a
legal action -> INVALID; anything else (crash, refused connection, oversized or malformed
reply) -> ERROR. Simultaneous decisions (Oh 7?'s bets) are asked in parallel (`concurrent`).

Each seat's finished tricks are encoded once per match (convert.SentTricks, one per seat of the
match under way), not once per request.
"""

from __future__ import annotations

from typing import Any

import grpc

from referee.botkit.protocol import bot_pb2_grpc, convert
from referee.engine.games.base import Action
from referee.engine.match import MatchEnd, MatchStart, PlayerError, PlayerInvalid, PlayerTimeout, Turn

MAX_MESSAGE_BYTES = 1 << 20
"""The largest reply a bot may send (a Decide answer is a few bytes)."""
UNTIMED_DEADLINE = 60.0
"""Seconds a decision may take when the match has no time control, so nothing waits forever."""
NOTIFY_DEADLINE = 2.0
"""Seconds for StartMatch / EndMatch, which are courtesies."""
DEADLINE_SLACK = 0.05
"""Seconds added to the gRPC deadline for the network; the referee's own clock still decides."""


class GrpcPlayer:
    """A seat played by a bot that serves `septet.v1.Bot` at `address` (`host:port`, `unix:/path`).

    It may play several seats of a match and many matches in turn, one at a time: a match that
    starts drops what is left of an earlier one that never ended.
    """

    concurrent = True

    def __init__(self, address: str, name: str | None = None) -> None:
        self.address = address
        self.name = name or address
        self._channel = grpc.insecure_channel(
            address,
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", 16 * MAX_MESSAGE_BYTES),
                ("grpc.enable_retries", 0),
            ],
        )
        self._stub = bot_pb2_grpc.BotStub(self._channel)  # type: ignore[no-untyped-call]
        self._sent: dict[tuple[str, int], convert.SentTricks] = {}
        """What each seat of the match under way was sent, by (match id, seat)."""

    def close(self) -> None:
        self._sent.clear()
        self._channel.close()

    def decide(self, info_state: Any, legal_actions: tuple[Action, ...]) -> Action:
        """Without a match context (tests, tools): an untimed decision for the info's seat."""
        raise PlayerError("a gRPC player needs the decision's context: use decide_turn")

    def decide_turn(self, turn: Turn, info_state: Any, legal_actions: tuple[Action, ...]) -> Action:
        timed = turn.decision_time is not None and turn.bank_time is not None
        budget = (turn.decision_time or 0.0) + (turn.bank_time or 0.0) if timed else UNTIMED_DEADLINE
        request = convert.decide_request(
            match_id=turn.match_id,
            seat=turn.seat,
            game=turn.game,
            kind=turn.kind,
            info=info_state,
            legal=legal_actions,
            decision_ms=round((turn.decision_time or UNTIMED_DEADLINE) * 1000),
            bank_ms=round((turn.bank_time or 0.0) * 1000),
            sent=self._sent.setdefault((turn.match_id, turn.seat), convert.SentTricks()),
        )
        try:
            response = self._stub.Decide(request, timeout=budget + DEADLINE_SLACK)
        except grpc.RpcError as error:
            raise _mapped(error, budget) from None
        try:
            action: Action = convert.action_from_response(response, legal_actions)
            return action
        except convert.ProtocolError as error:
            raise PlayerInvalid(str(error)) from None

    def start_match(self, start: MatchStart) -> None:
        for key in [key for key in self._sent if key[0] != start.match_id or key[1] == start.seat]:
            del self._sent[key]
        request = convert.start_match_request(
            match_id=start.match_id,
            game=start.game,
            seat=start.seat,
            num_players=start.num_players,
            options=start.options,
            seat_names=start.seat_names,
            time_control=start.time_control,
        )
        self._stub.StartMatch(request, timeout=NOTIFY_DEADLINE)

    def end_match(self, end: MatchEnd) -> None:
        for key in [key for key in self._sent if key[0] == end.match_id]:
            del self._sent[key]
        request = convert.end_match_request(match_id=end.match_id, result=end.result, forfeits=end.forfeits)
        self._stub.EndMatch(request, timeout=NOTIFY_DEADLINE)


def _mapped(error: grpc.RpcError, budget: float) -> Exception:
    code = error.code() if isinstance(error, grpc.Call) else grpc.StatusCode.UNKNOWN
    details = (error.details() if isinstance(error, grpc.Call) else "") or ""
    details = details if len(details) <= 200 else details[:197] + "..."
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return PlayerTimeout(f"no answer within {budget:.2f} s (decision time and bank)")
    if code == grpc.StatusCode.UNAVAILABLE:
        return PlayerError(f"bot unreachable: {details or 'connection failed'}")
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return PlayerError(f"reply too large or resources exhausted: {details}")
    return PlayerError(f"{code.name}: {details}" if details else code.name)
