"""`septet bot connect FOLDER|ADDRESS --server HOST:PORT`: a bot of any language plays from your
machine, over one connection it dials out to the Arena (docs/self-hosted.md).

The bot is served as always (`septet.v1.Bot`); this command is the part of the SDK's `connect`
that is not the bot: it keeps the connection (`referee.botkit.connect.Connector`: reconnects, a
refused token, a replaced connection) and bridges each seat the server gives to the bot. A FOLDER
is started as `septet bot serve` starts it (its build first, then its command on a private unix
socket, as a plain process of yours with a runtime's environment only, never your SEPTET_TOKEN;
its output on your terminal) and stopped with this command; an ADDRESS (host:port, unix:/path) is a
bot you serve yourself. Each seat gets a `Play` stream of its own to the bot, its messages passed
through as they come; a bot that answers `Play` with UNIMPLEMENTED is asked by the unary calls
instead, each `decide` made whole first (`convert.whole_request`), as the referee would ask it.
Seats are answered concurrently, so a bot that serves calls in parallel thinks for several seats
at once.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from referee.botkit.answering import SeatFailure
from referee.botkit.connect import (
    DEFAULT_SERVER,
    SERVER_ENV,
    TOKEN_ENV,
    Connector,
    ConnectRefused,
    ConnectReplaced,
)
from referee.botkit.protocol import bot_pb2, bot_pb2_grpc, convert
from referee.tools.botfolder import (
    BotFolderError,
    RunningBot,
    is_bot_folder,
    launch_bot,
    load_manifest,
    wait_until_serving,
)
from referee.tools.grpc_player import (
    DEADLINE_SLACK,
    MAX_MESSAGE_BYTES,
    NOTIFY_DEADLINE,
    PLAY_METHOD,
    UNTIMED_DEADLINE,
)
from referee.tools.grpc_stream import BlockingStream, StreamError
from referee.tools.lineup import ADDRESS, ADDRESS_TIMEOUT
from referee.tools.local_runs import ENV_HELP, parse_env

STARTUP_SECONDS = 15.0
"""How long a started folder's bot has to serve (as for `septet bot serve`)."""
WATCH_SECONDS = 0.2
"""How often the command looks whether the connection ended or the bot's process died."""
STOP_WAIT_SECONDS = 5.0
USAGE_ERROR = 2
BOT_DIED = 1
EXAMPLES = """\
examples:
  export SEPTET_TOKEN=sep_...                # the token made for this bot on the site
  septet bot connect bots/mine --server arena.example.org:50051
  septet bot connect 127.0.0.1:50052 --server arena.example.org:50051   (a bot you serve yourself)
"""


def add_parser(bot_commands: Any) -> None:
    """`septet bot connect`."""
    parser = bot_commands.add_parser(
        "connect",
        help="play a bot from this machine: it dials out to the Arena (a self-hosted bot)",
        description="Start a bot folder (or use a bot served at ADDRESS) and connect it to the Arena "
        "with the token made for that bot: the platform's matches then play it here, over one "
        "connection this command keeps (it reconnects when it drops). The network counts against "
        "the bot's clock. Ctrl-C stops it and the bot it started. A bot that does not serve Play is "
        "asked by the unary calls.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("bot", metavar="FOLDER|ADDRESS", help="a bot folder, or host:port / unix:/path")
    parser.add_argument(
        "--server",
        default=os.environ.get(SERVER_ENV, DEFAULT_SERVER),
        metavar="HOST:PORT",
        help=f"the Arena (env {SERVER_ENV}; default {DEFAULT_SERVER})",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get(TOKEN_ENV, ""),
        metavar="TOKEN",
        help=f"the token made for this bot, sep_... (env {TOKEN_ENV})",
    )
    parser.add_argument("--env", action="append", default=[], metavar="NAME[=VALUE]", help=ENV_HELP)


def run(args: argparse.Namespace) -> int:
    """Connects until Ctrl-C (0), a refusal (2) or the started bot's death (1)."""
    if not args.token:
        return _fail(f"connecting needs the token made for this bot: pass --token sep_... or set {TOKEN_ENV}")
    if not is_bot_folder(args.bot) and Path(args.bot).is_dir():
        raise BotFolderError(f"{args.bot} is a folder without a septet-bot.toml manifest")
    if not is_bot_folder(args.bot) and not ADDRESS.match(args.bot):
        return _fail(f"{args.bot!r} is neither a bot folder nor an address (host:port, unix:/path)")
    started: RunningBot | None = None
    bot: BotAtAddress | None = None
    connector: Connector | None = None
    try:
        if is_bot_folder(args.bot):
            manifest = load_manifest(args.bot)
            started = launch_bot(manifest, env=parse_env(args.env), show_output=True)
            started.wait_until_healthy(STARTUP_SECONDS)
        else:
            wait_until_serving(args.bot, ADDRESS_TIMEOUT)
        bot = BotAtAddress(args.bot if started is None else started.address)
        connector = Connector(args.server, args.token, bot.seat, say=_say)
        connector.start()
        while not connector.finished(WATCH_SECONDS):
            if started is not None and (ended := started.exit_status()) is not None:
                print(f"septet: {started.name} {ended}; stopping", file=sys.stderr)
                return BOT_DIED
        return 0
    except ConnectRefused as error:
        return _fail(str(error))
    except ConnectReplaced as error:
        _say(f"{error}; stopping")
        return 0
    except KeyboardInterrupt:
        _say("stopped")
        return 0
    finally:
        if connector is not None:
            connector.stop(wait=STOP_WAIT_SECONDS)
        if bot is not None:
            bot.close()
        if started is not None:
            started.stop()


def _say(line: str) -> None:
    print(f"septet: {line}", file=sys.stderr, flush=True)


def _fail(message: str) -> int:
    print(f"septet: error: {message}", file=sys.stderr)
    return USAGE_ERROR


class BotAtAddress:
    """The bot the seats are bridged to: one channel for all of them, and whether it plays on
    `Play` streams (None until a seat started; False once it answered UNIMPLEMENTED)."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.channel = grpc.insecure_channel(
            address,
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", 16 * MAX_MESSAGE_BYTES),
                ("grpc.enable_retries", 0),
            ],
        )
        self.stub = bot_pb2_grpc.BotStub(self.channel)  # type: ignore[no-untyped-call]
        self.streaming: bool | None = None

    def seat(self, handle: str) -> BridgedSeat:
        return BridgedSeat(self)

    def close(self) -> None:
        self.channel.close()


class BridgedSeat:
    """One seat handle played by the bot: on a `Play` stream of its own (each request passed on,
    each answer passed back), or by unary calls with the stream's state kept here."""

    def __init__(self, bot: BotAtAddress) -> None:
        self._bot = bot
        self._stream: BlockingStream | None = None
        self._streamed = False
        """This seat played on a stream (a stream that broke leaves the seat without one)."""
        self._state = convert.StreamState()

    def answer(self, request: bot_pb2.PlayRequest) -> bot_pb2.PlayResponse:
        which = request.WhichOneof("message")
        if which == "start":
            return self._start(request)
        if which == "decide":
            return self._decide(request)
        if which == "end":
            return self._end(request)
        raise SeatFailure(grpc.StatusCode.INVALID_ARGUMENT, "a PlayRequest with no message set")

    def close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.close_now()

    def _start(self, request: bot_pb2.PlayRequest) -> bot_pb2.PlayResponse:
        if self._bot.streaming is not False:
            stream = BlockingStream(self._bot.channel, PLAY_METHOD)
            try:
                answer = _answer_of(stream.exchange(request.SerializeToString(), NOTIFY_DEADLINE), "started")
            except StreamError as error:
                if error.code is not grpc.StatusCode.UNIMPLEMENTED:
                    raise SeatFailure(error.code, f"the bot's Play stream did not start: {error}") from None
                self._bot.streaming = False  # a bot of unary calls only: asked that way from now on
            except SeatFailure:
                stream.close_now()
                raise
            else:
                self._stream, self._streamed, self._bot.streaming = stream, True, True
                return answer
        try:
            started = self._bot.stub.StartMatch(request.start, timeout=NOTIFY_DEADLINE)
        except grpc.RpcError as error:
            raise _failure(error, "StartMatch") from None
        return bot_pb2.PlayResponse(started=started)

    def _decide(self, request: bot_pb2.PlayRequest) -> bot_pb2.PlayResponse:
        decide = request.decide
        left = (decide.decision_time_ms + decide.bank_time_ms) / 1000
        budget = (left or UNTIMED_DEADLINE) + DEADLINE_SLACK
        if self._stream is not None:
            try:
                return _answer_of(self._stream.exchange(request.SerializeToString(), budget), "decision")
            except (StreamError, SeatFailure) as error:
                self.close()
                raise SeatFailure(error.code, f"the bot's Play stream failed: {error}") from None
        if self._streamed or self._bot.streaming is not False:
            raise SeatFailure(grpc.StatusCode.FAILED_PRECONDITION, "this seat has no Play stream to the bot")
        try:
            whole = convert.whole_request(decide, self._state)
        except convert.ProtocolError as error:
            raise SeatFailure(grpc.StatusCode.INVALID_ARGUMENT, str(error)) from None
        try:
            decision = self._bot.stub.Decide(whole, timeout=budget)
        except grpc.RpcError as error:
            raise _failure(error, "Decide") from None
        return bot_pb2.PlayResponse(decision=decision)

    def _end(self, request: bot_pb2.PlayRequest) -> bot_pb2.PlayResponse:
        stream, self._stream = self._stream, None
        ended = bot_pb2.PlayResponse(ended=bot_pb2.EndMatchResponse())
        if stream is not None:
            try:
                last = stream.close(request.SerializeToString(), NOTIFY_DEADLINE)
            except StreamError as error:
                raise SeatFailure(error.code, f"the bot's Play stream did not end cleanly: {error}") from None
            return ended if last is None else _answer_of(last, "ended")
        if self._streamed:
            return ended  # its stream broke earlier (the seat forfeited): the end is a courtesy
        try:
            self._bot.stub.EndMatch(request.end, timeout=NOTIFY_DEADLINE)
        except grpc.RpcError as error:
            raise _failure(error, "EndMatch") from None
        return ended


def _answer_of(data: bytes, due: str) -> bot_pb2.PlayResponse:
    """The bot's answer on its stream, which must be the one due; SeatFailure otherwise."""
    try:
        answer = bot_pb2.PlayResponse.FromString(data)
    except DecodeError:
        raise SeatFailure(
            grpc.StatusCode.INTERNAL, "the bot answered bytes that are not a PlayResponse"
        ) from None
    given = answer.WhichOneof("message")
    if given != due:
        raise SeatFailure(
            grpc.StatusCode.INTERNAL, f"the bot answered `{given or 'nothing'}` where `{due}` was due"
        )
    return answer


def _failure(error: grpc.RpcError, method: str) -> SeatFailure:
    code = error.code() if isinstance(error, grpc.Call) else grpc.StatusCode.UNKNOWN
    details = (error.details() if isinstance(error, grpc.Call) else "") or ""
    return SeatFailure(code, f"the bot's {method} failed: {code.name}: {details}")
