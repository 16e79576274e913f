"""`septet up` from nothing: embedded SQLite and Redis, the example bots qualified, rated matches
finished with replays, and Ctrl-C (SIGTERM) leaves no process behind."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from platform_support import SEPTET, local_address

ROOT = Path(__file__).resolve().parents[2]


def _finished_matches(database: Path) -> list[tuple[str, str]]:
    if not database.exists():
        return []
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as connection:
            return connection.execute(
                "select l.game, m.replay from matches_match m join ladders_ladder l on l.id = m.ladder_id "
                "where m.status = 'finished'"
            ).fetchall()
    except sqlite3.OperationalError:  # not migrated yet
        return []


@pytest.mark.slow
def test_septet_up_plays_rated_matches_and_stops_cleanly(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "DATABASE_URL")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    web, arena = local_address(), local_address()
    up = subprocess.Popen(
        [SEPTET, "up", "--data", str(tmp_path), "--web", web, "--arena", arena],
        env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        finished: list[tuple[str, str]] = []
        while time.monotonic() < deadline and len({game for game, _ in finished}) < 3:
            assert up.poll() is None, up.stderr.read() if up.stderr else ""
            time.sleep(2)
            finished = _finished_matches(tmp_path / "septet.sqlite3")
        assert len({game for game, _ in finished}) >= 3, "rated matches finish on several ladders"
        assert all((tmp_path / "replays" / replay).is_file() for _, replay in finished)
    finally:
        up.send_signal(signal.SIGTERM)
        _, errors = up.communicate(timeout=60)
    assert re.search(r"demo API token\s+sep_", errors), "the ready message gives the demo token"
    leftovers = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
    assert leftovers == [], "every process septet up started is gone"
    assert _processes_working_in(tmp_path) == [], "no bot process is left in the bots' folders"


def _processes_working_in(folder: Path) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and Path(os.readlink(proc / "cwd")).is_relative_to(folder):
                found.append((proc / "cmdline").read_text().replace("\0", " "))
        except OSError:
            continue
    return found
