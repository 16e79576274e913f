"""The Arena's Connect stream: a self-hosted bot's one connection, over which it plays its seats.

A session takes over the bot's connection record (a newer session replaces an older one, which
ends with ABORTED at its next renewal), answers `attached`, sends every request still waiting from
before (a reconnect continues where the last connection stopped), then relays: the worker's
requests for the bot's seats go out as `SeatRequest`s (live.bot_relay), and the bot's answers come
back and are passed on only for a seat of this bot with a request waiting (`refused` otherwise).

No thread per session: a session is three coroutines on the Arena's event loop (this generator,
which sends; one reading the bot's answers; one waiting on the bot's inbox with an asyncio Redis
BLPOP), so one Arena process holds hundreds of connected bots and a relayed decision costs no
thread hand-off. Only the connection log (the database) is written from a pool thread. Nothing the
bot sends is trusted: an answer is bytes the worker parses and checks as it would a sandboxed
bot's; here only its seat handle is checked, and how fast it sends (a flood ends the session with
RESOURCE_EXHAUSTED).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import redis
from django.db import DatabaseError, close_old_connections

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import bot_pb2
from septet_platform.arena_api.handlers import Refusal
from septet_platform.bots.models import Bot, ConnectionEvent
from septet_platform.bots.self_hosted import connection_event_record
from septet_platform.live import bot_relay

INBOX_WAIT_SECONDS = 1.0
"""How long the inbox wait blocks at once, so it notices a replaced or closed session soon."""
RENEW_EVERY_SECONDS = 3.0
ANSWERS_PER_SECOND = 200.0
ANSWER_BURST = 400.0
"""A bot answers once per request; far more than this is a flood, not play."""
CONNECTION_ID_BYTES = 9


@dataclass(frozen=True)
class _End:
    """What ends a session: None for the bot closing its side (OK), else a status to abort with."""

    code: grpc.StatusCode | None
    details: str = ""


class _AnswerBudget:
    """A token bucket on the bot's answers."""

    def __init__(self) -> None:
        self.tokens = ANSWER_BURST
        self.at = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(ANSWER_BURST, self.tokens + (now - self.at) * ANSWERS_PER_SECOND)
        self.at = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


class ConnectSession:
    """One Connect call of one self-hosted bot (see the module docstring)."""

    def __init__(self, bot: Bot, context: grpc.aio.ServicerContext) -> None:
        self.bot_id: int = bot.pk
        self.bot_name = bot.name
        self.context = context
        self.connection = secrets.token_urlsafe(CONNECTION_ID_BYTES)
        self._out: asyncio.Queue[pb.ConnectResponse | _End] = asyncio.Queue()
        self._sent: dict[str, tuple[int, float]] = {}
        """Handle -> (sequence number, when) of the last request sent on this connection."""
        self._closing = False
        """Set when the call ends: the inbox wait then returns, giving back a handle it popped."""
        self._answer_ms: float | None = None
        """How long answers take from send to receive, smoothed (network and thinking)."""
        self._restarted: set[str] = set()
        """Seats whose `start` was sent again on attach (`_resume`): their `started` is not relayed."""
        self._ending: _End | None = None
        """Why the session ended, for the owner's connection log (None: the call went away)."""

    async def run(self, requests: AsyncIterator[pb.ConnectRequest]) -> AsyncIterator[pb.ConnectResponse]:
        peer = self.context.peer()
        await bot_relay.connection_take_async(self.bot_id, connection=self.connection, peer=peer)
        await self._log(ConnectionEvent.Kind.CONNECTED, f"from {peer}")
        reader: asyncio.Task[None] | None = None
        try:
            yield pb.ConnectResponse(
                attached=pb.ConnectAttached(bot=self.bot_name, connection=self.connection)
            )
            waiting = await bot_relay.outstanding_requests_async(self.bot_id)
            resumes = await bot_relay.resume_requests_async(self.bot_id, waiting)
            for handle, (sequence, request) in sorted(waiting.items()):
                if handle in resumes:
                    self._resume(handle, resumes[handle])
                else:
                    self._offer(handle, sequence, request)
            reader = asyncio.create_task(self._read_answers(requests))
            # Not cancelled when the call ends (a BLPOP cut short could lose a handle it popped):
            # it sees `_closing` within INBOX_WAIT_SECONDS and gives back what it took.
            _background(asyncio.create_task(self._wait_inbox()))
            while True:
                item = await self._out.get()
                if isinstance(item, _End):
                    self._ending = item
                    if item.code is not None:
                        await self.context.abort(item.code, item.details)
                    return
                yield item
        finally:
            self._closing = True
            if reader is not None:
                reader.cancel()
            with contextlib.suppress(redis.RedisError):
                await bot_relay.connection_drop_async(self.bot_id, connection=self.connection)
            await self._log_end()

    async def _log_end(self) -> None:
        """Records how the session ended in the owner's connection log."""
        ending = self._ending
        if ending is not None and ending.code == grpc.StatusCode.ABORTED:
            await self._log(ConnectionEvent.Kind.REPLACED, ending.details)
        elif ending is not None and ending.code is not None:
            await self._log(ConnectionEvent.Kind.DISCONNECTED, f"{ending.code.name}: {ending.details}")
        elif ending is not None:
            await self._log(ConnectionEvent.Kind.DISCONNECTED, "the bot closed its connection")
        else:
            await self._log(
                ConnectionEvent.Kind.DISCONNECTED, "the connection was lost (network, keepalive or client)"
            )

    async def _log(self, kind: str, detail: str) -> None:
        """A line of the connection log, written on a pool thread (the database is not for the
        event loop); a database that is away costs the log line, not the play."""
        await asyncio.to_thread(_log_record, self.bot_id, kind, detail)

    def _offer(self, handle: str, sequence: int, request: bytes) -> None:
        """Queues a request for the bot unless this connection sent it already."""
        if self._sent.get(handle, (0, 0.0))[0] >= sequence:
            return
        self._sent[handle] = (sequence, time.monotonic())
        message = pb.SeatRequest(seat=handle, request=bot_pb2.PlayRequest.FromString(request))
        self._out.put_nowait(pb.ConnectResponse(request=message))

    def _resume(self, handle: str, resume: bot_relay.SeatResume) -> None:
        """Gives a seat whole to this connection, whose bot may have restarted since the seat's
        last request: its `start` again (the bot's `started` is taken here, not passed on), then
        the outstanding decision with every field. A bot that still knows the seat starts it over
        from the same state, so either way it answers the decision the worker waits for."""
        self._restarted.add(handle)
        start = pb.SeatRequest(seat=handle, request=bot_pb2.PlayRequest.FromString(resume.start))
        self._out.put_nowait(pb.ConnectResponse(request=start))
        self._offer(handle, resume.sequence, resume.whole)

    async def _wait_inbox(self) -> None:
        """Moves the worker's requests for this bot to the session's queue while it is the bot's
        connection; ends the session with ABORTED once a newer connection replaced it."""
        renewed = time.monotonic()
        try:
            while not self._closing:
                if time.monotonic() - renewed >= RENEW_EVERY_SECONDS:
                    if not await bot_relay.connection_renew_async(self.bot_id, connection=self.connection):
                        self._end(grpc.StatusCode.ABORTED, self._replaced())
                        return
                    await self._answer_time_record()
                    renewed = time.monotonic()
                handle = await bot_relay.next_handle_async(self.bot_id, timeout=INBOX_WAIT_SECONDS)
                if handle is None:
                    continue
                current, waiting = await bot_relay.inbox_take_async(
                    self.bot_id, handle, connection=self.connection
                )
                if self._closing or not current:
                    # for the connection that replaced this one
                    await bot_relay.handle_return_async(self.bot_id, handle)
                    if not self._closing:
                        self._end(grpc.StatusCode.ABORTED, self._replaced())
                    return
                if waiting is not None:
                    self._offer(handle, *waiting)
        except redis.RedisError as error:
            self._end(grpc.StatusCode.UNAVAILABLE, f"the relay is unavailable ({error}); reconnect")

    async def _read_answers(self, requests: AsyncIterator[pb.ConnectRequest]) -> None:
        budget = _AnswerBudget()
        try:
            async for request in requests:
                if self._closing:
                    return
                if not budget.take():
                    self._end(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"more than {ANSWERS_PER_SECOND:.0f} messages a second: a bot answers once a request",
                    )
                    return
                await self._answer(request)
        except Refusal as refusal:  # the input check refused a message (it did not parse, or out of range)
            self._end(refusal.code, refusal.details)
            return
        except redis.RedisError as error:
            self._end(grpc.StatusCode.UNAVAILABLE, f"the relay is unavailable ({error}); reconnect")
            return
        except asyncio.CancelledError:
            raise
        except Exception:  # the call ended under the reader: reported, not raised
            self._end(None)
            return
        self._end(None)  # the bot closed its side: the session ends OK

    async def _answer(self, request: pb.ConnectRequest) -> None:
        handle = request.seat
        if not handle or not request.HasField("answer"):
            self._refuse(handle, "a ConnectRequest needs a seat handle and an answer")
            return
        restarted = handle in self._restarted
        self._restarted.discard(handle)
        if restarted and request.answer.WhichOneof("message") == "started":
            return  # the answer to `_resume`'s start: the worker asked for none
        answer = request.answer.SerializeToString()
        refusal = await bot_relay.relay_answer_async(bot_id=self.bot_id, handle=handle, answer=answer)
        if refusal is not None:
            self._refuse(handle, str(refusal))
            return
        sent = self._sent.get(handle)
        if sent is not None:  # smoothed here; written with the connection's renewal
            took = (time.monotonic() - sent[1]) * 1000
            before = self._answer_ms
            self._answer_ms = took if before is None else 0.8 * before + 0.2 * took

    async def _answer_time_record(self) -> None:
        smoothed = self._answer_ms
        if smoothed is not None:
            await bot_relay.connection_answer_time_async(
                self.bot_id, connection=self.connection, milliseconds=smoothed
            )

    def _refuse(self, handle: str, reason: str) -> None:
        self._out.put_nowait(pb.ConnectResponse(refused=pb.ConnectRefused(seat=handle, reason=reason)))

    def _end(self, code: grpc.StatusCode | None, details: str = "") -> None:
        self._out.put_nowait(_End(code, details))

    def _replaced(self) -> str:
        return f"a newer connection for the bot {self.bot_name!r} replaced this one"


_running: set[asyncio.Task[None]] = set()
"""Tasks left to finish by themselves (the event loop keeps only weak references to tasks)."""


def _background(task: asyncio.Task[None]) -> None:
    _running.add(task)
    task.add_done_callback(_running.discard)


def _log_record(bot_id: int, kind: str, detail: str) -> None:
    close_old_connections()
    try:
        with contextlib.suppress(DatabaseError):
            connection_event_record(bot_id=bot_id, kind=kind, detail=detail)
    finally:
        close_old_connections()
