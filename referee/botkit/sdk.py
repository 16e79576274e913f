"""The Python SDK for bot authors: write `decide(info, legal)`, serve it as a `septet.v1.Bot`.

    from referee.botkit.sdk import Bot, serve

    class Lowest(Bot):
        name = "lowest"

        def decide(self, info, legal):
            return legal[0]

    if __name__ == "__main__":
        serve(Lowest())

`decide` gets the engine's own information-state dataclass (`referee.engine.games.bidding.BiddingInfo`,
`referee.engine.games.oh7.InfoState`, `referee.engine.games.black_sevens.InfoState`) and the legal actions as
engine values (bids int, cards str, reveals bool, Black Sevens sets tuple[str, ...]), never
protobuf, and returns one of them. The same object plays in-process (`play_match`, `septet
match`): a `Bot` is a `referee.engine.players.Player`, and its hooks get the same `MatchStart` and
`MatchEnd` either way. Calls into one bot are serialized, so a bot needs no locks of its own.

The server answers both ways the referee plays (protos/septet/v1/bot.proto): a `Play` stream per
seat per match, which the referee uses when it can (less CPU per decision on each side: each
decision carries only what changed, the stream keeps the state), and the unary StartMatch,
Decide and EndMatch. `decide` sees the same whole information state either way. `connect(bot)`
instead of `serve(bot)` plays from this machine over a connection the bot dials out to the Arena
(a self-hosted bot, `referee.botkit.connect`, docs/self-hosted.md): the same answers
(`referee.botkit.answering`), the seats arriving on the connection rather than as calls.

A forced decision (one legal action) is answered, by default, only once about as long has passed
as the bot's chosen decisions of that game and kind take (`referee.botkit.tempo`): the referee
asks forced decisions so that the other seats cannot tell them from the timing, and a bot that
answered them at once would tell them anyway. `Bot(pad_forced=False)` turns it off.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import socket
import stat
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, overload

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from referee.botkit.answering import BotAnswers, SeatFailure, SeatStream
from referee.botkit.connect import connect
from referee.botkit.protocol import bot_pb2, bot_pb2_grpc
from referee.botkit.protocol.convert import InfoState, Oh7Info
from referee.botkit.tempo import ForcedTempo
from referee.engine.games.base import Action
from referee.engine.games.bidding import BiddingInfo
from referee.engine.games.black_sevens import InfoState as BlackSevensInfo
from referee.engine.match import MatchEnd, MatchStart

__all__ = [
    "DEFAULT_ADDRESS",
    "Action",
    "BiddingInfo",
    "BlackSevensInfo",
    "Bot",
    "InfoState",
    "MatchEnd",
    "MatchStart",
    "Oh7Info",
    "as_bot",
    "connect",
    "create_server",
    "resolve_address",
    "serve",
]

DEFAULT_ADDRESS = "127.0.0.1:50052"
ADDRESS_ENV = "SEPTET_BOT_ADDRESS"
SERVICE_NAME = "septet.v1.Bot"
"""The name health checks ask about (besides "", the whole server)."""
WORKERS = 16
"""Threads answering RPCs: a `Play` stream holds one for its whole match, and one bot may play
every seat of a table (up to 7), besides health checks and unary calls."""
GRACE_SECONDS = 2.0
"""How long a stopping server lets RPCs in flight finish."""
SIGNAL_POLL_SECONDS = 0.1
"""How often the serving main thread wakes up to run signal handlers."""
UNIX_PATH_MAX = 107
"""The longest socket path the kernel accepts (sun_path is 108 bytes with its terminator)."""
NAME_METADATA = "septet-bot-name"
"""Initial metadata of every unary answer (the health check's too) naming the bot: bot.proto has
no message for it, and a tool playing a bot by address shows this name instead of the address."""
REPORTABLE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")
"""Names a bot may report: plain ASCII, short; anything else is not sent nor shown."""


class _NameInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """Adds `NAME_METADATA` to the initial metadata of every unary call the server answers."""

    def __init__(self, name: str) -> None:
        self._metadata = ((NAME_METADATA, name),)

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler[Any, Any] | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        inner = handler.unary_unary
        metadata = self._metadata

        def named(request: Any, context: grpc.ServicerContext) -> Any:
            context.send_initial_metadata(metadata)
            return inner(request, context)

        return grpc.unary_unary_rpc_method_handler(
            named,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


class Bot:
    """Subclass and implement `decide`; `start_match` and `end_match` are optional hooks.

    `pad_forced` (default True): served over gRPC, a forced decision's answer is held until about
    as long has passed as the bot's chosen decisions take (`referee.botkit.tempo`), so its timing
    does not tell the other seats it had no choice. False answers forced decisions at once."""

    name: str = "bot"
    pad_forced: bool = True

    def __init__(self, name: str | None = None, *, pad_forced: bool | None = None) -> None:
        if name is not None:
            self.name = name
        if pad_forced is not None:
            self.pad_forced = pad_forced

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        """One of `legal` for the seat whose information state is `info` (see the module doc)."""
        raise NotImplementedError(f"{type(self).__name__} must implement decide(info, legal)")

    def start_match(self, start: MatchStart) -> None:
        """A match begins: the game, this bot's seat, the seating and the time control."""

    def end_match(self, end: MatchEnd) -> None:
        """The match is over: `end.result` (scores, ranks) and any forfeits."""


class _FunctionBot(Bot):
    """A bot whose `decide` is a plain function `(info, legal) -> action`."""

    def __init__(self, decide: Callable[[Any, tuple[Action, ...]], Action], name: str) -> None:
        super().__init__(name)
        self._decide = decide

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        return self._decide(info, legal)


Policy = Callable[[Any, tuple[Action, ...]], Action]


@overload
def as_bot(decide: Policy, *, name: str | None = None) -> Bot: ...
@overload
def as_bot(decide: None = None, *, name: str | None = None) -> Callable[[Policy], Bot]: ...
def as_bot(decide: Policy | None = None, *, name: str | None = None) -> Bot | Callable[[Policy], Bot]:
    """A `Bot` from a function `decide(info, legal)`: `as_bot(f)`, `@as_bot` or `@as_bot(name=...)`."""

    def wrap(function: Policy) -> Bot:
        return _FunctionBot(function, name or str(getattr(function, "__name__", "bot")))

    return wrap if decide is None else wrap(decide)


class BotServicer(bot_pb2_grpc.BotServicer):
    """`septet.v1.Bot` over a `Bot`: each call answered by `BotAnswers` (what a self-hosted bot's
    connection asks too), a request it cannot answer ending the call with its status."""

    def __init__(self, bot: Bot, tempo: ForcedTempo | None = None) -> None:
        self.answers = BotAnswers(bot, tempo)

    def Decide(self, request: bot_pb2.DecideRequest, context: grpc.ServicerContext) -> bot_pb2.DecideResponse:
        return _or_abort(context, self.answers.decision, request, None)

    def Play(
        self, request_iterator: Iterator[bot_pb2.PlayRequest], context: grpc.ServicerContext
    ) -> Iterator[bot_pb2.PlayResponse]:
        """One seat's match: each message answered in order, as the unary call of the same name
        would; the stream's information state is kept by its `SeatStream` (each `decide` is a delta
        of it), so `decide` sees whole states."""
        seat = SeatStream(self.answers)
        for request in request_iterator:
            yield _or_abort(context, seat.answer, request)

    def StartMatch(
        self, request: bot_pb2.StartMatchRequest, context: grpc.ServicerContext
    ) -> bot_pb2.StartMatchResponse:
        return _or_abort(context, self.answers.started, request)

    def EndMatch(
        self, request: bot_pb2.EndMatchRequest, context: grpc.ServicerContext
    ) -> bot_pb2.EndMatchResponse:
        return _or_abort(context, self.answers.ended, request)


Answer = TypeVar("Answer")


def _or_abort(context: grpc.ServicerContext, answer: Callable[..., Answer], *args: Any) -> Answer:
    """`answer(*args)`, or the call ended with the status and reason of its SeatFailure."""
    try:
        return answer(*args)
    except SeatFailure as failure:
        context.abort(failure.code, failure.reason)


def create_server(bot: Bot, address: str, *, tempo: ForcedTempo | None = None) -> tuple[grpc.Server, str]:
    """A server (not started) for `bot` with the health service, bound to `address`.

    `address` is `host:port` (port 0 picks a free one) or `unix:/path`; the returned address is
    the one bound, with the port filled in. A bad or busy address raises ValueError. `tempo`: the
    record of chosen decisions forced ones are padded from (a fresh one by default; pass one to
    read it).
    """
    server = grpc.server(
        ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="septet-bot"),
        options=[("grpc.so_reuseport", 0)],
        interceptors=[_NameInterceptor(bot.name)] if REPORTABLE_NAME.match(bot.name) else [],
    )
    bot_pb2_grpc.add_BotServicer_to_server(BotServicer(bot, tempo), server)  # type: ignore[no-untyped-call]
    health_servicer = health.HealthServicer()
    for service in ("", SERVICE_NAME):
        health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    return server, _bind(server, address)


def _bind(server: grpc.Server, address: str) -> str:
    if address.startswith("unix:"):
        path = address.removeprefix("unix:")
        path = "/" + path.lstrip("/") if path.startswith("//") else path
        if not path:
            raise ValueError(f"bad address {address!r}: a unix socket needs a path, e.g. unix:bot.sock")
        if len(os.fsencode(path)) > UNIX_PATH_MAX:
            raise ValueError(f"cannot listen on {address}: the socket path is over {UNIX_PATH_MAX} bytes")
        _remove_stale_socket(path)
    else:
        host, colon, port = address.rpartition(":")
        if not colon or not host or not port.isdigit() or int(port) > 65535:
            raise ValueError(f"bad address {address!r}: use host:port (port 0 picks one) or unix:/path")
    try:
        port_bound = server.add_insecure_port(address)
    except RuntimeError:
        raise ValueError(f"cannot listen on {address}: already in use, or not an address here") from None
    return address if address.startswith("unix:") else f"{host}:{port_bound}"


def _remove_stale_socket(path: str) -> None:
    """Removes a socket file left by a bot that died, so its successor can listen there.

    Only a socket nobody accepts on is removed; anything else at `path` is left for bind to refuse.
    """
    try:
        if not stat.S_ISSOCK(os.stat(path).st_mode):
            return
    except OSError:
        return
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except ConnectionRefusedError:
            with contextlib.suppress(OSError):
                os.unlink(path)
        except OSError:
            return


def resolve_address(argv: Sequence[str], environ: Mapping[str, str]) -> str:
    """The address to serve on: `--address` in argv, else $SEPTET_BOT_ADDRESS, else the default."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--address")
    known, _ = parser.parse_known_args(list(argv))
    return str(known.address or environ.get(ADDRESS_ENV) or DEFAULT_ADDRESS)


def serve(bot: Bot, address: str | None = None) -> None:
    """Serves `bot` until SIGTERM or SIGINT, then stops gracefully and returns.

    The address is `address`, else `--address ADDR` on the command line, else the environment
    variable SEPTET_BOT_ADDRESS, else 127.0.0.1:50052. Prints "serving NAME on ADDRESS" to stderr.
    A bad address prints one line and exits 2.
    """
    try:
        server, bound = create_server(bot, address or resolve_address(sys.argv[1:], os.environ))
    except ValueError as error:
        print(f"{bot.name}: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    stop = threading.Event()
    signals = (signal.SIGTERM, signal.SIGINT)
    previous = {signum: signal.signal(signum, lambda *_: stop.set()) for signum in signals}
    try:
        server.start()
        print(f"serving {bot.name} on {bound}", file=sys.stderr, flush=True)
        # Any thread may receive the signal, but only the main thread runs Python's handlers, and
        # only between bytecodes: waiting in short slices lets it notice (a plain wait may not).
        while not stop.wait(SIGNAL_POLL_SECONDS):
            pass
    finally:
        server.stop(GRACE_SECONDS).wait()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
