"""Matches per minute with one and with two Celery worker processes, from the production
configuration, on PostgreSQL and Redis.

Each run starts `septet up --production --workers N --concurrency 1` (gunicorn, prefork workers,
the sandbox, JSON logs) against a fresh PostgreSQL database and an emptied Redis database index,
with the example bots, and counts rated matches finished over the measured window (see
platform_throughput.py). A "worker process" here is one Celery worker playing one match at a time,
so the ratio says what a second worker adds. Target: 2 workers >= 1.6x 1 worker on a 2-core machine.

    python benchmarks/scale_workers.py [--seconds 120] [--postgres URL] [--redis URL]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import sys
import uuid
from collections.abc import Iterator

from platform_throughput import Throughput, measure

TARGET_RATIO = 1.6


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=120.0, help="measured window per run (default: 120)")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres", metavar="URL")
    parser.add_argument(
        "--redis", default="redis://127.0.0.1:6379/7", metavar="URL", help="emptied before each run"
    )
    args = parser.parse_args()

    results: dict[int, Throughput] = {}
    for workers in (1, 2):
        print(f"{workers} worker process(es): starting septet up --production ...", file=sys.stderr)
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
            results[workers] = measure(["--production", "--workers", str(workers), "--concurrency", "1"],
                                       args.seconds, env)  # fmt: skip
        _flush(args.redis)

    print(
        f"{'worker processes':<18} {'rated matches':>13} {'seconds':>8} {'per minute':>11} {'cores busy':>11}"
    )
    for workers, result in results.items():
        matches = sum(result.per_game.values())
        row = f"{workers:<18} {matches:>13} {result.seconds:>8.0f} {result.per_minute:>11.1f}"
        print(f"{row} {result.cores_busy:>11.2f}")
    ratio = results[2].per_minute / results[1].per_minute
    verdict = "meets" if ratio >= TARGET_RATIO else "MISSES"
    print(f"scaling: 2 workers / 1 worker = {ratio:.2f}x ({verdict} the {TARGET_RATIO}x target)", end="")
    print(f" on {os.cpu_count()} cores")
    per_core = [result.per_minute / max(result.cores_busy, 0.01) for result in results.values()]
    print(f"per busy core: {per_core[0]:.1f} and {per_core[1]:.1f} matches/min (1 and 2 workers)")
    return 0


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
