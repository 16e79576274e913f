"""The Arena's Connect stream: a self-hosted bot's one connection, over which it plays its seats.

A session takes over the bot's connection record (a newer session replaces an older one, which
ends with ABORTED at its next renewal), answers `attached`, sends every request still waiting from
before (a reconnect continues where the last connection stopped), then relays: the worker's
requests for the bot's seats go out as `SeatRequest`s (live.bot_relay), and the bot's answers come
back and are passed on only for a seat of this bot with a request waiting (`refused` otherwise).

Three threads per session: gRPC's own (this generator, which sends), one reading the bot's
answers, one waiting on the bot's inbox. Nothing the bot sends is trusted: an answer is bytes the
worker parses and checks as it would a sandboxed bot's; here only its seat handle is checked,
and how fast it sends (a flood ends the session with RESOURCE_EXHAUSTED).
"""

from __future__ import annotations

import contextlib
import queue
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import redis
from django.db import DatabaseError

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import bot_pb2
from septet_platform.bots.models import Bot, ConnectionEvent
from septet_platform.bots.self_hosted import connection_event_record
from septet_platform.live import bot_relay

INBOX_WAIT_SECONDS = 1.0
"""How long the inbox thread blocks at once, so it notices a replaced or closed session soon."""
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

    def __init__(self, bot: Bot, context: grpc.ServicerContext) -> None:
        self.bot = bot
        self.context = context
        self.connection = secrets.token_urlsafe(CONNECTION_ID_BYTES)
        self._out: queue.Queue[pb.ConnectResponse | _End] = queue.Queue()
        self._sent: dict[str, tuple[int, float]] = {}
        """Handle -> (sequence number, when) of the last request sent on this connection."""
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._answer_ms: float | None = None
        """How long answers take from send to receive, smoothed (network and thinking)."""
        self._restarted: set[str] = set()
        """Seats whose `start` was sent again on attach (`_resume`): their `started` is not relayed."""
        self._ending: _End | None = None
        """Why the session ended, for the owner's connection log (None: the call went away)."""

    def run(self, requests: Iterator[pb.ConnectRequest]) -> Iterator[pb.ConnectResponse]:
        bot_relay.connection_take(self.bot.pk, connection=self.connection, peer=self.context.peer())
        self._log(ConnectionEvent.Kind.CONNECTED, f"from {self.context.peer()}")
        self.context.add_callback(self._done.set)
        try:
            yield pb.ConnectResponse(
                attached=pb.ConnectAttached(bot=self.bot.name, connection=self.connection)
            )
            waiting = bot_relay.outstanding_requests(self.bot.pk)
            resumes = bot_relay.resume_requests(self.bot.pk, waiting)
            for handle, (sequence, request) in sorted(waiting.items()):
                if handle in resumes:
                    self._resume(handle, resumes[handle])
                else:
                    self._offer(handle, sequence, request)
            threading.Thread(target=self._read_answers, args=(requests,), daemon=True).start()
            threading.Thread(target=self._wait_inbox, daemon=True).start()
            while not self._done.is_set():
                try:
                    item = self._out.get(timeout=RENEW_EVERY_SECONDS)
                except queue.Empty:
                    continue
                if isinstance(item, _End):
                    self._ending = item
                    if item.code is not None:
                        self.context.abort(item.code, item.details)
                    return
                yield item
        finally:
            self._done.set()
            bot_relay.connection_drop(self.bot.pk, connection=self.connection)
            self._log_end()

    def _log_end(self) -> None:
        """Records how the session ended in the owner's connection log."""
        ending = self._ending
        if ending is not None and ending.code == grpc.StatusCode.ABORTED:
            self._log(ConnectionEvent.Kind.REPLACED, ending.details)
        elif ending is not None and ending.code is not None:
            self._log(ConnectionEvent.Kind.DISCONNECTED, f"{ending.code.name}: {ending.details}")
        elif ending is not None:
            self._log(ConnectionEvent.Kind.DISCONNECTED, "the bot closed its connection")
        else:
            self._log(
                ConnectionEvent.Kind.DISCONNECTED, "the connection was lost (network, keepalive or client)"
            )

    def _log(self, kind: str, detail: str) -> None:
        """A line of the connection log; a database that is away costs the log line, not the play."""
        with contextlib.suppress(DatabaseError):
            connection_event_record(bot_id=self.bot.pk, kind=kind, detail=detail)

    def _offer(self, handle: str, sequence: int, request: bytes) -> None:
        """Queues a request for the bot unless this connection sent it already."""
        with self._lock:
            if self._sent.get(handle, (0, 0.0))[0] >= sequence:
                return
            self._sent[handle] = (sequence, time.monotonic())
        message = pb.SeatRequest(seat=handle, request=bot_pb2.PlayRequest.FromString(request))
        self._out.put(pb.ConnectResponse(request=message))

    def _resume(self, handle: str, resume: bot_relay.SeatResume) -> None:
        """Gives a seat whole to this connection, whose bot may have restarted since the seat's
        last request: its `start` again (the bot's `started` is taken here, not passed on), then
        the outstanding decision with every field. A bot that still knows the seat starts it over
        from the same state, so either way it answers the decision the worker waits for."""
        with self._lock:
            self._restarted.add(handle)
        start = pb.SeatRequest(seat=handle, request=bot_pb2.PlayRequest.FromString(resume.start))
        self._out.put(pb.ConnectResponse(request=start))
        self._offer(handle, resume.sequence, resume.whole)

    def _wait_inbox(self) -> None:
        """Moves the worker's requests for this bot to the session's queue while it is the bot's
        connection; ends the session with ABORTED once a newer connection replaced it."""
        renewed = time.monotonic()
        try:
            while not self._done.is_set():
                if time.monotonic() - renewed >= RENEW_EVERY_SECONDS:
                    if not bot_relay.connection_renew(self.bot.pk, connection=self.connection):
                        self._end(grpc.StatusCode.ABORTED, self._replaced())
                        return
                    self._answer_time_record()
                    renewed = time.monotonic()
                handle = bot_relay.next_handle(self.bot.pk, timeout=INBOX_WAIT_SECONDS)
                if handle is None:
                    continue
                current, waiting = bot_relay.inbox_take(self.bot.pk, handle, connection=self.connection)
                if self._done.is_set() or not current:
                    bot_relay.handle_return(self.bot.pk, handle)  # for the connection that replaced this one
                    if not self._done.is_set():
                        self._end(grpc.StatusCode.ABORTED, self._replaced())
                    return
                if waiting is not None:
                    self._offer(handle, *waiting)
        except redis.RedisError as error:
            self._end(grpc.StatusCode.UNAVAILABLE, f"the relay is unavailable ({error}); reconnect")

    def _read_answers(self, requests: Iterator[pb.ConnectRequest]) -> None:
        budget = _AnswerBudget()
        try:
            for request in requests:
                if self._done.is_set():
                    return
                if not budget.take():
                    self._end(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"more than {ANSWERS_PER_SECOND:.0f} messages a second: a bot answers once a request",
                    )
                    return
                self._answer(request)
        except Exception as error:  # the call ended under the reader: reported, not raised
            if isinstance(error, grpc.RpcError) or self._done.is_set():
                self._end(None)
                return
            # The input check aborted on a message that did not parse or was out of range: its
            # status is set on the call already; the sending thread ends it with that status.
            details = self.context.details()
            self._end(
                self.context.code() or grpc.StatusCode.INVALID_ARGUMENT,
                details.decode() if isinstance(details, bytes) else (details or str(error)),
            )
            return
        self._end(None)  # the bot closed its side: the session ends OK

    def _answer(self, request: pb.ConnectRequest) -> None:
        handle = request.seat
        if not handle or not request.HasField("answer"):
            self._refuse(handle, "a ConnectRequest needs a seat handle and an answer")
            return
        with self._lock:
            restarted = handle in self._restarted
            self._restarted.discard(handle)
        if restarted and request.answer.WhichOneof("message") == "started":
            return  # the answer to `_resume`'s start: the worker asked for none
        answer = request.answer.SerializeToString()
        refusal = bot_relay.relay_answer(bot_id=self.bot.pk, handle=handle, answer=answer)
        if refusal is not None:
            self._refuse(handle, str(refusal))
            return
        with self._lock:
            sent = self._sent.get(handle)
            if sent is not None:  # smoothed here; written with the connection's renewal
                took = (time.monotonic() - sent[1]) * 1000
                before = self._answer_ms
                self._answer_ms = took if before is None else 0.8 * before + 0.2 * took

    def _answer_time_record(self) -> None:
        with self._lock:
            smoothed = self._answer_ms
        if smoothed is not None:
            bot_relay.connection_answer_time(self.bot.pk, connection=self.connection, milliseconds=smoothed)

    def _refuse(self, handle: str, reason: str) -> None:
        self._out.put(pb.ConnectResponse(refused=pb.ConnectRefused(seat=handle, reason=reason)))

    def _end(self, code: grpc.StatusCode | None, details: str = "") -> None:
        self._out.put(_End(code, details))

    def _replaced(self) -> str:
        return f"a newer connection for the bot {self.bot.name!r} replaced this one"
