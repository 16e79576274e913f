"""Matches per minute with one and with two Celery worker processes, from the production
configuration, on PostgreSQL and Redis; and with three, to show what the machine can do at all.

Each run starts `septet up --production --workers N --concurrency 1` (gunicorn, prefork workers,
the sandbox, JSON logs) against a fresh PostgreSQL database and an emptied Redis database index,
with the example bots, and counts rated matches finished over the measured window (see
platform_throughput.py). A "worker process" here is one Celery worker playing one match at a time,
so the ratio says what a second worker adds. Target: 2 workers >= 1.6x 1 worker on a 2-core machine.
Each count runs `--rounds` times in mirrored order and its rates are averaged: a shared machine's
speed drifts by up to a third over minutes, more than the difference being measured.

    python benchmarks/scale_workers.py [--seconds 90] [--warmup 60] [--workers 1,2,3] [--rounds 2]
                                       [--postgres URL] [--redis URL]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import statistics
import sys
import uuid
from collections.abc import Iterator

from platform_throughput import DEFAULT_WARMUP_SECONDS, Throughput, measure

TARGET_RATIO = 1.6


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=90.0, help="measured window per run (default: 90)")
    parser.add_argument(
        "--warmup", type=float, default=DEFAULT_WARMUP_SECONDS, help="play before each window (default: 60)"
    )
    parser.add_argument(
        "--workers",
        default="1,2,3",
        help="worker process counts to run, comma-separated; 1 and 2 are needed for the ratio, 3 shows "
        "what the machine can do at all (default: 1,2,3)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="runs per count, in mirrored order (1,2,3,3,2,1): a machine whose speed drifts "
        "weighs on every count alike (default: 2)",
    )
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres", metavar="URL")
    parser.add_argument(
        "--redis", default="redis://127.0.0.1:6379/7", metavar="URL", help="emptied before each run"
    )
    args = parser.parse_args()
    counts = [int(count) for count in args.workers.split(",")]
    if not {1, 2} <= set(counts) or min(counts) < 1 or args.rounds < 1:
        parser.error("--workers must include 1 and 2 (and only positive counts); --rounds at least 1")

    runs: dict[int, list[Throughput]] = {count: [] for count in counts}
    for workers in _mirrored(counts, args.rounds):
        print(f"{workers} worker process(es): starting septet up --production ...", file=sys.stderr)
        runs[workers].append(_run(workers, args))

    print(
        f"{'worker processes':<18} {'rated matches':>13} {'seconds':>8} {'per minute':>11} "
        f"{'cores busy':>11} {'per busy core':>14}  runs (per minute)"
    )
    rate = {workers: statistics.mean(run.per_minute for run in results) for workers, results in runs.items()}
    for workers, results in runs.items():
        matches = sum(sum(run.per_game.values()) for run in results)
        seconds = sum(run.seconds for run in results)
        busy = statistics.mean(run.cores_busy for run in results)
        each = ", ".join(f"{run.per_minute:.0f}" for run in results)
        row = f"{workers:<18} {matches:>13} {seconds:>8.0f} {rate[workers]:>11.1f} {busy:>11.2f}"
        print(f"{row} {rate[workers] / max(busy, 0.01):>14.1f}  {each}")
    ratio = rate[2] / rate[1]
    verdict = "meets" if ratio >= TARGET_RATIO else "MISSES"
    print(f"scaling: 2 workers / 1 worker = {ratio:.2f}x ({verdict} the {TARGET_RATIO}x target)", end="")
    print(f" on {os.cpu_count()} cores")
    best = max(rate, key=rate.__getitem__)
    print(f"machine: at most {rate[best] / rate[1]:.2f}x one worker, with {best} worker processes")
    return 0


def _mirrored(counts: list[int], rounds: int) -> list[int]:
    """Runs in the order 1,2,3 then 3,2,1 and so on, so a drift in the machine's speed over the
    benchmark does not favour the counts that happen to run first."""
    order: list[int] = []
    for round_number in range(rounds):
        order += counts if round_number % 2 == 0 else counts[::-1]
    return order


def _run(workers: int, args: argparse.Namespace) -> Throughput:
    """One `septet up --production` with `workers` worker processes on a fresh database."""
    with _fresh_database(args.postgres) as database_url:
        _flush(args.redis)
        env = {
            "DATABASE_URL": database_url,
            "REDIS_URL": args.redis,
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SEPTET_HTTPS": "0",
            "SEPTET_LOG_FORMAT": "json",
        }
        options = ["--production", "--workers", str(workers), "--concurrency", "1"]
        try:
            return measure(options, args.seconds, env, warmup=args.warmup)
        finally:
            _flush(args.redis)


@contextlib.contextmanager
def _fresh_database(admin_url: str) -> Iterator[str]:
    """A new PostgreSQL database for one run, dropped afterwards; yields its URL."""
    import psycopg

    name = f"septet_scale_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _flush(redis_url: str) -> None:
    import redis

    redis.Redis.from_url(redis_url).flushdb()


if __name__ == "__main__":
    sys.exit(main())
