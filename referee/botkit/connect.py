"""A self-hosted bot: it dials out to the Arena and plays its seats from its own machine.

    from referee.sdk import Bot, connect

    class Lowest(Bot):
        name = "lowest"

        def decide(self, info, legal):
            return legal[0]

    if __name__ == "__main__":
        connect(Lowest())      # SEPTET_SERVER=host:50051 SEPTET_TOKEN=sep_... python bot.py

The bot calls `Arena.Connect` (protos/septet/v1/arena.proto) with a token scoped to it. The
server answers `attached`, then sends every seat it gives the bot as the messages of `Bot.Play`
(start, decide..., end), each with the seat's handle; the bot answers each with the same handle, as
it would on `Play`. So a seat here is what a `Play` stream is to a served bot, and the SDK answers
it the same way (`referee.botkit.answering.SeatStream`): one state per seat, whole information
states for `decide`. Seats take turns only with themselves: each is answered in order on a worker
of its own, so a seat whose answer takes long (a forced answer held, a bridged bot thinking)
never holds up another's.

The connection is kept: keepalive pings find a dead one within half a minute; a dropped connection
(UNAVAILABLE, a server restart) is dialled again after a pause doubling from 0.5 s to 30 s, drawn
at random from the upper half of each step so that bots cut off together do not return together.
Each seat's state outlives the connection, and a request the server sends again after a
reconnect (it was not answered on the old one) is answered from what was already worked out. A
token the server refuses (UNAUTHENTICATED, PERMISSION_DENIED) stops at once with one line: dialling
again would not help. A newer connection for the same bot replaces this one (ABORTED): it stops
and says so.

`Connector` is that machinery for any way of answering a seat (`SeatAnswerer`): `connect` answers
with the bot in this process, `septet bot connect` (referee.tools.bot_connect) with a bot process
it bridges to.
"""

from __future__ import annotations

import os
import queue
import random
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import grpc

from referee.botkit.answering import BotAnswers, SeatFailure, SeatStream
from referee.botkit.protocol import arena_pb2, arena_pb2_grpc, bot_pb2

if TYPE_CHECKING:
    from referee.botkit.sdk import Bot

DEFAULT_SERVER = "127.0.0.1:50051"
"""The one-command platform's Arena (`septet up`), as for the CLI's other commands over it."""
SERVER_ENV = "SEPTET_SERVER"
TOKEN_ENV = "SEPTET_TOKEN"
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""The largest message either way: a decision is a few KiB, a whole Oh 7? state under 10."""
CHANNEL_OPTIONS = (
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.enable_retries", 0),
)
"""A ping every 20 s, even while no seat is asked anything (the server allows one every 5 s), and
the connection given up 10 s after an unanswered one: a connection a NAT or a proxy dropped
silently is found within half a minute, not at the next TCP timeout. No retries by gRPC itself:
a lost connection is this module's to dial again."""
STABLE_SECONDS = 10.0
"""A connection attached this long resets the pause before the next attempt to its shortest: a
server that takes the bot and drops it at once is not dialled twice a second."""
WORKERS = 64
"""Threads answering seats: one per seat being answered at a time (a bridged seat's thread waits
for the bot's answer), so this many seats can wait on their bot at once."""
SEAT_IDLE_SECONDS = 600.0
"""A seat asked nothing for this long is forgotten (a match the server never ended): a seat's
decisions come within seconds of one another."""
SIGNAL_POLL_SECONDS = 0.1
"""How often the main thread wakes up to run signal handlers while the connection plays."""
FINAL = {
    grpc.StatusCode.UNIMPLEMENTED: "does not take self-hosted bots (UNIMPLEMENTED)",
    grpc.StatusCode.INVALID_ARGUMENT: "refused the connection",
    grpc.StatusCode.FAILED_PRECONDITION: "refused the connection",
    grpc.StatusCode.NOT_FOUND: "refused the connection",
}
"""Statuses that dialling again would meet again, besides a refused token: what the server said."""
TOKEN_REFUSED = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)

Outgoing: TypeAlias = "queue.SimpleQueue[arena_pb2.ConnectRequest | None]"
"""One connection's answers to send; None ends them."""


class SeatAnswerer(Protocol):
    """One seat's answers, in order: what a `Play` stream is to a served bot."""

    def answer(self, request: bot_pb2.PlayRequest) -> bot_pb2.PlayResponse:
        """`started`, `decision` or `ended` for `start`, `decide` or `end`; SeatFailure when the
        seat cannot be answered (the seat then forfeits)."""
        ...

    def close(self) -> None:
        """The seat is over (or the connection stops for good): let go of what it holds."""
        ...


class ConnectRefused(Exception):
    """The server will not take this bot (a refused token, no Connect): one line saying so."""


class ConnectReplaced(Exception):
    """A newer connection for the same bot took over (ABORTED): this one stops."""


@dataclass(frozen=True)
class Backoff:
    """The pause before dialling again: doubling from `first` seconds up to `most`."""

    first: float = 0.5
    most: float = 30.0

    def delay(self, failures: int, rng: random.Random) -> float:
        """The pause after `failures` failed attempts in a row (0: the connection just dropped),
        drawn from the upper half of its step (jitter: bots cut off together do not all come back
        at the same instant)."""
        ceiling = min(self.most, self.first * 2 ** min(failures, 32))
        return rng.uniform(ceiling / 2, ceiling)


@dataclass
class _Seat:
    """One seat handle the server gave: its answerer, the requests waiting for it, and the last
    request taken with its answer (sent again when the server sends that request again)."""

    answerer: SeatAnswerer
    waiting: deque[tuple[bot_pb2.PlayRequest, int]] = field(default_factory=deque)
    busy: bool = False
    last: bot_pb2.PlayRequest | None = None
    last_session: int = 0
    """The connection the last request came on: its answer goes there (or on the connection that
    sends the request again), never on a connection that did not ask for it."""
    answer: bot_pb2.PlayResponse | None = None
    over: bool = False
    touched: float = field(default_factory=time.monotonic)
    retired: bool = False
    """Given again from its start by the server (`_take`): a new seat answers now, and this one's
    answerer is closed once its answer in progress is done."""


class Connector:
    """One bot's connection to the Arena at `server`, dialled again until it is stopped, refused
    or replaced. `seat(handle)` makes the answerer of each seat the server gives; `say` prints a
    line for the person running the bot (connected, reconnecting, refused answers)."""

    def __init__(
        self,
        server: str,
        token: str,
        seat: Callable[[str], SeatAnswerer],
        *,
        say: Callable[[str], None],
        backoff: Backoff | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.server = server
        self._metadata = (("authorization", f"Bearer {token}"),)
        self._new_seat = seat
        self._say = say
        self._backoff = backoff or Backoff()
        self._rng = rng or random.Random()
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="septet-seat")
        self._lock = threading.Lock()
        self._seats: dict[str, _Seat] = {}
        self._session = 0
        """Connections made so far; the current one's number."""
        self._outgoing: Outgoing | None = None
        """Where answers go: the current connection's, once it is attached."""
        self._call: Any = None
        """The current connection's call (a grpc.Call that iterates the server's messages)."""
        self._stopping = threading.Event()
        self.attached: arena_pb2.ConnectAttached | None = None
        """What the server said on the latest attach: the bot and the connection's id."""
        self.attachments = 0
        """Connections attached so far (1 + reconnects)."""
        self._thread: threading.Thread | None = None
        self._outcome: BaseException | None = None

    def run(self) -> None:
        """Plays until `stop()`; raises ConnectRefused or ConnectReplaced when the server ends it."""
        failures = 0
        try:
            while not self._stopping.is_set():
                attached_for, code, details = self._connection()
                if self._stopping.is_set():
                    return
                _raise_if_final(self.server, code, details)
                if attached_for is not None and attached_for >= STABLE_SECONDS:
                    failures = 0
                delay = self._backoff.delay(failures, self._rng)
                failures += 1
                what = f"{code.name}: {details}" if details else code.name
                if attached_for is None:
                    self._say(f"cannot connect to {self.server} ({what}); trying again in {delay:.1f} s")
                else:
                    self._say(f"lost the connection to {self.server} ({what}); reconnecting in {delay:.1f} s")
                if self._stopping.wait(delay):
                    return
        finally:
            self._close_seats()

    def start(self) -> None:
        """`run` on a thread of its own; `finished` waits for it and raises what it raised."""
        self._thread = threading.Thread(target=self._run_kept, name="septet-connect", daemon=True)
        self._thread.start()

    def finished(self, timeout: float) -> bool:
        """Whether the connection (started by `start`) is over, waiting up to `timeout` seconds;
        once over, raises ConnectRefused or ConnectReplaced if that is how it ended."""
        assert self._thread is not None, "start() first"
        self._thread.join(timeout)
        if self._thread.is_alive():
            return False
        if self._outcome is not None:
            raise self._outcome
        return True

    def stop(self, wait: float = 0.0) -> None:
        """Ends the connection (from any thread); with `wait`, waits that long for `start`'s thread."""
        self._stopping.set()
        with self._lock:
            call = self._call
        if call is not None:
            call.cancel()
        if wait and self._thread is not None:
            self._thread.join(wait)

    def _run_kept(self) -> None:
        try:
            self.run()
        except BaseException as error:  # handed to the thread that waits in `finished`
            self._outcome = error

    def _connection(self) -> tuple[float | None, grpc.StatusCode, str]:
        """One connection, from dialling to its end: how long it was attached (None: never), and
        the status it ended with."""
        outgoing: Outgoing = queue.SimpleQueue()
        channel = grpc.insecure_channel(self.server, options=list(CHANNEL_OPTIONS))
        attached_at: float | None = None
        with self._lock:
            self._session += 1
            session = self._session
        try:
            stub = arena_pb2_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
            call = stub.Connect(_until_none(outgoing), metadata=self._metadata)
            with self._lock:
                self._call = call
            if self._stopping.is_set():
                call.cancel()
            try:
                for response in call:
                    which = response.WhichOneof("message")
                    if which == "attached":
                        attached_at = time.monotonic()
                        self._attach(response.attached, outgoing)
                    elif which == "request":
                        self._take(response.request, session)
                    elif which == "refused":
                        refused = response.refused
                        self._say(f"the server refused the answer for seat {refused.seat}: {refused.reason}")
                code, details = grpc.StatusCode.OK, "the server closed the connection"
            except grpc.RpcError as error:
                code = error.code() if isinstance(error, grpc.Call) else grpc.StatusCode.UNKNOWN
                details = (error.details() if isinstance(error, grpc.Call) else "") or ""
        finally:
            with self._lock:
                self._outgoing, self._call = None, None
            outgoing.put(None)
            channel.close()
        return (None if attached_at is None else time.monotonic() - attached_at), code, details

    def _attach(self, attached: arena_pb2.ConnectAttached, outgoing: Outgoing) -> None:
        with self._lock:
            self._outgoing = outgoing
            self.attached = attached
            self.attachments += 1
            again = self.attachments > 1
        verb = "reconnected" if again else "connected"
        self._say(f"{verb} to {self.server} as {attached.bot} (connection {attached.connection})")

    def _take(self, seat_request: arena_pb2.SeatRequest, session: int) -> None:
        """Queues a request for its seat, or answers it again when the server sent it again after
        a reconnect."""
        handle, request = seat_request.seat, seat_request.request
        forgotten: list[_Seat] = []
        with self._lock:
            seat = self._seats.get(handle)
            if seat is not None and _started_over(seat, request):
                seat.retired = True  # the server gives the seat again whole: start it over
                if not seat.busy:
                    forgotten.append(seat)
                seat = self._seats[handle] = _Seat(self._new_seat(handle))
            if seat is None:
                forgotten = self._forget_idle_seats()
                seat = self._seats[handle] = _Seat(self._new_seat(handle))
            seat.touched = time.monotonic()
            if seat.last_session < session and request == seat.last:
                seat.last_session = session  # asked again: its answer, made or to be made, goes here
                if seat.answer is not None:
                    self._send(handle, seat.answer)
            elif any(waiting == request and asked < session for waiting, asked in seat.waiting):
                pass  # asked again while still waiting its turn: answered once, where it was asked last
            elif seat.over:
                self._say(f"seat {handle} is over, but the server asked it {request.WhichOneof('message')}")
            else:
                seat.waiting.append((request, session))
                if not seat.busy:
                    seat.busy = True
                    self._pool.submit(self._answer_in_turn, handle, seat)
        for old in forgotten:
            old.answerer.close()

    def _answer_in_turn(self, handle: str, seat: _Seat) -> None:
        """Answers the seat's waiting requests one after another, each on the connection it came on."""
        while True:
            with self._lock:
                if not seat.waiting or self._stopping.is_set():
                    seat.busy = False
                    return
                request, session = seat.waiting.popleft()
                seat.last, seat.last_session, seat.answer = request, session, None
            answer = self._answer(handle, seat.answerer, request)
            over = request.WhichOneof("message") == "end"
            with self._lock:
                seat.answer, seat.over, seat.touched = answer, seat.over or over, time.monotonic()
                if seat.last_session == self._session and not seat.retired:
                    self._send(handle, answer)
            if seat.retired:
                with self._lock:
                    seat.busy = False
                seat.answerer.close()
                return
            if over:
                seat.answerer.close()

    def _answer(
        self, handle: str, answerer: SeatAnswerer, request: bot_pb2.PlayRequest
    ) -> bot_pb2.PlayResponse:
        """The seat's answer, or an empty one (which the server does not take: the seat forfeits,
        as a `Play` stream ended with an error would) when it cannot be answered, said here."""
        try:
            return answerer.answer(request)
        except SeatFailure as failure:
            reason = f"{failure.code.name}: {failure.reason}"
        except Exception as error:
            traceback.print_exc(file=sys.stderr)
            reason = f"{type(error).__name__}: {error}".splitlines()[0]
        asked = request.WhichOneof("message")
        self._say(f"seat {handle}: no answer to its {asked} ({reason}); the seat forfeits")
        return bot_pb2.PlayResponse()

    def _send(self, handle: str, answer: bot_pb2.PlayResponse) -> None:
        """On the current connection, if one is attached (the caller holds the lock)."""
        if self._outgoing is not None:
            self._outgoing.put(arena_pb2.ConnectRequest(seat=handle, answer=answer))

    def _forget_idle_seats(self) -> list[_Seat]:
        """Drops the seats asked nothing for SEAT_IDLE_SECONDS (the caller holds the lock and
        closes them after)."""
        stale = time.monotonic() - SEAT_IDLE_SECONDS
        idle = [handle for handle, seat in self._seats.items() if not seat.busy and seat.touched < stale]
        return [self._seats.pop(handle) for handle in idle]

    def _close_seats(self) -> None:
        with self._lock:
            seats, self._seats = list(self._seats.values()), {}
        for seat in seats:
            seat.answerer.close()
        self._pool.shutdown(wait=False, cancel_futures=True)


def _started_over(seat: _Seat, request: bot_pb2.PlayRequest) -> bool:
    """Whether `request` gives a seat this connector already plays from its start again: the
    server sends a seat's `start` again, then its decision whole, to a connection that may not
    know the seat (the bot's process restarted within its time). A `start` that repeats the
    seat's last request is only that request sent again."""
    return (
        request.WhichOneof("message") == "start"
        and seat.last is not None
        and request != seat.last
        and not seat.over
    )


def _until_none(outgoing: Outgoing) -> Iterator[arena_pb2.ConnectRequest]:
    """The answers to send, until the connection puts None (gRPC reads them on a thread of its own)."""
    while (item := outgoing.get()) is not None:
        yield item


def _raise_if_final(server: str, code: grpc.StatusCode, details: str) -> None:
    """Raises when dialling again would meet the same answer (or the server says stop)."""
    said = f": {details}" if details else ""
    if code in TOKEN_REFUSED:
        raise ConnectRefused(
            f"{server} refused the token ({code.name}{said}); a self-hosted bot connects with a "
            "token made for that one bot (docs/self-hosted.md)"
        )
    if code == grpc.StatusCode.ABORTED:
        raise ConnectReplaced(f"a newer connection for this bot replaced this one ({code.name}{said})")
    if code in FINAL:
        raise ConnectRefused(f"{server} {FINAL[code]} ({code.name}{said})")


def resolve_server(server: str | None, environ: Mapping[str, str]) -> str:
    """`server`, else $SEPTET_SERVER, else the one-command platform's 127.0.0.1:50051."""
    return server or environ.get(SERVER_ENV) or DEFAULT_SERVER


def connect(bot: Bot, server: str | None = None, token: str | None = None) -> None:
    """Plays `bot`'s seats from this machine over one connection to the Arena, until SIGTERM or
    SIGINT; then returns.

    `server` is the Arena's host:port (else $SEPTET_SERVER, else 127.0.0.1:50051); `token` the
    token made for this bot (else $SEPTET_TOKEN). Prints to stderr when it is connected, and a line
    per reconnect. A refused token (or no token) prints one line and exits 2 without dialling
    again; a newer connection for the same bot replacing this one prints one line and returns (a
    supervisor that restarts the bot on failure then leaves the newer one be).
    """
    address = resolve_server(server, os.environ)
    secret = token or os.environ.get(TOKEN_ENV, "")
    if not secret:
        print(f"{bot.name}: error: no token: pass token=... or set {TOKEN_ENV}", file=sys.stderr)
        raise SystemExit(2)
    answers = BotAnswers(bot)
    connector = Connector(
        address,
        secret,
        lambda handle: SeatStream(answers),
        say=lambda line: print(f"{bot.name}: {line}", file=sys.stderr, flush=True),
    )
    try:
        _run_until_signalled(connector)
    except ConnectRefused as error:
        print(f"{bot.name}: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    except ConnectReplaced as error:
        print(f"{bot.name}: {error}; stopping", file=sys.stderr)


def _run_until_signalled(connector: Connector) -> None:
    """Runs the connection on its own thread; SIGTERM or SIGINT (caught on the main thread, which
    waits in short slices so that it notices) stops it."""
    on_main = threading.current_thread() is threading.main_thread()
    signals = (signal.SIGTERM, signal.SIGINT) if on_main else ()
    previous = {signum: signal.signal(signum, lambda *_: connector.stop()) for signum in signals}
    connector.start()
    try:
        while not connector.finished(SIGNAL_POLL_SECONDS):
            pass
    finally:
        connector.stop(wait=5.0)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
