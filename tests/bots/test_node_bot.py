"""The Node.js example bot (bots/examples/node-random) as a real process on a real unix socket.

The bot is started from its own manifest (`npm ci` first when `node_modules` is missing), reached
with the Python gRPC and health clients, and asked every decision of whole engine-driven games:
each answer must be an index into the legal actions. Skipped only where `node` is not installed.
"""

from __future__ import annotations

import fcntl
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.botkit.protocol import bot_pb2, bot_pb2_grpc, convert
from referee.engine.games import get_game
from referee.engine.games.base import CHANCE, Action, DecisionKind, Game
from referee.engine.games.oh7 import VALUE
from referee.engine.match import TimeControl, play_match
from referee.tools.grpc_player import GrpcPlayer

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "bots" / "examples" / "node-random"
BOT_SERVICE = "septet.v1.Bot"
STARTUP_SECONDS = 20.0
CALL_SECONDS = 5.0
RANKS = "23456789TJQKA"

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def manifest() -> dict[str, Any]:
    return tomllib.loads((FOLDER / "septet-bot.toml").read_text(encoding="utf-8"))


def ensure_built() -> None:
    """Runs the manifest's build (`npm ci`) once when node_modules is missing, one worker at a time."""
    lock_path = Path(tempfile.gettempdir()) / "septet-node-random-build.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (FOLDER / "node_modules").is_dir():
            return
        build = manifest()["build"]
        done = subprocess.run(build, cwd=FOLDER, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, f"{' '.join(build)} failed:\n{done.stdout}{done.stderr}"


@dataclass
class NodeBot:
    """A running node-random process and a channel to it."""

    process: subprocess.Popen[str]
    address: str
    channel: grpc.Channel
    scratch: Path

    @property
    def stub(self) -> bot_pb2_grpc.BotStub:
        return bot_pb2_grpc.BotStub(self.channel)

    def stop(self) -> tuple[int, str]:
        """SIGTERM, then the exit code and everything the bot printed."""
        self.channel.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            _, stderr = self.process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, stderr = self.process.communicate()
        shutil.rmtree(self.scratch, ignore_errors=True)
        return self.process.returncode, stderr


def health_status(channel: grpc.Channel, service: str) -> int:
    health = health_pb2_grpc.HealthStub(channel)
    return health.Check(health_pb2.HealthCheckRequest(service=service), timeout=1.0).status


def start_bot(*extra: str, env: dict[str, str] | None = None) -> NodeBot:
    """Starts the bot with its manifest's command on a fresh unix socket; waits for SERVING."""
    ensure_built()
    scratch = Path(tempfile.mkdtemp(prefix="septet-node-"))
    address = f"unix:{scratch / 'bot.sock'}"
    command = [word.replace("{address}", address) for word in manifest()["command"]]
    process = subprocess.Popen(
        [*command, *extra],
        cwd=FOLDER,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    channel = grpc.insecure_channel(address)
    bot = NodeBot(process, address, channel, scratch)
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            code, stderr = bot.stop()
            pytest.fail(f"node-random exited with {code} before serving:\n{stderr}")
        try:
            if health_status(channel, "") == health_pb2.HealthCheckResponse.SERVING:
                return bot
        except grpc.RpcError:
            pass
        time.sleep(0.05)
    code, stderr = bot.stop()
    pytest.fail(f"node-random was not SERVING within {STARTUP_SECONDS} s:\n{stderr}")


@pytest.fixture(scope="module")
def bot() -> Iterator[NodeBot]:
    running = start_bot()
    yield running
    running.stop()


def ask(bot: NodeBot, game: Game, seat: int, kind: DecisionKind, info: Any, legal: tuple[Action, ...]) -> int:
    """Sends one real DecideRequest; returns the index the bot answered (asserting it is one)."""
    request = convert.decide_request(
        match_id="node-test", seat=seat, game=game.id, kind=kind, info=info, legal=legal,
        decision_ms=1000, bank_ms=10_000,
    )  # fmt: skip
    response = bot.stub.Decide(request, timeout=CALL_SECONDS)
    assert response.WhichOneof("choice") == "index", f"answered {response} instead of an index"
    assert 0 <= response.index < len(legal), f"index {response.index} of {len(legal)} legal actions"
    assert convert.action_from_response(response, legal) == legal[response.index]
    return response.index


@dataclass
class Played:
    """What a whole game asked of the bot: every (kind, info, legal, answered index)."""

    decisions: list[tuple[DecisionKind, Any, tuple[Action, ...], int]]
    scores: tuple[int, ...]


def play_game(bot: NodeBot, game_id: str, players: int, seed: int, **options: int) -> Played:
    """Drives the engine with every seat played by the bot (forced moves applied without asking)."""
    game = get_game(game_id)
    state = game.start(players, options)
    rng = random.Random(seed)
    decisions: list[tuple[DecisionKind, Any, tuple[Action, ...], int]] = []
    while (decision := game.to_move(state)) is not None:
        if decision.is_chance:
            state = game.apply(state, CHANCE, game.sample_chance(state, rng))
            continue
        chosen: list[tuple[int, Action]] = []
        for seat in decision.seats:  # simultaneous bets: every seat asked before any is applied
            legal = game.legal_actions(state, seat)
            if len(legal) == 1:
                chosen.append((seat, legal[0]))
                continue
            info = game.information_state(state, seat)
            index = ask(bot, game, seat, decision.kind, info, legal)
            decisions.append((decision.kind, info, legal, index))
            chosen.append((seat, legal[index]))
        for seat, action in chosen:
            state = game.apply(state, seat, action)
    result = game.result(state)
    assert result is not None
    return Played(decisions, result.scores)


def card_strength(card: str, trump: str) -> int:
    return RANKS.index(card[0]) + (len(RANKS) if card[1] == trump else 0)


def test_health_serves_both_the_server_and_the_bot_service(bot: NodeBot) -> None:
    serving = health_pb2.HealthCheckResponse.SERVING
    assert health_status(bot.channel, "") == serving
    assert health_status(bot.channel, BOT_SERVICE) == serving
    with pytest.raises(grpc.RpcError) as error:
        health_status(bot.channel, "septet.v1.NoSuchService")
    assert error.value.code() == grpc.StatusCode.NOT_FOUND


def test_start_and_end_match_are_acknowledged(bot: NodeBot) -> None:
    start = convert.start_match_request(
        match_id="m1", game="oh-hell", seat=1, num_players=4, options={},
        seat_names=["a", "node-random", "b", "c"], time_control=TimeControl(1.0, 10.0),
    )  # fmt: skip
    assert isinstance(bot.stub.StartMatch(start, timeout=CALL_SECONDS), bot_pb2.StartMatchResponse)
    end = bot_pb2.EndMatchRequest(match_id="m1", scores=[10, -20, 30, 0], ranks=[2, 4, 1, 3])
    assert isinstance(bot.stub.EndMatch(end, timeout=CALL_SECONDS), bot_pb2.EndMatchResponse)


@pytest.mark.parametrize("seed", [1, 2])
def test_oh_hell_whole_game_bids_lowest_and_sheds_lowest_card_once_bid_is_made(
    bot: NodeBot, seed: int
) -> None:
    played = play_game(bot, "oh-hell", 4, seed)
    bids = [(info, legal, i) for kind, info, legal, i in played.decisions if kind is DecisionKind.BID]
    plays = [(info, legal, i) for kind, info, legal, i in played.decisions if kind is DecisionKind.PLAY]
    assert len(bids) > 40 and len(plays) > 100
    for _, legal, index in bids:
        assert legal[index] == min(legal, key=int)
    made = 0
    for info, legal, index in plays:
        if info.tricks_won[info.seat] >= info.bids[info.seat]:
            made += 1
            strengths = [card_strength(str(card), info.trump) for card in legal]
            assert strengths[index] == min(strengths), f"played {legal[index]} from {legal}"
    assert made > 0


@pytest.mark.parametrize(
    ("game_id", "players"), [("oh7", 3), ("oh7", 5), ("oh7-advanced", 4), ("oh7-duel", 2)]
)
def test_oh7_whole_game_bets_with_a_lowest_valued_card(bot: NodeBot, game_id: str, players: int) -> None:
    played = play_game(bot, game_id, players, seed=players, target=21)
    bets = [(legal, i) for kind, _, legal, i in played.decisions if kind is DecisionKind.BET]
    kinds = {kind for kind, *_ in played.decisions}
    assert {DecisionKind.BET, DecisionKind.PLAY} <= kinds
    for legal, index in bets:
        values = [VALUE[str(card)] for card in legal]
        assert values[index] == min(values), f"bet {legal[index]} from {legal}"


@pytest.mark.parametrize(("game_id", "players"), [("black-sevens", 4), ("seven-up-seven-down", 5)])
def test_other_games_are_played_legally_to_the_end(bot: NodeBot, game_id: str, players: int) -> None:
    played = play_game(bot, game_id, players, seed=3)
    assert len(played.decisions) > 20
    assert len(played.scores) == players


def test_a_seeded_bot_repeats_its_choices() -> None:
    """Black Sevens is answered at random: with --seed, the same game gets the same answers."""
    first = start_bot("--seed", "7")
    try:
        answers = [index for *_, index in play_game(first, "black-sevens", 4, seed=5).decisions]
    finally:
        first.stop()
    again = start_bot(env={"SEPTET_SEED": "7"})
    try:
        repeated = [index for *_, index in play_game(again, "black-sevens", 4, seed=5).decisions]
    finally:
        again.stop()
    assert answers == repeated
    assert len(set(answers)) > 1  # not a constant answer


def test_a_request_without_legal_actions_is_refused_not_answered(bot: NodeBot) -> None:
    with pytest.raises(grpc.RpcError) as error:
        bot.stub.Decide(bot_pb2.DecideRequest(game="oh-hell"), timeout=CALL_SECONDS)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no legal actions" in (error.value.details() or "")


def test_sigterm_stops_the_bot_with_exit_code_zero() -> None:
    bot = start_bot()
    code, stderr = bot.stop()
    assert code == 0
    assert f"serving node-random on {bot.address}" in stderr
    assert "node-random stopped (SIGTERM)" in stderr


def test_sigint_stops_the_bot_with_exit_code_zero() -> None:
    bot = start_bot()
    bot.process.send_signal(signal.SIGINT)
    assert bot.process.wait(timeout=10) == 0
    bot.stop()


def test_missing_protos_is_one_clear_line_and_exit_code_2(tmp_path: Path) -> None:
    ensure_built()
    done = subprocess.run(
        ["node", "bot.js", "--address", f"unix:{tmp_path / 'bot.sock'}"],
        cwd=FOLDER,
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "SEPTET_PROTOS": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"node-random: error: cannot find septet/v1/bot.proto under {tmp_path} "
        "(set SEPTET_PROTOS to the protos folder)"
    ]


def test_no_address_is_one_clear_line_and_exit_code_2() -> None:
    ensure_built()
    env = {key: value for key, value in os.environ.items() if key != "SEPTET_BOT_ADDRESS"}
    done = subprocess.run(
        ["node", "bot.js"], cwd=FOLDER, capture_output=True, text=True, timeout=30, env=env, check=False
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("node-random: error: no address to serve on")


def test_a_match_on_the_play_stream_is_answered_as_over_decide(bot: NodeBot) -> None:
    """The bot keeps each stream's information state (deltas merged) and decides as on Decide."""
    replays = []
    for stream in (True, False):
        players = [GrpcPlayer(bot.address, f"node-{seat}", stream=stream) for seat in range(4)]
        try:
            outcome = play_match("oh-hell", players, seed=21, time_control=TimeControl(), match_id="node")
        finally:
            for player in players:
                player.close()
        assert outcome.forfeits == [] and all(player.streaming is stream for player in players)
        replays.append([(e["seat"], e["action"]) for e in outcome.replay["events"] if e["type"] == "action"])
    assert replays[0] == replays[1], "its rules of thumb saw the same states both ways"
