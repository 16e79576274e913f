"""gRPC decision cost: Decide to the example random bot versus a bare echo of the same bytes.

1. The median round trip of `Decide` (real Oh Hell! requests, 4 players) to bots/examples/random
   against a bare gRPC echo service, in its own process too, sent the same request bytes and
   answering as few bytes as a Decide answer. Target: Decide <= 1.5x the echo.
2. Full 4-player oh-hell games per second with four gRPC random bots (four processes).
3. Oh 7?'s simultaneous bets: the wall time of a 5-seat bet round against one round trip
   (target: about one round trip, not five).
4. Unary Decide against the Play stream (one per seat per match), interleaved: 4-player oh-hell
   games with four processes of one bot folder (the SDK's random bot; node-random too when `node`
   is installed), each way in turn, `--rounds` times. CPU time per decision asked, process time not
   wall: of this process (the referee side: engine, requests, gRPC client) from os.times, and of
   the bot processes (the bot side) from /proc; and decisions per second. Target: the stream at
   most half the CPU per decision of unary calls, on each side.

    python benchmarks/grpc_decisions.py [--calls 2000] [--games 20] [--rounds 5] [--stream-games 6]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# benchmarks/referee.py shares its name with the package measured: keep this folder off the path.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

import grpc  # noqa: E402

from referee.botkit.protocol import bot_pb2, bot_pb2_grpc, convert  # noqa: E402
from referee.engine.games import get_game  # noqa: E402
from referee.engine.games.base import Action, DecisionKind  # noqa: E402
from referee.engine.match import MatchEnd, MatchStart, TimeControl, Turn, play_match  # noqa: E402
from referee.engine.playout import playout  # noqa: E402
from referee.tools.botfolder import RunningBot, start_bot, wait_until_serving  # noqa: E402
from referee.tools.grpc_player import GrpcPlayer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "bots" / "examples" / "random"
NODE_BOT = ROOT / "bots" / "examples" / "node-random"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
ECHO_METHOD = "/septet.bench.Echo/Echo"
REPLY = bot_pb2.DecideResponse(index=3).SerializeToString()


def serve_echo(address: str) -> None:
    """A bare gRPC service answering every request with a Decide-sized reply."""

    def echo(request: bytes, context: grpc.ServicerContext) -> bytes:
        return REPLY

    handler = grpc.method_handlers_generic_handler(
        "septet.bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    server.add_generic_rpc_handlers((handler,))
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc

    servicer = health.HealthServicer()
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    server.add_insecure_port(address)
    server.start()
    server.wait_for_termination()


def sample_requests(count: int) -> list[bot_pb2.DecideRequest]:
    """Decide requests from random 4-player Oh Hell! games, as the referee sends them."""
    game = get_game("oh-hell")
    requests: list[bot_pb2.DecideRequest] = []
    seed = 0
    while len(requests) < count:
        rng = random.Random(seed)
        for step in playout(game, game.start(4), rng):
            decision = game.to_move(step.state)
            if decision is None or decision.is_chance:
                continue
            seat = decision.seats[0]
            legal = game.legal_actions(step.state, seat)
            info = game.information_state(step.state, seat)
            requests.append(
                convert.decide_request(
                    match_id="bench",
                    seat=seat,
                    game=game.id,
                    kind=decision.kind,
                    info=info,
                    legal=legal,
                    decision_ms=1000,
                    bank_ms=10000,
                )
            )
        seed += 1
    return requests[:count]


def median_round_trip(call: Any, payloads: list[Any]) -> float:
    for payload in payloads[:100]:  # warm up the channel
        call(payload)
    times = []
    for payload in payloads:
        started = time.perf_counter()
        call(payload)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


class _BetTimer:
    """Wraps a gRPC player; records when each Oh 7? bet call started and ended."""

    def __init__(self, player: GrpcPlayer, log: list[tuple[float, float]], lock: threading.Lock) -> None:
        self._player, self._log, self._lock = player, log, lock
        self.name, self.concurrent = player.name, True

    def close(self) -> None:
        self._player.close()

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        return self._player.decide(info, legal)

    def start_match(self, start: MatchStart) -> None:
        self._player.start_match(start)

    def end_match(self, end: MatchEnd) -> None:
        self._player.end_match(end)

    def decide_turn(self, turn: Turn, info: Any, legal: tuple[Action, ...]) -> Action:
        started = time.perf_counter()
        action = self._player.decide_turn(turn, info, legal)
        if turn.kind is DecisionKind.BET:
            with self._lock:
                self._log.append((started, time.perf_counter()))
        return action


def bet_rounds(log: list[tuple[float, float]], seats: int) -> list[float]:
    """Wall time of each simultaneous bet round (calls grouped by overlapping intervals)."""
    rounds, ordered = [], sorted(log)
    for index in range(0, len(ordered) - seats + 1, seats):
        group = ordered[index : index + seats]
        rounds.append(max(end for _, end in group) - min(start for start, _ in group))
    return rounds


def process_tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process `pid` and every process below it, from /proc."""
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    pending.extend(int(child) for child in children.read().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def own_cpu() -> float:
    """CPU seconds (user + system) this process used so far: the referee side."""
    times = os.times()
    return times.user + times.system


@dataclass
class Way:
    """One way of asking (unary or stream): per round, CPU µs per decision each side, and rates."""

    name: str
    referee_us: list[float] = field(default_factory=list)
    bot_us: list[float] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)


def play_one_way(bots: list[RunningBot], way: Way, *, stream: bool, games: int, seed: int) -> None:
    """`games` oh-hell games, each seat a gRPC player asking one way; adds one round's figures."""
    game = get_game("oh-hell")
    players = [GrpcPlayer(bot.address, f"bot-{index}", stream=stream) for index, bot in enumerate(bots)]
    try:
        play_match(game, players, seed=seed, time_control=TimeControl(), match_id=f"warm-{seed}")
        referee, bot_side, started = (
            own_cpu(),
            sum(process_tree_cpu(b.process.pid) for b in bots),
            time.perf_counter(),
        )
        decisions = 0
        for number in range(games):
            outcome = play_match(
                game,
                players,
                seed=seed + 1 + number,
                time_control=TimeControl(),
                match_id=f"m-{seed}-{number}",
            )
            assert not outcome.forfeits, outcome.forfeits
            decisions += outcome.decisions
        elapsed = time.perf_counter() - started
        bot_cpu = sum(process_tree_cpu(b.process.pid) for b in bots) - bot_side
        way.referee_us.append((own_cpu() - referee) / decisions * 1e6)
        way.bot_us.append(bot_cpu / decisions * 1e6)
        way.rates.append(decisions / elapsed)
        assert all(player.streaming is stream for player in players), "the way asked is not the one meant"
    finally:
        for player in players:
            player.close()


def compare_ways(folder: Path, rounds: int, games: int) -> None:
    """Unary and stream in turn against the same four processes of `folder`; medians and ratios."""
    bots: list[RunningBot] = []
    try:
        bots = [start_bot(folder) for _ in range(4)]
        unary, stream = Way("unary Decide"), Way("Play stream")
        for number in range(rounds):
            first, second = (unary, stream) if number % 2 == 0 else (stream, unary)
            for way in (first, second):
                play_one_way(bots, way, stream=way is stream, games=games, seed=1000 * number)
        print(f"{folder.name}, 4 seats of oh-hell, {rounds} rounds of {games} games each way, interleaved:")
        heading = "CPU per decision (median, min .. max)"
        print(f"  {heading:<40}{'referee side':>24}{'bot side':>24}{'decisions/s':>14}")
        for way in (unary, stream):
            cells = [
                f"{statistics.median(values):>7.0f} us ({min(values):.0f} .. {max(values):.0f})"
                for values in (way.referee_us, way.bot_us)
            ]
            print(f"  {way.name:<40}{cells[0]:>24}{cells[1]:>24}{statistics.median(way.rates):>14,.0f}")
        referee_ratio = statistics.median(stream.referee_us) / statistics.median(unary.referee_us)
        bot_ratio = statistics.median(stream.bot_us) / statistics.median(unary.bot_us)
        paired = [s / u for s, u in zip(stream.referee_us, unary.referee_us, strict=True)]
        paired_bot = [s / u for s, u in zip(stream.bot_us, unary.bot_us, strict=True)]
        met = "MET" if max(referee_ratio, bot_ratio) <= 0.5 else "MISSED"
        print(
            f"  stream / unary: referee side {referee_ratio:.2f}x (rounds {min(paired):.2f} .. "
            f"{max(paired):.2f}), bot side {bot_ratio:.2f}x (rounds {min(paired_bot):.2f} .. "
            f"{max(paired_bot):.2f}); target <= 0.50x each: {met}"
        )
    finally:
        for bot in bots:
            bot.stop()


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=2000, help="round trips per service (default 2000)")
    parser.add_argument("--games", type=int, default=20, help="oh-hell games with 4 gRPC bots (default 20)")
    parser.add_argument("--rounds", type=int, default=5, help="unary/stream rounds, interleaved (default 5)")
    parser.add_argument(
        "--stream-games", type=int, default=6, help="oh-hell games per way per round (default 6)"
    )
    parser.add_argument("--only-ways", action="store_true", help="only part 4, unary against the stream")
    parser.add_argument("--serve-echo", metavar="ADDRESS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_echo:
        serve_echo(args.serve_echo)
        return
    signal.signal(signal.SIGTERM, _interrupted)  # so every `finally` below stops what it started
    if not args.only_ways:
        round_trips_and_games(args)
    compare_ways(RANDOM_BOT, args.rounds, args.stream_games)
    if shutil.which("node"):
        compare_ways(NODE_BOT, args.rounds, args.stream_games)
    else:
        print("node-random: skipped, `node` is not installed")


def round_trips_and_games(args: argparse.Namespace) -> None:
    """Parts 1 to 3: Decide against a bare echo, whole games per second, Oh 7?'s bet rounds."""

    scratch = Path(tempfile.mkdtemp(prefix="septet-bench-"))
    echo_address = f"unix:{scratch / 'echo.sock'}"
    echo = subprocess.Popen([sys.executable, __file__, "--serve-echo", echo_address])
    bots: list[RunningBot] = []
    players: list[GrpcPlayer] = []
    timed: list[_BetTimer] = []
    try:
        wait_until_serving(echo_address, 15.0, process=echo)  # type: ignore[arg-type]
        bots = [start_bot(RANDOM_BOT) for _ in range(5)]
        requests = sample_requests(args.calls)
        size = statistics.mean(len(request.SerializeToString()) for request in requests)

        with grpc.insecure_channel(bots[0].address) as channel:
            stub = bot_pb2_grpc.BotStub(channel)
            decide = median_round_trip(lambda request: stub.Decide(request, timeout=5), requests)
        raw = [request.SerializeToString() for request in requests]
        with grpc.insecure_channel(echo_address) as channel:
            call = channel.unary_unary(ECHO_METHOD)
            bare = median_round_trip(lambda payload: call(payload, timeout=5), raw)
        print(f"request size: {size:.0f} bytes on average ({len(requests)} Oh Hell! decisions)")
        print(
            f"median round trip: Decide to bots/examples/random {decide * 1e6:.0f} us, "
            f"bare echo {bare * 1e6:.0f} us, ratio {decide / bare:.2f}x (target <= 1.5x)"
        )

        game = get_game("oh-hell")
        players = [GrpcPlayer(bot.address, f"random-{index}") for index, bot in enumerate(bots[:4])]
        started = time.perf_counter()
        decisions = 0
        for seed in range(args.games):
            outcome = play_match(game, players, seed=seed, time_control=TimeControl())
            assert not outcome.forfeits, outcome.forfeits
            decisions += outcome.decisions
        elapsed = time.perf_counter() - started
        print(
            f"oh-hell, 4 gRPC random bots: {args.games / elapsed:.2f} games/s, "
            f"{decisions / elapsed:,.0f} decisions/s ({decisions / args.games:.0f} asked per game)"
        )

        log: list[tuple[float, float]] = []
        lock = threading.Lock()
        timed = [
            _BetTimer(GrpcPlayer(bot.address, f"random-{index}"), log, lock) for index, bot in enumerate(bots)
        ]
        for seed in range(max(3, args.games // 4)):
            play_match(get_game("oh7"), timed, seed=seed, time_control=TimeControl())
        rounds = bet_rounds(log, len(timed))
        single = statistics.median(end - start for start, end in log)
        per_round = statistics.median(rounds)
        print(
            f"oh7, 5 seats: a simultaneous bet round takes {per_round * 1e6:.0f} us (median of "
            f"{len(rounds)}), one bet call {single * 1e6:.0f} us: {per_round / single:.2f} "
            f"round trips (asked one by one it would be about {len(timed)})"
        )
    finally:
        for player in players:
            player.close()
        for timer in timed:
            timer.close()
        for bot in bots:
            bot.stop()
        echo.terminate()
        echo.wait()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
