"""The SDK's `connect`: a bot dials out to the Arena and plays its seats over that one connection.

Real gRPC over real loopback sockets against a stand-in Arena (tests/connect_arena.py) whose seats
are real engine games: two seats interleaved on one connection are each answered in order, with
legal actions, the bot seeing the very information states the engine gave; a refused token stops
at once without dialling again; a server that goes away and comes back on the same port is dialled
again and the request it sends again is answered from the answer already made; a newer connection
replacing this one (ABORTED) stops the client.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from connect_arena import ConnectArena, SeatGame, Session, play_interleaved, serving_arena

from referee.botkit.answering import BotAnswers, SeatStream
from referee.botkit.connect import Backoff, Connector
from referee.engine.games.base import Action
from referee.sdk import Bot, connect

TOKEN = "sep_connect-test-token"
FAST = Backoff(first=0.05, most=0.2)
"""Reconnects within a fraction of a second, so a test of them stays short."""


class Recording(Bot):
    """Answers the last legal action; keeps every information state it was asked in, per seat.
    `gate` (when set up) holds its decisions until the test opens it."""

    name = "recording"
    pad_forced = False

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[int, list[Any]] = {}
        self.asked = threading.Event()
        self.gate: threading.Event | None = None

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        self.seen.setdefault(info.seat, []).append(info)
        self.asked.set()
        if self.gate is not None:
            assert self.gate.wait(10), "the test never opened the gate"
        return legal[-1]


class Lines:
    """What a connector said, for the test to wait on."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str) -> None:
        self.lines.append(line)

    def wait_for(self, words: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [line for line in self.lines if words in line]
            if found:
                return found[-1]
            time.sleep(0.01)
        raise AssertionError(f"never said {words!r}; said: {self.lines}")


def started_connector(bot: Bot, address: str, said: Lines) -> Connector:
    answers = BotAnswers(bot)
    connector = Connector(address, TOKEN, lambda handle: SeatStream(answers), say=said, backoff=FAST)
    connector.start()
    return connector


@pytest.fixture
def arena() -> Iterator[tuple[ConnectArena, str]]:
    servicer = ConnectArena(TOKEN)
    with serving_arena(servicer) as (_, address):
        yield servicer, address


def test_two_interleaved_seats_are_each_answered_in_order_with_legal_actions(
    arena: tuple[ConnectArena, str],
) -> None:
    servicer, address = arena
    bot, said = Recording(), Lines()
    connector = started_connector(bot, address, said)
    try:
        session = servicer.next_session()
        assert session.metadata["authorization"] == f"Bearer {TOKEN}"
        games = {"m1/0": SeatGame("m1", 0, seed=3), "m2/1": SeatGame("m2", 1, seed=4)}
        kinds = play_interleaved(session, games, decisions=8)
    finally:
        connector.stop(wait=5)
    for handle, game in games.items():
        assert kinds[handle] == ["started", *["decision"] * len(game.played), "ended"], handle
        assert len(game.played) == 8
        assert bot.seen[game.seat] == game.infos, "the deltas merged back into the engine's states"
    assert said.lines[0] == f"connected to {address} as connect-test (connection c1)"
    assert connector.finished(0)


def test_a_refused_token_stops_at_once_with_one_line_and_no_retry(
    arena: tuple[ConnectArena, str], capsys: pytest.CaptureFixture[str]
) -> None:
    servicer, address = arena
    started = time.monotonic()
    with pytest.raises(SystemExit) as exited:
        connect(Recording(), address, "sep_not-this-bots-token")
    assert exited.value.code == 2
    assert time.monotonic() - started < 5
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0, error
    assert error.startswith(f"recording: error: {address} refused the token (UNAUTHENTICATED")
    assert servicer.calls == 1, "a refused token is never tried again"


def test_no_token_is_a_one_line_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SEPTET_TOKEN", raising=False)
    with pytest.raises(SystemExit) as exited:
        connect(Recording(), "127.0.0.1:1")
    assert exited.value.code == 2
    assert "no token" in capsys.readouterr().err


def test_a_server_that_comes_back_gets_the_unanswered_request_answered() -> None:
    """The answer is made while the server is away; the request the new server sends again is
    answered with it (the bot is not asked twice), and the seat plays on with its state kept."""
    bot, said = Recording(), Lines()
    bot.gate = threading.Event()
    game, handle = SeatGame("m1", 0, seed=5), "m1/0"
    first = ConnectArena(TOKEN)
    with serving_arena(first) as (server, address):
        connector = started_connector(bot, address, said)
        session = first.next_session()
        session.send(handle, game.start())
        assert session.answer(handle).WhichOneof("message") == "started"
        pending = game.decide()
        assert pending is not None
        session.send(handle, pending)
        assert bot.asked.wait(5), "the bot was asked"
        server.stop(None).wait()  # the server goes away before the answer is made
    try:
        said.wait_for("lost the connection")
        bot.gate.set()  # answered now, with no connection to answer on
        time.sleep(0.1)
        second = ConnectArena(TOKEN)
        with serving_arena(second, address):
            again = second.next_session()
            said.wait_for("reconnected to")
            again.send(handle, pending)  # not answered as far as the server knows: sent again
            game.apply(again.answer(handle))
            assert len(bot.seen[0]) == 1, "answered with the answer made once"
            kinds = [_decided(again, handle, game) for _ in range(3)]
            again.send(handle, game.end())
            kinds.append(again.answer(handle).WhichOneof("message"))
    finally:
        connector.stop(wait=5)
    assert kinds == ["decision"] * 3 + ["ended"]
    assert bot.seen[0] == game.infos, "the seat's stream state outlived the connection"
    assert said.wait_for("reconnected to") == f"reconnected to {address} as connect-test (connection c1)"


def _decided(session: Session, handle: str, game: SeatGame) -> str:
    request = game.decide()
    assert request is not None
    session.send(handle, request)
    answer = session.answer(handle)
    game.apply(answer)
    return answer.WhichOneof("message") or "nothing"


def test_a_replaced_connection_stops_the_client(
    arena: tuple[ConnectArena, str], capsys: pytest.CaptureFixture[str]
) -> None:
    servicer, address = arena

    def replace_it() -> None:
        servicer.next_session().abort(grpc.StatusCode.ABORTED, "a newer connection of connect-test")

    threading.Thread(target=replace_it, daemon=True).start()
    started = time.monotonic()
    connect(Recording(), address, TOKEN)  # returns: a supervisor restarting on failure leaves it be
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err
    assert "recording: connected to" in err
    assert "replaced this one (ABORTED: a newer connection of connect-test); stopping" in err
    assert servicer.calls == 1
