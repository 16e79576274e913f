"""Remote seats: a seat whose decisions come from outside the worker (a person in the browser),
relayed through Redis. The worker keeps the clock; the centre only checks and passes answers on.

The worker asks (`RemoteSeatPlayer.decide_turn`): it records the decision as the seat's pending one
with its legal actions, puts a `prompt` on the seat's own live stream, and waits for an answer
until the seat's decision time and bank run out (then the seat times out, as a bot would). The
centre answers (`seat_answer`) in one Lua script, so two answers can never both be taken: the
decision must be the seat's pending one (else `stale`: the game has moved on), not answered yet
(else `answered`: a replayed or doubled click), and the action one of its legal actions (else
`illegal`); the answer is then queued for the worker and `answered` put on the seat's stream. The
worker checks the answer again as it would a bot's (`referee.engine.match`): nothing the centre
or the browser sends is trusted.

Decision ids are random, so an answer can only ever be taken for the decision it quotes; one that
arrives after its decision timed out waits in the queue, and the worker drops it unread.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import redis

from referee.engine.games.base import Action
from referee.engine.match import PlayerError, PlayerTimeout, Turn
from septet_platform.live.connection import decoded, key_prefix, live_redis
from septet_platform.live.streams import MAX_ENTRIES, MESSAGE_FIELD, PLAYING_TTL_SECONDS, encode_batch

WAIT_SLICE_SECONDS = 4.0
"""A blocking read of answers waits at most this long at once (below the client's socket timeout)."""
DECISION_ID_BYTES = 12


class AnswerOutcome(StrEnum):
    """What became of an answer the centre passed on."""

    TAKEN = "taken"
    NOT_ASKED = "not-asked"  # the seat has no decision pending
    STALE = "stale"  # another decision is pending now: the quoted one is over
    ANSWERED = "answered"  # the quoted decision already has its answer
    ILLEGAL = "illegal"  # not one of the decision's legal actions


@dataclass(frozen=True)
class SeatKeys:
    """The Redis keys of one seat of one match."""

    match_id: int
    seat: int

    def _key(self, name: str) -> str:
        return f"{key_prefix()}seat:{self.match_id}:{self.seat}:{name}"

    @property
    def pending(self) -> str:
        return self._key("pending")

    @property
    def stream(self) -> str:
        """Holds the name of the seat's live stream (the attempt being played)."""
        return self._key("stream")

    @property
    def answers(self) -> str:
        return self._key("answers")

    def legal(self, decision: str) -> str:
        return self._key(f"legal:{decision}")

    def answered(self, decision: str) -> str:
        return self._key(f"answered:{decision}")


def action_json(action: Any) -> str:
    """The one JSON text of an action both sides compare: a set of cards as a list, compact."""
    value = list(action) if isinstance(action, tuple) else action
    return json.dumps(value, separators=(",", ":"))


def action_from_json(value: Any) -> Action:
    """An action as the engine knows it, from its JSON value (a list of cards becomes a tuple)."""
    if isinstance(value, list):
        return tuple(str(card) for card in value)
    if isinstance(value, bool | int | str):
        return value
    raise PlayerError(f"answered {value!r}, which is not an action")


_ANSWER_SCRIPT = """
local pending = redis.call('GET', KEYS[1])
if redis.call('EXISTS', KEYS[3]) == 1 then return 'answered' end
if not pending then return 'not-asked' end
if pending ~= ARGV[1] then return 'stale' end
if redis.call('SISMEMBER', KEYS[2], ARGV[2]) == 0 then return 'illegal' end
redis.call('SET', KEYS[3], '1', 'EX', ARGV[5])
redis.call('RPUSH', KEYS[4], ARGV[3])
redis.call('EXPIRE', KEYS[4], ARGV[5])
local stream = redis.call('GET', KEYS[5])
if stream then
  redis.call('XADD', stream, 'MAXLEN', '~', ARGV[6], '*', ARGV[7], ARGV[4])
end
return 'taken'
"""


def seat_answer(
    *, match_id: int, seat: int, decision: str, action: Any, client: redis.Redis | None = None
) -> AnswerOutcome:
    """Passes a person's answer to the worker if it answers the seat's pending decision with a
    legal action (see the module docstring); what became of it. Checking that the caller holds
    the seat is the caller's job (septet_platform.matches.live_services)."""
    keys = SeatKeys(match_id, seat)
    answer = json.dumps({"decision": decision, "action": action}, separators=(",", ":"))
    answered = encode_batch([{"type": "answered", "decision": decision}])
    outcome = (client or live_redis()).eval(
        _ANSWER_SCRIPT,
        5,
        keys.pending,
        keys.legal(decision),
        keys.answered(decision),
        keys.answers,
        keys.stream,
        decision,
        action_json(action),
        answer,
        answered,
        PLAYING_TTL_SECONDS,
        MAX_ENTRIES,
        MESSAGE_FIELD,
    )
    return AnswerOutcome(decoded(outcome))


class RemoteSeatPlayer:
    """The worker's player for a remote seat: each decision is put to the seat's stream as a
    `prompt` and its answer awaited through Redis, under the seat's own clock. Asked of forced
    decisions too (as every player outside the worker is: referee.engine.match)."""

    concurrent = True
    """Simultaneous bets are asked of every seat at once, a person's among them."""

    def __init__(
        self,
        name: str,
        *,
        match_id: int,
        seat: int,
        stream_key: str,
        prompt: Callable[[int, dict[str, Any]], None],
        client: Callable[[], redis.Redis] = live_redis,
    ) -> None:
        self.name = name
        self.keys = SeatKeys(match_id, seat)
        self.stream_key = stream_key
        self._prompt = prompt
        self._client = client

    def decide_turn(self, turn: Turn, info: Any, legal: tuple[Action, ...]) -> Action:
        decision = secrets.token_urlsafe(DECISION_ID_BYTES)
        limit = (
            (turn.decision_time or 0.0) + (turn.bank_time or 0.0) if turn.decision_time is not None else None
        )
        self._ask(decision, legal)
        self._prompt(
            self.keys.seat,
            {
                "type": "prompt",
                "decision": decision,
                "kind": str(turn.kind),
                "legal": [json.loads(action_json(action)) for action in legal],
                "hand": list(getattr(info, "hand", ()) or ()),
                "decision_seconds": turn.decision_time,
                "bank_seconds": turn.bank_time,
            },
        )
        try:
            return self._await(decision, limit)
        finally:
            self._client().delete(self.keys.pending, self.keys.legal(decision))

    def _ask(self, decision: str, legal: tuple[Action, ...]) -> None:
        """Records the pending decision and its legal actions before anyone can see the prompt."""
        pipe = self._client().pipeline(transaction=True)
        pipe.set(self.keys.stream, self.stream_key, ex=PLAYING_TTL_SECONDS)
        pipe.sadd(self.keys.legal(decision), *[action_json(action) for action in legal])
        pipe.expire(self.keys.legal(decision), PLAYING_TTL_SECONDS)
        pipe.set(self.keys.pending, decision, ex=PLAYING_TTL_SECONDS)
        pipe.execute()

    def _await(self, decision: str, limit: float | None) -> Action:
        """The answer to `decision`, or PlayerTimeout once `limit` seconds have passed."""
        deadline = None if limit is None else time.monotonic() + limit
        while True:
            left = WAIT_SLICE_SECONDS if deadline is None else deadline - time.monotonic()
            if left <= 0:
                raise PlayerTimeout(f"did not answer within {limit:.0f} s (its decision time and bank)")
            try:
                popped = self._client().blpop([self.keys.answers], timeout=min(left, WAIT_SLICE_SECONDS))
            except redis.RedisError:  # Redis away for a moment: the clock runs on meanwhile
                time.sleep(min(0.5, max(left, 0.0)))
                continue
            if popped is None:
                continue
            answer = json.loads(decoded(popped[1]))
            if answer.get("decision") != decision:  # a late answer to a decision that timed out
                continue
            return action_from_json(answer.get("action"))
