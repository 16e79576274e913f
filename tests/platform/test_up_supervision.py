"""`septet up` heals itself, tried on a real one (embedded SQLite and Redis, the example bots):
a failed start leaves no process (the embedded Redis included); its web site is gunicorn; a worker
killed with SIGKILL is started again within seconds and
matches go on finishing; an embedded Redis killed with SIGKILL comes back, /healthz answering 503
while it is down and 200 again after; and the launcher killed with SIGKILL leaves no process it
started (found from the pids it printed and from /proc, never by name)."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from platform_support import SEPTET, local_address
from process_tree import descendants, left_after

ROOT = Path(__file__).resolve().parents[2]
STARTED = re.compile(r"septet up: started (\w+) \(pid (\d+)\)")


class Launcher:
    """A `septet up` the test started, with the lines it printed so far, read on a thread."""

    def __init__(self, data: Path, web: str, arena: str) -> None:
        env = {key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "DATABASE_URL")}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        self.process = subprocess.Popen(
            [SEPTET, "up", "--data", str(data), "--web", web, "--arena", arena],
            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def pids(self) -> dict[str, int]:
        """The newest pid the launcher printed for each child."""
        found: dict[str, int] = {}
        for line in list(self.lines):
            if matched := STARTED.search(line):
                found[matched.group(1)] = int(matched.group(2))
        return found

    def wait_for(self, predicate: object, seconds: float, what: str, seen: list[str] | None = None) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "\n".join(self.lines[-40:])
            if predicate():  # type: ignore[operator]
                return
            time.sleep(0.2)
        answers = "\n".join(dict.fromkeys((seen or [])[-200:]))  # distinct answers, in order
        raise AssertionError(
            f"{what} within {seconds} s; seen:\n{answers}\nthe launcher said:\n" + "\n".join(self.lines[-40:])
        )


def _finished(database: Path) -> int:
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as connection:
            query = "select count(*) from matches_match where status = 'finished'"
            return int(connection.execute(query).fetchone()[0])
    except sqlite3.OperationalError:  # not there or not migrated yet
        return 0


def _health(web: str, answers: list[str] | None = None) -> int:
    """/healthz's status (0: no answer); its body, or why none came, appended to `answers`. The
    wait is long: an answer decided while Redis was down may take seconds on a loaded machine
    (the broker check's own timeout is 2 s), and Redis is back about a second after its death."""
    try:
        with urllib.request.urlopen(f"http://{web}/healthz", timeout=20) as response:
            status, body = int(response.status), response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        status, body = int(error.code), error.read().decode(errors="replace")
    except OSError as error:
        status, body = 0, f"{type(error).__name__}: {error}"
    if answers is not None:
        answers.append(f"{time.strftime('%H:%M:%S')} {status} {body}")
    return status


@pytest.mark.slow
def test_septet_up_restarts_a_killed_worker_and_redis_and_leaves_nothing_when_killed(tmp_path: Path) -> None:
    """Tried: SIGKILL to the worker, to the embedded redis-server, then to the launcher itself."""
    web, arena = local_address(), local_address()
    database = tmp_path / "septet.sqlite3"
    up = Launcher(tmp_path, web, arena)
    try:
        up.wait_for(lambda: any("Ctrl-C stops everything" in line for line in up.lines), 300, "started")
        pids = up.pids()
        assert set(pids) >= {"redis", "worker1", "beat", "web", "arena"}
        web_command = Path(f"/proc/{pids['web']}/cmdline").read_text()
        assert "gunicorn" in web_command, "the site is served by gunicorn"
        up.wait_for(lambda: _finished(database) >= 1, 240, "a rated match finished")

        os.kill(pids["worker1"], signal.SIGKILL)
        killed_at = time.monotonic()
        up.wait_for(lambda: up.pids()["worker1"] != pids["worker1"], 15, "the worker started again")
        restarted_after = time.monotonic() - killed_at
        before = _finished(database)
        up.wait_for(lambda: _finished(database) > before, 180, "a match finished by the new worker")
        assert restarted_after < 10

        pids = up.pids()
        os.kill(pids["redis"], signal.SIGKILL)
        statuses: list[int] = []
        answers: list[str] = []
        up.wait_for(
            lambda: statuses.append(_health(web, answers)) or (503 in statuses and statuses[-1] == 200),
            60,
            "/healthz 503 while Redis is down, then 200",
            answers,
        )
        assert up.pids()["redis"] != pids["redis"]
        assert any("redis (pid" in line and "died (killed by SIGKILL)" in line for line in up.lines)

        started = descendants(up.process.pid)
        assert {pid for pid, _ in started} >= set(up.pids().values())
    finally:
        started = descendants(up.process.pid)
        up.process.kill()
        up.process.wait()
    assert left_after(started, seconds=30) == set(), "no process septet up started is left"


def test_a_failed_start_says_why_and_leaves_no_process_it_started(tmp_path: Path) -> None:
    """Tried: a database that does not answer (port 1 of this machine), after the embedded Redis
    and the orphan guard were started."""
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env["DATABASE_URL"] = "postgres://septet@127.0.0.1:1/septet"
    up = subprocess.Popen(
        [SEPTET, "up", "--data", str(tmp_path), "--web", local_address(), "--arena", local_address()],
        env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert up.stderr is not None
    started: set[tuple[int, int]] = set()
    lines = []
    for line in up.stderr:  # the processes it started, read while they run
        lines.append(line)
        started |= descendants(up.pid)
    assert up.wait(timeout=60) == 2
    said = "".join(lines)
    assert "septet up: cannot start: the database did not answer" in said
    assert "Traceback" not in said
    redis = int(STARTED.search(said).group(2))  # type: ignore[union-attr]
    assert redis in {pid for pid, _ in started}, "the embedded Redis had started"
    assert left_after(started, seconds=20) == set(), "nothing it started is left"
