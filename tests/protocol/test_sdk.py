"""The Python SDK (referee.botkit.sdk) and the example bots: real servers on real sockets, real clients.

A bot served on port 0 or a unix socket answers Decide with a legal action and reports SERVING;
a bot that raises gives INTERNAL and keeps serving; whole matches over the wire play exactly as
in-process; the example bots run as their manifests start them and stop cleanly on a signal.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.botkit.protocol import bot_pb2, bot_pb2_grpc
from referee.botkit.protocol.convert import (
    ProtocolError,
    action_from_response,
    decide_request,
    end_match_request,
    start_match_request,
)
from referee.botkit.sdk import DEFAULT_ADDRESS, Bot, as_bot, create_server, resolve_address
from referee.engine.games import GAMES, get_game
from referee.engine.games.base import Action, DecisionKind
from referee.engine.match import MatchEnd, MatchStart, TimeControl, Turn, play_match
from referee.engine.players import GreedyPlayer, Player
from referee.engine.playout import playout

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "bots" / "examples"
FAST_RECONNECT = [("grpc.initial_reconnect_backoff_ms", 50), ("grpc.max_reconnect_backoff_ms", 200)]


def load_example(name: str) -> ModuleType:
    """An example's bot.py as a module, without putting its folder on sys.path."""
    spec = importlib.util.spec_from_file_location(f"septet_example_{name}", EXAMPLES / name / "bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A scratch folder with a short path: a unix socket path may hold at most 107 bytes."""
    with tempfile.TemporaryDirectory(prefix="septet-") as scratch:
        yield Path(scratch)


@contextlib.contextmanager
def serving(
    bot: Bot, address: str = "127.0.0.1:0"
) -> Iterator[tuple[str, bot_pb2_grpc.BotStub, grpc.Channel]]:
    server, bound = create_server(bot, address)
    server.start()
    channel = grpc.insecure_channel(bound)
    try:
        yield bound, bot_pb2_grpc.BotStub(channel), channel
    finally:
        channel.close()
        server.stop(None).wait()


def position(game_id: str, seed: int = 0) -> tuple[DecisionKind, int, Any, tuple[Action, ...]]:
    """The first real choice of a random game: (kind, seat, information state, legal actions)."""
    game = get_game(game_id)
    for step in playout(game, game.start(game.players.start), random.Random(seed)):
        decision = game.to_move(step.state)
        if decision is not None and not decision.is_chance:
            seat = decision.seats[0]
            legal = game.legal_actions(step.state, seat)
            if len(legal) > 1:
                return decision.kind, seat, game.information_state(step.state, seat), legal
    raise AssertionError(f"{game_id}: no choice in the game")


def request_for(game_id: str, seed: int = 0) -> tuple[bot_pb2.DecideRequest, Any, tuple[Action, ...]]:
    kind, seat, info, legal = position(game_id, seed)
    request = decide_request(
        match_id="m", seat=seat, game=game_id, kind=kind, info=info, legal=legal, decision_ms=1000, bank_ms=0
    )
    return request, info, legal


class Recording(Bot):
    """Answers the last legal action; keeps what it was given; raises on the calls listed in `fail`."""

    name = "recording"

    def __init__(self, fail: tuple[int, ...] = ()) -> None:
        super().__init__()
        self.fail = fail
        self.calls = 0
        self.seen: list[tuple[Any, tuple[Action, ...]]] = []
        self.starts: list[MatchStart] = []
        self.ends: list[MatchEnd] = []

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        self.calls += 1
        if self.calls in self.fail:
            raise ValueError("no idea what to play")
        self.seen.append((info, legal))
        return legal[-1]

    def start_match(self, start: MatchStart) -> None:
        self.starts.append(start)

    def end_match(self, end: MatchEnd) -> None:
        self.ends.append(end)


@pytest.mark.parametrize("game_id", list(GAMES))
def test_a_bot_on_port_zero_answers_decide_with_a_legal_action_from_engine_values(game_id: str) -> None:
    bot = Recording()
    request, info, legal = request_for(game_id)
    with serving(bot) as (bound, stub, _):
        assert bound.startswith("127.0.0.1:") and not bound.endswith(":0")
        response = stub.Decide(request, timeout=5)
    assert response.WhichOneof("choice") == "index", "a legal answer goes back by index"
    assert action_from_response(response, legal) == legal[-1]
    assert bot.seen == [(info, legal)] and type(bot.seen[0][0]) is type(info), (
        "the bot sees engine dataclasses"
    )


def test_a_bot_on_a_unix_socket_answers_and_the_socket_is_gone_after_it_stops(short_dir: Path) -> None:
    path = short_dir / "bot.sock"
    request, _, legal = request_for("black-sevens")
    with serving(Recording(), f"unix:{path}") as (bound, stub, _):
        assert bound == f"unix:{path}" and path.exists()
        assert action_from_response(stub.Decide(request, timeout=5), legal) == legal[-1]
    assert not path.exists()


def test_health_reports_serving_for_the_server_and_the_bot_service() -> None:
    with serving(Recording()) as (_, _, channel):
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "septet.v1.Bot"):
            reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.RpcError) as raised:
            health.Check(health_pb2.HealthCheckRequest(service="septet.v1.Arena"), timeout=5)
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND


def test_a_bot_that_raises_gives_internal_with_its_message_and_the_server_keeps_serving() -> None:
    bot = Recording(fail=(1,))
    request, _, legal = request_for("oh-hell")
    with serving(bot) as (_, stub, channel):
        with pytest.raises(grpc.RpcError) as raised:
            stub.Decide(request, timeout=5)
        assert raised.value.code() == grpc.StatusCode.INTERNAL
        assert raised.value.details() == "recording: decide raised ValueError: no idea what to play"
        assert action_from_response(stub.Decide(request, timeout=5), legal) == legal[-1]
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_an_illegal_answer_goes_to_the_referee_as_a_value_and_a_non_action_is_internal() -> None:
    request, _, legal = request_for("oh7")
    with serving(as_bot(lambda info, legal: "ZZ", name="wrong")) as (_, stub, _):
        response = stub.Decide(request, timeout=5)
    assert response.action.card == "ZZ"
    with pytest.raises(ProtocolError, match="answered 'ZZ', which is not one of"):
        action_from_response(response, legal)
    with (
        serving(as_bot(lambda info, legal: None, name="void")) as (_, stub, _),
        pytest.raises(grpc.RpcError) as raised,
    ):
        stub.Decide(request, timeout=5)
    assert raised.value.code() == grpc.StatusCode.INTERNAL
    assert raised.value.details() == "void: decide returned None, not an action"


def test_a_request_without_an_information_state_is_invalid_argument() -> None:
    bot = Recording()
    with serving(bot) as (_, stub, _), pytest.raises(grpc.RpcError) as raised:
        stub.Decide(bot_pb2.DecideRequest(game="oh-hell"), timeout=5)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.details() == "the oh-hell request holds no information state"
    assert bot.calls == 0


class WirePlayer:
    """The referee's end of the wire in a few lines: each decision is a real Decide RPC."""

    concurrent = False

    def __init__(self, stub: bot_pb2_grpc.BotStub, name: str) -> None:
        self.stub = stub
        self.name = name

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        raise AssertionError("the match runner must call decide_turn")

    def decide_turn(self, turn: Turn, info: Any, legal: tuple[Action, ...]) -> Action:
        request = decide_request(
            match_id=turn.match_id, seat=turn.seat, game=turn.game, kind=turn.kind, info=info,
            legal=legal, decision_ms=1000, bank_ms=10_000,
        )  # fmt: skip
        return action_from_response(self.stub.Decide(request, timeout=5), legal)

    def start_match(self, start: MatchStart) -> None:
        fields = {
            name: getattr(start, name) for name in ("match_id", "game", "seat", "num_players", "options")
        }
        request = start_match_request(**fields, seat_names=start.seat_names, time_control=start.time_control)
        self.stub.StartMatch(request, timeout=5)

    def end_match(self, end: MatchEnd) -> None:
        self.stub.EndMatch(
            end_match_request(match_id=end.match_id, result=end.result, forfeits=end.forfeits), timeout=5
        )


@pytest.mark.parametrize("game_id", list(GAMES))
def test_a_whole_match_over_the_wire_plays_exactly_as_in_process(game_id: str) -> None:
    game = get_game(game_id)
    players = game.players.start
    greedy = load_example("greedy").GreedyBot()
    with serving(greedy) as (_, stub, _):
        remote = play_match(game, [WirePlayer(stub, f"wire{seat}") for seat in range(players)], seed=11)
    local = play_match(game, [GreedyPlayer(game) for _ in range(players)], seed=11)
    assert remote.forfeits == [] and remote.result == local.result
    actions = [[e for e in match.replay["events"] if e["type"] == "action"] for match in (remote, local)]
    assert [(e["seat"], e["action"]) for e in actions[0]] == [(e["seat"], e["action"]) for e in actions[1]]


def test_start_and_end_of_match_reach_the_hooks_as_the_in_process_runner_tells_them() -> None:
    served, local = Recording(), Recording()
    with serving(served) as (_, stub, _):
        wire = [WirePlayer(stub, name) for name in ("a", "b", "c")]
        play_match("oh7", wire, seed=2, match_id="m-5", time_control=TimeControl(0.5, 4.0))
    play_match(
        "oh7", [local, Recording(), Recording()], seed=2, match_id="m-5", time_control=TimeControl(0.5, 4.0)
    )
    assert [start.seat for start in served.starts] == [0, 1, 2]
    assert served.starts[0] == MatchStart(
        "m-5", "oh7", 0, 3, {"target": 35}, ["a", "b", "c"], TimeControl(0.5, 4.0)
    )
    assert len(served.ends) == 3 and served.ends[0].match_id == "m-5" and served.ends[0].forfeits == []
    assert served.ends[0].result == local.ends[0].result, "the same policy over the wire, the same game"


def test_a_hook_that_raises_gives_internal() -> None:
    class Grumpy(Bot):
        name = "grumpy"

        def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
            return legal[0]

        def start_match(self, start: MatchStart) -> None:
            raise KeyError(start.game)

    request = start_match_request(
        match_id="m", game="oh-hell", seat=0, num_players=3, options={}, seat_names=["a", "b", "c"],
        time_control=None,
    )  # fmt: skip
    with serving(Grumpy()) as (_, stub, _), pytest.raises(grpc.RpcError) as raised:
        stub.StartMatch(request, timeout=5)
    assert raised.value.code() == grpc.StatusCode.INTERNAL
    assert raised.value.details() == "grumpy: start_match raised KeyError: 'oh-hell'"


def test_the_same_bot_plays_in_process_as_a_player_with_its_hooks() -> None:
    bot = Recording()
    random_bot = load_example("random").RandomBot(seed=4)
    assert isinstance(bot, Player) and isinstance(random_bot, Player)
    outcome = play_match("seven-up-seven-down", [bot, random_bot, GreedyPlayer(get_game("oh-hell"))], seed=9)
    assert outcome.forfeits == [] and bot.seen and len(bot.starts) == 1 and len(bot.ends) == 1
    assert bot.ends[0].result == outcome.result and outcome.names == ["recording", "random", "greedy"]


def test_as_bot_turns_a_function_into_a_bot_in_each_form() -> None:
    def lowest(info: Any, legal: tuple[Action, ...]) -> Action:
        return legal[0]

    plain = as_bot(lowest)
    named = as_bot(lowest, name="low")
    decorated = as_bot(name="deco")(lowest)
    assert (plain.name, named.name, decorated.name) == ("lowest", "low", "deco")
    assert all(isinstance(bot, Bot) and bot.decide(None, (3, 1)) == 3 for bot in (plain, named, decorated))


def test_a_bot_without_decide_says_what_is_missing() -> None:
    class Empty(Bot):
        pass

    with pytest.raises(NotImplementedError, match=r"^Empty must implement decide\(info, legal\)$"):
        Empty().decide(None, (1,))
    assert Empty().name == "bot" and Empty("mine").name == "mine"


@pytest.mark.parametrize(
    ("argv", "environ", "expected"),
    [
        (["--address", "unix:a.sock"], {"SEPTET_BOT_ADDRESS": "127.0.0.1:9"}, "unix:a.sock"),
        (["--seed", "3", "--address=0.0.0.0:7000"], {}, "0.0.0.0:7000"),
        (["--seed", "3"], {"SEPTET_BOT_ADDRESS": "127.0.0.1:9"}, "127.0.0.1:9"),
        ([], {}, DEFAULT_ADDRESS),
    ],
)
def test_the_address_comes_from_the_command_line_then_the_environment_then_the_default(
    argv: list[str], environ: dict[str, str], expected: str
) -> None:
    assert resolve_address(argv, environ) == expected
    assert DEFAULT_ADDRESS == "127.0.0.1:50052"


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("nonsense", r"^bad address 'nonsense': use host:port \(port 0 picks one\) or unix:/path$"),
        ("localhost:http", r"^bad address 'localhost:http'"),
        ("127.0.0.1:70000", r"^bad address '127.0.0.1:70000'"),
        ("unix:", r"^bad address 'unix:': a unix socket needs a path"),
        ("unix:/" + "x" * 120, r"^cannot listen on unix:/x+: the socket path is over 107 bytes$"),
        (
            "no-such-host.invalid:80",
            r"^cannot listen on no-such-host.invalid:80: already in use, or not an address",
        ),
    ],
)
def test_a_bad_address_is_a_one_line_value_error(address: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        create_server(Recording(), address)


def test_a_busy_port_or_path_is_refused(short_dir: Path) -> None:
    with (
        serving(Recording()) as (bound, _, _),
        pytest.raises(ValueError, match=r"^cannot listen on 127\.0\.0\.1:"),
    ):
        create_server(Recording(), bound)
    not_a_socket = short_dir / "file"
    not_a_socket.write_text("keep me")
    with pytest.raises(ValueError, match=r"^cannot listen on unix:"):
        create_server(Recording(), f"unix:{not_a_socket}")
    assert not_a_socket.read_text() == "keep me"


def test_a_socket_left_by_a_dead_bot_is_replaced(short_dir: Path) -> None:
    path = short_dir / "bot.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(path))  # bound, then closed without unlinking: what a killed bot leaves
    assert path.exists()
    request, _, legal = request_for("oh-hell")
    with serving(Recording(), f"unix:{path}") as (_, stub, _):
        assert action_from_response(stub.Decide(request, timeout=5), legal) == legal[-1]


# The example bots, started as their manifests start them


@pytest.mark.parametrize("name", ["random", "greedy"])
def test_the_example_manifest_plays_every_game_with_the_sdk(name: str) -> None:
    manifest = tomllib.loads((EXAMPLES / name / "septet-bot.toml").read_text())
    assert manifest["name"] == name
    assert manifest["games"] == list(GAMES)
    assert manifest["command"] == ["python", "bot.py", "--address", "{address}"]
    assert manifest["description"]
    assert (EXAMPLES / name / "README.md").is_file()


@contextlib.contextmanager
def example_process(
    name: str, args: list[str], env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "bot.py", *args],
        cwd=EXAMPLES / name,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=10)


def wait_healthy(address: str, timeout: float = 20.0) -> grpc.Channel:
    channel = grpc.insecure_channel(address, options=FAST_RECONNECT)
    health = health_pb2_grpc.HealthStub(channel)
    reply = health.Check(
        health_pb2.HealthCheckRequest(service="septet.v1.Bot"), timeout=timeout, wait_for_ready=True
    )
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    return channel


@pytest.mark.parametrize(
    ("name", "signum"), [("random", signal.SIGTERM), ("greedy", signal.SIGTERM), ("greedy", signal.SIGINT)]
)
def test_an_example_bot_process_answers_every_game_and_stops_cleanly_on_a_signal(
    name: str, signum: signal.Signals, short_dir: Path
) -> None:
    address = f"unix:{short_dir / 'bot.sock'}"
    with example_process(name, ["--address", address]) as process:
        channel = wait_healthy(address)
        stub = bot_pb2_grpc.BotStub(channel)
        for game_id in GAMES:
            request, info, legal = request_for(game_id, seed=1)
            action = action_from_response(stub.Decide(request, timeout=5), legal)
            if name == "greedy":
                assert action == get_game(game_id).greedy(info, legal)
        channel.close()
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=10)
    assert process.returncode == 0, stderr
    assert stderr.splitlines()[0] == f"serving {name} on {address}"
    assert not (short_dir / "bot.sock").exists()


def test_an_example_bot_takes_its_address_from_the_environment(short_dir: Path) -> None:
    address = f"unix:{short_dir / 'env.sock'}"
    with example_process("random", [], env={"SEPTET_BOT_ADDRESS": address}) as process:
        wait_healthy(address).close()
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=10)
    assert process.returncode == 0 and stderr.strip() == f"serving random on {address}"


def test_an_example_bot_with_a_bad_address_says_so_in_one_line_and_exits_2() -> None:
    with example_process("random", ["--address", "nowhere"]) as process:
        started = time.monotonic()
        _, stderr = process.communicate(timeout=20)
    assert process.returncode == 2 and time.monotonic() - started < 20
    assert stderr.strip().splitlines() == [
        "random: error: bad address 'nowhere': use host:port (port 0 picks one) or unix:/path"
    ]
