"""Arena under followers: 200 concurrent FollowMatch callers plus normal unary traffic.

Sixteen anonymous followers once took every thread of the Arena and all other calls failed. Now
streams are bounded below the thread count (settings.SEPTET_ARENA_STREAMS in all,
SEPTET_ARENA_STREAMS_PER_USER per user), so unary calls keep threads of their own.

1. A throwaway SQLite database (the embedded default) is migrated: the ladders, `--users` users
   with an API token each, and matches that stay SCHEDULED (a follower of one stays connected).
2. The Arena runs in a subprocess (`manage.py arena`), as `septet up` and deploy/ run it.
3. This process runs `--followers` follower threads spread over the users; each follows a match
   and, when refused with RESOURCE_EXHAUSTED, tries again after a second, as a client would.
4. A second process sends unary calls (ListLadders, GetLadder, ListMatches and GetMatch with a
   token) from `--unary-threads` threads for `--seconds`, and reports their latencies and errors.

Target: unary p95 < 250 ms and 0 unary errors.

    python benchmarks/arena_load.py [--followers 200] [--users 50] [--unary-threads 8] [--seconds 30]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGET_P95_MS = 250.0
MATCHES = 20


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def prepare(users: int) -> dict[str, Any]:
    """Ladders, users with a token each, and matches that stay scheduled; what the load needs."""
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from septet_platform.accounts.services import api_token_create
    from septet_platform.ladders.services import ladders_ensure
    from septet_platform.matches.models import Match

    call_command("migrate", verbosity=0)
    ladders = ladders_ensure()
    tokens = []
    for number in range(users):
        user = User.objects.create(username=f"follower{number}")
        tokens.append(api_token_create(user=user, name="load")[1])
    matches = [Match.objects.create(ladder=ladders[0], seed=number + 1).pk for number in range(MATCHES)]
    return {"tokens": tokens, "matches": matches, "games": [ladder.game for ladder in ladders]}


def serve(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    address = f"127.0.0.1:{_free_port()}"
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "arena", "--address", address],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import grpc

    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
    return server, address


def followers(address: str, plan: dict[str, Any], count: int, stop: threading.Event) -> Counter[str]:
    """`count` threads following matches until `stop`; outcomes counted by status code name
    ('SERVED' for each stream that delivered its first event)."""
    import grpc

    from referee.botkit.protocol import arena_pb2 as pb
    from referee.botkit.protocol import arena_pb2_grpc

    outcomes: Counter[str] = Counter()
    active: set[Any] = set()
    lock = threading.Lock()
    channels = [grpc.insecure_channel(address) for _ in range(8)]

    def follow(index: int) -> None:
        stub = arena_pb2_grpc.ArenaStub(channels[index % len(channels)])
        token = plan["tokens"][index % len(plan["tokens"])]
        match_id = plan["matches"][index % len(plan["matches"])]
        while not stop.is_set():
            stream = stub.FollowMatch(
                pb.FollowMatchRequest(match_id=match_id),
                metadata=[("authorization", f"Bearer {token}")],
            )
            with lock:
                active.add(stream)
            try:
                for _ in stream:
                    with lock:
                        outcomes["SERVED"] += 1
            except grpc.RpcError as error:
                code = error.code().name
                if code != "CANCELLED":
                    with lock:
                        outcomes[code] += 1
            finally:
                with lock:
                    active.discard(stream)
            stop.wait(1.0)  # refused or ended: try again in a second, as a client would

    threads = [threading.Thread(target=follow, args=(index,), daemon=True) for index in range(count)]
    for thread in threads:
        thread.start()
    stop.wait()
    with lock:
        for stream in active:
            stream.cancel()
    for thread in threads:
        thread.join(timeout=5)
    for channel in channels:
        channel.close()
    return outcomes


def unary_load(address: str, plan: dict[str, Any], threads: int, seconds: float) -> dict[str, Any]:
    """Unary calls from `threads` threads for `seconds`: latencies (ms) per call and errors."""
    import grpc

    from referee.botkit.protocol import arena_pb2 as pb
    from referee.botkit.protocol import arena_pb2_grpc

    latencies: dict[str, list[float]] = {
        "ListLadders": [],
        "GetLadder": [],
        "ListMatches": [],
        "GetMatch": [],
    }
    errors: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def work(seed: int) -> None:
        rng = random.Random(seed)
        with grpc.insecure_channel(address) as channel:
            stub = arena_pb2_grpc.ArenaStub(channel)
            metadata = [("authorization", f"Bearer {plan['tokens'][seed % len(plan['tokens'])]}")]
            calls = {
                "ListLadders": lambda: stub.ListLadders(pb.ListLaddersRequest(), timeout=5),
                "GetLadder": lambda: stub.GetLadder(
                    pb.GetLadderRequest(game=rng.choice(plan["games"])), timeout=5
                ),
                "ListMatches": lambda: stub.ListMatches(
                    pb.ListMatchesRequest(page_size=20), metadata=metadata, timeout=5
                ),
                "GetMatch": lambda: stub.GetMatch(
                    pb.GetMatchRequest(match_id=rng.choice(plan["matches"])), metadata=metadata, timeout=5
                ),
            }
            while time.monotonic() < deadline:
                name = rng.choice(list(calls))
                began = time.perf_counter()
                try:
                    calls[name]()
                except grpc.RpcError as error:
                    with lock:
                        errors.append(f"{name}: {error.code().name} {error.details()}")
                    continue
                with lock:
                    latencies[name].append((time.perf_counter() - began) * 1000)

    workers = [threading.Thread(target=work, args=(seed,)) for seed in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return {"latencies": latencies, "errors": errors}


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))] if ordered else float("nan")


def report(result: dict[str, Any], outcomes: Counter[str], args: argparse.Namespace) -> bool:
    print(f"\n{'unary call':<12} {'calls':>7} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    every: list[float] = []
    for name, values in result["latencies"].items():
        every += values
        if values:
            print(
                f"{name:<12} {len(values):>7} {statistics.median(values):>8.1f} "
                f"{_percentile(values, 0.95):>8.1f} {max(values):>8.1f}"
            )
    p95 = _percentile(every, 0.95)
    errors = result["errors"]
    print(f"{'all':<12} {len(every):>7} {statistics.median(every):>8.1f} {p95:>8.1f} {max(every):>8.1f}")
    print(f"unary errors: {len(errors)}" + (f", e.g. {errors[:3]}" if errors else ""))
    print(
        f"followers: {args.followers} threads over {args.users} users; stream outcomes: "
        + ", ".join(f"{name} {count}" for name, count in sorted(outcomes.items()))
    )
    met = p95 < TARGET_P95_MS and not errors
    print(f"target unary p95 < {TARGET_P95_MS:.0f} ms and 0 unary errors: {'met' if met else 'MISSED'}")
    return met


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--followers", type=int, default=200)
    parser.add_argument("--users", type=int, default=50, help="followers are spread over this many users")
    parser.add_argument("--unary-threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--unary", nargs=2, metavar=("ADDRESS", "PLAN"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    # benchmarks/referee.py would shadow the referee package for a script run from this folder
    sys.path[:] = [
        entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent
    ]
    if args.unary:
        address, plan_file = args.unary
        plan = json.loads(Path(plan_file).read_text())
        print(json.dumps(unary_load(address, plan, args.unary_threads, args.seconds)))
        return

    scratch = Path(tempfile.mkdtemp(prefix="septet-arena-bench-"))
    server = None
    try:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{scratch / 'bench.sqlite3'}",
            "SEPTET_DATA_DIR": str(scratch / "data"),
            "DJANGO_SETTINGS_MODULE": "septet_platform.settings.base",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "platform"), os.environ.get("PYTHONPATH", "")]),
        }
        os.environ.update(env)
        import django

        django.setup()
        plan = prepare(args.users)
        from django.conf import settings
        from django.db import connections

        connections.close_all()
        plan_file = scratch / "plan.json"
        plan_file.write_text(json.dumps(plan))
        server, address = serve(env)
        print(
            f"Arena at {address} (SQLite): streams bound {settings.SEPTET_ARENA_STREAMS} in all, "
            f"{settings.SEPTET_ARENA_STREAMS_PER_USER} per user"
        )
        stop = threading.Event()
        outcome_box: list[Counter[str]] = []
        following = threading.Thread(
            target=lambda: outcome_box.append(followers(address, plan, args.followers, stop))
        )
        following.start()
        time.sleep(3)  # the followers have taken every stream slot they can
        measured = subprocess.run(
            [
                sys.executable,
                __file__,
                "--unary",
                address,
                str(plan_file),
                "--unary-threads",
                str(args.unary_threads),
                "--seconds",
                str(args.seconds),
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        stop.set()
        if measured.returncode != 0:
            raise SystemExit(f"the unary load failed:\n{measured.stderr}")
        following.join(timeout=30)
        met = report(json.loads(measured.stdout), outcome_box[0] if outcome_box else Counter(), args)
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (1 min) at the end")
        print("target met" if met else "target MISSED")
    finally:
        if server is not None:
            server.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.wait(timeout=10)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
