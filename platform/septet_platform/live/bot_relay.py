"""Self-hosted bots' seats, relayed through Redis between the worker and the Arena's Connect stream.

The worker plays a self-hosted bot's seat exactly as it plays a sandboxed bot's: `GrpcPlayer`
with its clocks, deltas and forfeit policy, over a `RelayStream` instead of a gRPC `Play` stream
(`RelayedBotPlayer`). Each seat of each match is one stream with a random handle. Sending a
request records it as the handle's outstanding one (with a sequence number) and queues the handle
on the bot's inbox; the Arena's Connect call for that bot pops the handle, sends the request to
the bot's machine, and passes the bot's answer back (`relay_answer`, one Lua script: the handle
must be one of this bot's and have a request waiting, so an answer is taken at most once and never
for another bot's seat). The worker's clock runs from its send to the answer's arrival: the relay
and the network count against the bot, as the docs say.

A bot that reconnects is sent every request still outstanding (`outstanding_requests`), so a seat
whose time has not run out continues. The worker never trusts the answer: it is parsed and checked
against the legal actions as any bot's (referee.tools.grpc_player).
"""

from __future__ import annotations

import contextlib
import secrets
import struct
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import grpc
import redis
import redis.asyncio
from redis.commands.core import AsyncScript

from referee.tools.grpc_player import GrpcPlayer
from referee.tools.grpc_stream import StreamError
from septet_platform.live.connection import decoded, key_prefix, live_redis, live_redis_async

HANDLE_BYTES = 12
SEAT_TTL_SECONDS = 6 * 3600
"""How long a seat's keys outlive their last use (a match is far shorter)."""
WAIT_SLICE_SECONDS = 4.0
"""A blocking read waits at most this long at once (below the client's socket timeout)."""
_SEQUENCE = struct.Struct(">Q")


@dataclass(frozen=True)
class BotRelayKeys:
    """The Redis keys of one self-hosted bot."""

    bot_id: int

    def _key(self, name: str) -> str:
        return f"{key_prefix()}selfhosted:{self.bot_id}:{name}"

    @property
    def inbox(self) -> str:
        """Handles whose request waits to be sent to the bot, oldest first."""
        return self._key("inbox")

    @property
    def outstanding(self) -> str:
        """Handle -> its unanswered request (sequence number + PlayRequest bytes)."""
        return self._key("outstanding")

    @property
    def connection(self) -> str:
        """The bot's live connection: its id, since when, its peer and answer times."""
        return self._key("connection")

    @property
    def resume(self) -> str:
        """Handle -> the outstanding decision as a whole request (sequence number + bytes), and
        "<handle>:start" -> the seat's `start`: what a connection that does not know the seat
        (the bot's process restarted) needs to answer it (`resume_requests`)."""
        return self._key("resume")


def seat_owner_key(handle: str) -> str:
    """Which bot a seat handle belongs to."""
    return f"{key_prefix()}selfhosted:seat:{handle}:bot"


def seat_answers_key(handle: str) -> str:
    return f"{key_prefix()}selfhosted:seat:{handle}:answers"


def encode_request(sequence: int, request: bytes) -> bytes:
    return _SEQUENCE.pack(sequence) + request


def decode_request(value: bytes) -> tuple[int, bytes]:
    return _SEQUENCE.unpack_from(value)[0], value[_SEQUENCE.size :]


class RelayStream:
    """The worker's end of one relayed seat: the `BlockingStream` interface `GrpcPlayer` uses
    (exchange, close, close_now, expired), carried by Redis to whichever Connect call the bot has."""

    def __init__(self, bot_id: int, *, client: Callable[[], redis.Redis] = live_redis) -> None:
        self.keys = BotRelayKeys(bot_id)
        self.bot_id = bot_id
        self.handle = secrets.token_urlsafe(HANDLE_BYTES)
        self.expired = False
        self._sequence = 0
        self._client = client
        self._whole: bytes | None = None
        """The next request as a whole decision (`remember_whole`), stored beside its delta."""

    def remember_whole(self, request: bytes) -> None:
        """The decision about to be sent, as a whole request: stored with it (one round trip) so
        a restarted bot can be given the seat again (`ResumableStream`)."""
        self._whole = request

    def exchange(self, request: bytes, timeout: float) -> bytes:
        """Sends `request` to the bot and returns its answer; StreamError(DEADLINE_EXCEEDED) when
        none came within `timeout` seconds (the request is withdrawn: a late answer is refused)."""
        self._sequence += 1
        self._send(request)
        deadline = time.monotonic() + timeout
        answers = seat_answers_key(self.handle)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._withdraw()
                self.expired = True
                raise StreamError(grpc.StatusCode.DEADLINE_EXCEEDED, f"no answer within {timeout:.2f} s")
            try:
                popped = self._client().blpop([answers], timeout=min(left, WAIT_SLICE_SECONDS))
            except redis.RedisError:  # Redis away for a moment: the clock runs on meanwhile
                time.sleep(min(0.5, max(left, 0.0)))
                continue
            if popped is None:
                continue
            sequence, answer = decode_request(popped[1])
            if sequence == self._sequence:
                return answer

    def close(self, request: bytes, timeout: float) -> bytes | None:
        """Sends the last request (`end`) and waits for its answer, then forgets the seat."""
        try:
            return self.exchange(request, timeout)
        finally:
            self.close_now()

    def close_now(self) -> None:
        """Forgets the seat: nothing more is sent on it, and any answer for it is refused."""
        try:
            pipe = self._client().pipeline(transaction=True)
            pipe.hdel(self.keys.outstanding, self.handle)
            pipe.hdel(self.keys.resume, self.handle, f"{self.handle}:start")
            pipe.delete(seat_owner_key(self.handle), seat_answers_key(self.handle))
            pipe.execute()
        except redis.RedisError:
            pass  # the keys expire by themselves

    def _send(self, request: bytes) -> None:
        """Records the request as the seat's outstanding one, then queues the handle (in this
        order, one round trip; the keys' lifetimes are set with the seat's first request)."""
        pipe = self._client().pipeline(transaction=False)
        first = self._sequence == 1
        if first:
            pipe.set(seat_owner_key(self.handle), str(self.bot_id), ex=SEAT_TTL_SECONDS)
            pipe.hset(self.keys.resume, f"{self.handle}:start", request)
        elif self._whole is not None:
            pipe.hset(self.keys.resume, self.handle, encode_request(self._sequence, self._whole))
            self._whole = None
        pipe.hset(self.keys.outstanding, self.handle, encode_request(self._sequence, request))
        pipe.rpush(self.keys.inbox, self.handle)
        if first:
            pipe.expire(self.keys.outstanding, SEAT_TTL_SECONDS)
            pipe.expire(self.keys.inbox, SEAT_TTL_SECONDS)
            pipe.expire(self.keys.resume, SEAT_TTL_SECONDS)
        pipe.execute()

    def _withdraw(self) -> None:
        with contextlib.suppress(redis.RedisError):
            self._client().hdel(self.keys.outstanding, self.handle)


class RelayedBotPlayer(GrpcPlayer):
    """A self-hosted bot's seats: a `GrpcPlayer` whose `Play` streams are relayed (`RelayStream`),
    so its clocks and forfeits are exactly a sandboxed bot's."""

    def __init__(self, bot_id: int, name: str, *, client: Callable[[], redis.Redis] = live_redis) -> None:
        super().__init__(f"self-hosted:{bot_id}", name, channel=False)
        self.streaming = True
        self.bot_id = bot_id
        self._client = client

    def _open_stream(self) -> RelayStream:
        return RelayStream(self.bot_id, client=self._client)


class AnswerRefusal(StrEnum):
    """Why the Arena did not take a self-hosted bot's answer."""

    NOT_YOURS = "no seat of this bot has that handle (another bot's, a match's that is over, or none)"
    NOT_DUE = "no request is waiting for an answer on that seat (answered already, or its time ran out)"


_ANSWER_SCRIPT = """
local owner = redis.call('GET', KEYS[1])
if owner ~= ARGV[1] then return 'not-yours' end
local pending = redis.call('HGET', KEYS[2], ARGV[2])
if not pending then return 'not-due' end
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('RPUSH', KEYS[3], string.sub(pending, 1, 8) .. ARGV[3])
redis.call('EXPIRE', KEYS[3], ARGV[4])
return 'taken'
"""


def relay_answer(
    *, bot_id: int, handle: str, answer: bytes, client: redis.Redis | None = None
) -> AnswerRefusal | None:
    """Passes a bot's answer for seat `handle` to the worker; None when taken, else why not.
    The answer carries the outstanding request's sequence number, so the worker matches it."""
    keys = BotRelayKeys(bot_id)
    outcome = decoded(
        (client or live_redis()).eval(
            _ANSWER_SCRIPT,
            3,
            seat_owner_key(handle),
            keys.outstanding,
            seat_answers_key(handle),
            str(bot_id),
            handle,
            answer,
            SEAT_TTL_SECONDS,
        )
    )
    if outcome == "taken":
        return None
    return AnswerRefusal.NOT_YOURS if outcome == "not-yours" else AnswerRefusal.NOT_DUE


def outstanding_requests(bot_id: int, *, client: redis.Redis | None = None) -> dict[str, tuple[int, bytes]]:
    """Every request of this bot still waiting for an answer, by handle (sent again on reconnect)."""
    found = (client or live_redis()).hgetall(BotRelayKeys(bot_id).outstanding)
    return {decoded(handle): decode_request(value) for handle, value in found.items()}


@dataclass(frozen=True)
class SeatResume:
    """What a connection that may not know a seat is sent for it: the seat's `start`, then its
    outstanding decision whole, under the outstanding request's sequence number."""

    start: bytes
    sequence: int
    whole: bytes


def resume_requests(
    bot_id: int, waiting: dict[str, tuple[int, bytes]], *, client: redis.Redis | None = None
) -> dict[str, SeatResume]:
    """For the handles of `waiting` (outstanding_requests) whose request is a decision: how to
    give the seat whole to a restarted bot, when the worker stored it for that very decision."""
    if not waiting:
        return {}
    handles = list(waiting)
    fields = [field for handle in handles for field in (f"{handle}:start", handle)]
    values = (client or live_redis()).hmget(BotRelayKeys(bot_id).resume, fields)
    return _resumes(handles, waiting, values)


def _resumes(
    handles: list[str], waiting: dict[str, tuple[int, bytes]], values: list[bytes | None]
) -> dict[str, SeatResume]:
    """The seats whose start and whole decision (`values`, two per handle) were stored for the
    very decision still waiting."""
    resumes = {}
    for index, handle in enumerate(handles):
        start, whole = values[2 * index], values[2 * index + 1]
        if start is None or whole is None:
            continue
        sequence, request = decode_request(whole)
        if sequence == waiting[handle][0]:
            resumes[handle] = SeatResume(start=start, sequence=sequence, whole=request)
    return resumes


CONNECTION_TTL_SECONDS = 15
"""A connection's record lapses this long after its session last renewed it (a dead Arena's
connection shows as gone within that)."""


@dataclass(frozen=True)
class BotConnection:
    """A self-hosted bot's live connection, as its Connect session records it."""

    connection: str
    since: float
    peer: str
    answer_ms: float | None

    @property
    def since_text(self) -> str:
        """When it connected, in UTC, as pages show times."""
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(self.since))


def connection_take(bot_id: int, *, connection: str, peer: str, client: redis.Redis | None = None) -> None:
    """Makes `connection` the bot's one connection (a newer one replaces any other: the other's
    session sees it at its next renewal and ends)."""
    keys = BotRelayKeys(bot_id)
    pipe = (client or live_redis()).pipeline(transaction=True)
    pipe.delete(keys.connection)
    pipe.hset(keys.connection, mapping={"id": connection, "since": f"{time.time():.3f}", "peer": peer[:150]})
    pipe.expire(keys.connection, CONNECTION_TTL_SECONDS)
    pipe.execute()


def connection_renew(bot_id: int, *, connection: str, client: redis.Redis | None = None) -> bool:
    """Keeps `connection` the bot's live one for another while; False once another replaced it."""
    keys = BotRelayKeys(bot_id)
    redis_client = client or live_redis()
    if decoded(redis_client.hget(keys.connection, "id") or b"") != connection:
        return False
    redis_client.expire(keys.connection, CONNECTION_TTL_SECONDS)
    return True


def connection_answer_time(
    bot_id: int, *, connection: str, milliseconds: float, client: redis.Redis | None = None
) -> None:
    """Records how long the connection's answers take from send to receive (network and
    thinking), as its session has smoothed them, if it is still the bot's connection."""
    keys = BotRelayKeys(bot_id)
    redis_client = client or live_redis()
    if decoded(redis_client.hget(keys.connection, "id") or b"") == connection:
        redis_client.hset(keys.connection, "answer_ms", f"{milliseconds:.1f}")


def inbox_take(
    bot_id: int, handle: str, *, connection: str, client: redis.Redis | None = None
) -> tuple[bool, tuple[int, bytes] | None]:
    """For a handle just popped from the bot's inbox, in one round trip: whether `connection` is
    still the bot's, and the request waiting on the handle (None when it was answered or
    withdrawn meanwhile)."""
    keys = BotRelayKeys(bot_id)
    pipe = (client or live_redis()).pipeline(transaction=False)
    pipe.hget(keys.connection, "id")
    pipe.hget(keys.outstanding, handle)
    current, waiting = pipe.execute()
    return decoded(current or b"") == connection, None if waiting is None else decode_request(waiting)


def connection_drop(bot_id: int, *, connection: str, client: redis.Redis | None = None) -> None:
    """Forgets `connection` if it is still the bot's (a replaced one leaves its successor be)."""
    keys = BotRelayKeys(bot_id)
    redis_client = client or live_redis()
    if decoded(redis_client.hget(keys.connection, "id") or b"") == connection:
        redis_client.delete(keys.connection)


def bot_connection(bot_id: int, *, client: redis.Redis | None = None) -> BotConnection | None:
    """The bot's live connection now, None when it has none."""
    found = (client or live_redis()).hgetall(BotRelayKeys(bot_id).connection)
    values = {decoded(key): decoded(value) for key, value in found.items()}
    if "id" not in values:
        return None
    answer = values.get("answer_ms")
    return BotConnection(
        connection=values["id"],
        since=float(values.get("since", "0")),
        peer=values.get("peer", ""),
        answer_ms=float(answer) if answer else None,
    )


def bots_connected(bot_ids: list[int], *, client: redis.Redis | None = None) -> set[int]:
    """Which of `bot_ids` have a live connection now: one round trip however many (matchmaking
    asks for every self-hosted bot of a ladder at once)."""
    if not bot_ids:
        return set()
    pipe = (client or live_redis()).pipeline(transaction=False)
    for bot_id in bot_ids:
        pipe.hexists(BotRelayKeys(bot_id).connection, "id")
    return {bot_id for bot_id, present in zip(bot_ids, pipe.execute(), strict=True) if present}


def next_handle(bot_id: int, *, timeout: float, client: redis.Redis | None = None) -> str | None:
    """The next seat handle whose request waits to be sent to the bot (None after `timeout`)."""
    popped = (client or live_redis()).blpop([BotRelayKeys(bot_id).inbox], timeout=timeout)
    return None if popped is None else decoded(popped[1])


def handle_return(bot_id: int, handle: str, *, client: redis.Redis | None = None) -> None:
    """Puts a handle back at the head of the inbox (popped by a session that was replaced)."""
    (client or live_redis()).lpush(BotRelayKeys(bot_id).inbox, handle)


# The Arena's Connect sessions are coroutines on its event loop (arena_api.connect): the same calls
# on the asyncio client, so a connected bot waits on its inbox without a thread. Each is its
# namesake above, one for one.


_answer_scripts: weakref.WeakKeyDictionary[redis.asyncio.Redis, AsyncScript] = weakref.WeakKeyDictionary()


async def relay_answer_async(*, bot_id: int, handle: str, answer: bytes) -> AnswerRefusal | None:
    """`relay_answer` on the event loop's client."""
    keys = BotRelayKeys(bot_id)
    client = live_redis_async()
    script = _answer_scripts.get(client)
    if script is None:  # EVALSHA from now on: Redis need not read and hash the script each answer
        script = _answer_scripts[client] = client.register_script(_ANSWER_SCRIPT)
    outcome = decoded(
        await script(
            keys=[seat_owner_key(handle), keys.outstanding, seat_answers_key(handle)],
            args=[str(bot_id), handle, answer, SEAT_TTL_SECONDS],
        )
    )
    if outcome == "taken":
        return None
    return AnswerRefusal.NOT_YOURS if outcome == "not-yours" else AnswerRefusal.NOT_DUE


async def outstanding_requests_async(bot_id: int) -> dict[str, tuple[int, bytes]]:
    """`outstanding_requests` on the event loop's client."""
    found = await live_redis_async().hgetall(BotRelayKeys(bot_id).outstanding)
    return {decoded(handle): decode_request(value) for handle, value in found.items()}


async def resume_requests_async(bot_id: int, waiting: dict[str, tuple[int, bytes]]) -> dict[str, SeatResume]:
    """`resume_requests` on the event loop's client."""
    if not waiting:
        return {}
    handles = list(waiting)
    fields = [field for handle in handles for field in (f"{handle}:start", handle)]
    values = await live_redis_async().hmget(BotRelayKeys(bot_id).resume, fields)
    return _resumes(handles, waiting, values)


async def connection_take_async(bot_id: int, *, connection: str, peer: str) -> None:
    """`connection_take` on the event loop's client."""
    keys = BotRelayKeys(bot_id)
    pipe = live_redis_async().pipeline(transaction=True)
    pipe.delete(keys.connection)
    pipe.hset(keys.connection, mapping={"id": connection, "since": f"{time.time():.3f}", "peer": peer[:150]})
    pipe.expire(keys.connection, CONNECTION_TTL_SECONDS)
    await pipe.execute()


async def connection_renew_async(bot_id: int, *, connection: str) -> bool:
    """`connection_renew` on the event loop's client."""
    keys = BotRelayKeys(bot_id)
    client = live_redis_async()
    if decoded(await client.hget(keys.connection, "id") or b"") != connection:
        return False
    await client.expire(keys.connection, CONNECTION_TTL_SECONDS)
    return True


async def connection_answer_time_async(bot_id: int, *, connection: str, milliseconds: float) -> None:
    """`connection_answer_time` on the event loop's client."""
    keys = BotRelayKeys(bot_id)
    client = live_redis_async()
    if decoded(await client.hget(keys.connection, "id") or b"") == connection:
        await client.hset(keys.connection, "answer_ms", f"{milliseconds:.1f}")


async def inbox_take_async(
    bot_id: int, handle: str, *, connection: str
) -> tuple[bool, tuple[int, bytes] | None]:
    """`inbox_take` on the event loop's client."""
    keys = BotRelayKeys(bot_id)
    pipe = live_redis_async().pipeline(transaction=False)
    pipe.hget(keys.connection, "id")
    pipe.hget(keys.outstanding, handle)
    current, waiting = await pipe.execute()
    return decoded(current or b"") == connection, None if waiting is None else decode_request(waiting)


async def connection_drop_async(bot_id: int, *, connection: str) -> None:
    """`connection_drop` on the event loop's client."""
    keys = BotRelayKeys(bot_id)
    client = live_redis_async()
    if decoded(await client.hget(keys.connection, "id") or b"") == connection:
        await client.delete(keys.connection)


async def next_handle_async(bot_id: int, *, timeout: float) -> str | None:
    """`next_handle` on the event loop's client: the wait holds a Redis connection, not a thread."""
    popped = await live_redis_async().blpop([BotRelayKeys(bot_id).inbox], timeout=timeout)
    return None if popped is None else decoded(popped[1])


async def handle_return_async(bot_id: int, handle: str) -> None:
    """`handle_return` on the event loop's client."""
    await live_redis_async().lpush(BotRelayKeys(bot_id).inbox, handle)
