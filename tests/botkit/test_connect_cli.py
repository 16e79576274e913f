"""`septet bot connect`: a bot served as always, bridged to the Arena over one connection.

Against the stand-in Arena of tests/connect_arena.py, over real sockets: the command starts a copy
of the random example, plays a seat with it, and Ctrl-C leaves no process of it behind; a refused
token ends the command with one line and code 2. The bridge itself (in this process): seats wait
on the bot at the same time, so a slow seat does not hold up a quick one; a bot without `Play` is
asked by the unary calls with whole requests, equal to what the referee would have sent it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from connect_arena import ConnectArena, SeatGame, play_interleaved, serving_arena
from process_tree import descendants, left_after, running_from, runs_from

from referee.botkit.connect import Backoff, Connector
from referee.botkit.protocol import bot_pb2, bot_pb2_grpc, convert
from referee.sdk import Bot, create_server
from referee.tools.bot_connect import BotAtAddress

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "bots" / "examples"
SEPTET = str(Path(sys.executable).with_name("septet"))
TOKEN = "sep_connect-cli-token"
STARTUP_SECONDS = 60.0
"""The command's start and its bot's, on a busy machine."""


@pytest.fixture
def arena() -> Iterator[tuple[ConnectArena, str]]:
    servicer = ConnectArena(TOKEN)
    with serving_arena(servicer) as (_, address):
        yield servicer, address


def test_connect_plays_a_folder_s_seat_and_ctrl_c_stops_its_bot(
    arena: tuple[ConnectArena, str], tmp_path: Path
) -> None:
    """A copy of the example in this test's own folder, so the leftover check sees only the
    processes this command started."""
    servicer, address = arena
    folder = tmp_path / "bots" / "random"
    shutil.copytree(EXAMPLES / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    tool = subprocess.Popen(
        [SEPTET, "bot", "connect", str(folder), "--server", address],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SEPTET_TOKEN": TOKEN},
        cwd=ROOT,
    )
    try:
        session = servicer.next_session(timeout=STARTUP_SECONDS)
        game = SeatGame("m1", 2, seed=7)
        kinds = play_interleaved(session, {"m1/2": game}, decisions=6)
        assert kinds["m1/2"] == ["started", *["decision"] * 6, "ended"]
        started = descendants(tool.pid)
        assert any(runs_from(pid, folder) for pid, _ in started), "the bot runs under the command"
        tool.send_signal(signal.SIGINT)
        _, err = tool.communicate(timeout=20)
    finally:
        if tool.poll() is None:
            tool.kill()
            tool.wait()
    assert tool.returncode == 0, err
    assert f"septet: connected to {address} as connect-test (connection c1)\n" in err
    assert err.rstrip().endswith("septet: stopped"), err
    assert left_after(started, 10) == set(), "no process of the command outlived it"
    assert running_from(folder) == []


def test_connect_with_a_refused_token_exits_2_with_one_line(arena: tuple[ConnectArena, str]) -> None:
    servicer, address = arena
    server, bot_address = create_server(Bot("quiet"), "127.0.0.1:0")
    server.start()
    try:
        done = subprocess.run(
            [SEPTET, "bot", "connect", bot_address, "--server", address, "--token", "sep_wrong"],
            capture_output=True,
            text=True,
            timeout=STARTUP_SECONDS,
            cwd=ROOT,
        )
    finally:
        server.stop(None).wait()
    assert done.returncode == 2
    assert done.stderr.startswith(f"septet: error: {address} refused the token (UNAUTHENTICATED")
    assert done.stderr.count("\n") == 1, done.stderr
    assert servicer.calls == 1


class Staggered(bot_pb2_grpc.BotServicer):
    """Plays on `Play`, index 0 every time; seat 0's decisions wait until seat 1 was answered."""

    def __init__(self) -> None:
        self.quick_answered = threading.Event()
        self.slow_waited: list[bool] = []

    def Play(
        self, request_iterator: Iterator[bot_pb2.PlayRequest], context: grpc.ServicerContext
    ) -> Iterator[bot_pb2.PlayResponse]:
        for request in request_iterator:
            which = request.WhichOneof("message")
            if which == "start":
                yield bot_pb2.PlayResponse(started=bot_pb2.StartMatchResponse())
            elif which == "end":
                yield bot_pb2.PlayResponse(ended=bot_pb2.EndMatchResponse())
            elif request.decide.seat == 0:
                self.slow_waited.append(self.quick_answered.wait(5))
                yield bot_pb2.PlayResponse(decision=bot_pb2.DecideResponse(index=0))
            else:
                self.quick_answered.set()
                yield bot_pb2.PlayResponse(decision=bot_pb2.DecideResponse(index=0))


class UnaryOnly(bot_pb2_grpc.BotServicer):
    """A bot of unary calls only (its `Play` is generated code's UNIMPLEMENTED); keeps every
    Decide request it was sent."""

    def __init__(self) -> None:
        self.decides: list[bot_pb2.DecideRequest] = []
        self.notices: list[str] = []

    def StartMatch(
        self, request: bot_pb2.StartMatchRequest, context: grpc.ServicerContext
    ) -> bot_pb2.StartMatchResponse:
        self.notices.append(f"start {request.match_id}")
        return bot_pb2.StartMatchResponse()

    def Decide(self, request: bot_pb2.DecideRequest, context: grpc.ServicerContext) -> bot_pb2.DecideResponse:
        self.decides.append(request)
        return bot_pb2.DecideResponse(index=len(request.legal_actions) - 1)

    def EndMatch(
        self, request: bot_pb2.EndMatchRequest, context: grpc.ServicerContext
    ) -> bot_pb2.EndMatchResponse:
        self.notices.append(f"end {request.match_id}")
        return bot_pb2.EndMatchResponse()


@contextlib.contextmanager
def serving_bot(servicer: bot_pb2_grpc.BotServicer) -> Iterator[str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    bot_pb2_grpc.add_BotServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(None).wait()


@contextlib.contextmanager
def bridged(bot_address: str, arena_address: str) -> Iterator[BotAtAddress]:
    """The bridge of `septet bot connect ADDRESS`, in this process."""
    bot = BotAtAddress(bot_address)
    connector = Connector(arena_address, TOKEN, bot.seat, say=lambda line: None, backoff=Backoff(0.05, 0.2))
    connector.start()
    try:
        yield bot
    finally:
        connector.stop(wait=5)
        bot.close()


def test_a_slow_seat_does_not_hold_up_a_quick_one(arena: tuple[ConnectArena, str]) -> None:
    servicer, address = arena
    staggered = Staggered()
    with serving_bot(staggered) as bot_address, bridged(bot_address, address) as bot:
        session = servicer.next_session()
        begun = time.monotonic()
        games = {"m1/0": SeatGame("m1", 0, seed=1), "m2/1": SeatGame("m2", 1, seed=2)}
        kinds = play_interleaved(session, games, decisions=1)
        took = time.monotonic() - begun
    assert bot.streaming is True
    assert kinds == {handle: ["started", "decision", "ended"] for handle in games}
    assert staggered.slow_waited == [True], "seat 1 was answered while seat 0 waited"
    assert took < 3


def test_a_bot_without_play_is_asked_by_unary_calls_with_whole_requests(
    arena: tuple[ConnectArena, str],
) -> None:
    servicer, address = arena
    unary = UnaryOnly()
    with serving_bot(unary) as bot_address, bridged(bot_address, address) as bot:
        session = servicer.next_session()
        games = {"m1/0": SeatGame("m1", 0, seed=3), "m2/1": SeatGame("m2", 1, seed=4)}
        kinds = play_interleaved(session, games, decisions=6)
    assert bot.streaming is False
    assert kinds == {handle: ["started", *["decision"] * 6, "ended"] for handle in games}
    assert sorted(unary.notices) == ["end m1", "end m2", "start m1", "start m2"]
    for game in games.values():
        asked = [request for request in unary.decides if request.match_id == game.match_id]
        assert all(not request.changed and request.kept_tricks == 0 for request in asked)
        assert [convert.info_from_request(request) for request in asked] == game.infos
