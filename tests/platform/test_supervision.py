"""The supervisor under `septet up`, with real processes: a child killed with SIGKILL is started
again and the state file says so; a stop sends SIGTERM to a child alone, so the processes it
stops itself (a Celery pool) finish first; a child that keeps dying is a crash loop naming it; a launcher
killed with SIGKILL leaves no process it started (children, their children, one that ignores
SIGTERM); the embedded Redis keeps queued tasks across a SIGKILL; /healthz and /ops/ show a dead
supervised process."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from kombu import Connection
from process_tree import descendants, identity, left_after

from septet_platform.launcher import _redis_answers, embedded_redis_spec
from septet_platform.supervision import ChildSpec, CrashLoop, Supervisor

ROOT = Path(__file__).resolve().parents[2]


def _tick_until(supervisor: Supervisor, done: Any, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        supervisor.tick()
        if done():
            return
        time.sleep(0.05)
    raise AssertionError("the supervisor did not get there in time")


@pytest.fixture
def supervisor(tmp_path: Path) -> Iterator[Supervisor]:
    said: list[str] = []
    made = Supervisor(
        state_file=tmp_path / "supervision.json",
        say=said.append,
        guard_env=dict(os.environ),
        cwd=tmp_path,
        first_backoff=0.1,
    )
    made.said = said  # type: ignore[attr-defined]
    try:
        yield made
    finally:
        made.stop()


def _sleeper(tmp_path: Path, name: str = "sleeper") -> ChildSpec:
    return ChildSpec(name, ["sleep", "300"], env=dict(os.environ), cwd=tmp_path)


def test_a_child_killed_with_sigkill_is_started_again_and_the_state_file_says_so(
    supervisor: Supervisor, tmp_path: Path
) -> None:
    child = supervisor.start(_sleeper(tmp_path))
    assert child.process is not None
    first = child.process.pid
    os.kill(first, signal.SIGKILL)

    _tick_until(
        supervisor,
        lambda: child.process is not None and child.process.pid != first and child.state == "running",
    )

    state = json.loads((tmp_path / "supervision.json").read_text())["children"]["sleeper"]
    assert state["state"] == "running" and state["restarts"] == 1 and state["pid"] != first
    assert state["last_exit"] == "killed by SIGKILL"
    assert any(f"sleeper (pid {first}) died (killed by SIGKILL)" in line for line in supervisor.said)  # type: ignore[attr-defined]


def test_a_child_that_keeps_dying_is_a_crash_loop_naming_it_and_how_it_ended(
    supervisor: Supervisor, tmp_path: Path
) -> None:
    supervisor.start(
        ChildSpec("flaky", [sys.executable, "-c", "raise SystemExit(3)"], env=dict(os.environ), cwd=tmp_path)
    )
    with pytest.raises(CrashLoop, match=r"^flaky exited 5 times in \d+ s \(last: exit code 3\); giving up$"):
        _tick_until(supervisor, lambda: False, seconds=30)


LAUNCHER = """
import os, sys, time
from pathlib import Path
from septet_platform.supervision import ChildSpec, Supervisor
folder = Path(sys.argv[1])
env = dict(os.environ)
supervisor = Supervisor(state_file=folder / "state.json", say=lambda text: print(text, flush=True),
                        guard_env=env, cwd=folder)
supervisor.start(ChildSpec("sleeper", ["sleep", "300"], env=env, cwd=folder))
supervisor.start(ChildSpec("family", ["sh", "-c", "sleep 300 & sleep 300 & wait"], env=env, cwd=folder))
supervisor.start(ChildSpec("stubborn", ["sh", "-c", "trap '' TERM; sleep 300 & wait"], env=env, cwd=folder))
print("ready", flush=True)
while True:
    supervisor.tick()
    time.sleep(0.2)
"""


# A worker in the child's process group, as a Celery worker's pool process: it writes to argv[1]
# each SIGTERM that reaches it ("SIGTERM mid-match") and, at the leader's word to finish (SIGUSR1),
# "finished its match".
WORKER = """
import signal, sys, time
out = sys.argv[1]
def note(what):
    with open(out, "a") as file:
        file.write(what + "\\n")
def term(*_):
    note("SIGTERM mid-match")
def finish(*_):
    time.sleep(0.3)
    note("finished its match")
    sys.exit(0)
signal.signal(signal.SIGTERM, term)
signal.signal(signal.SIGUSR1, finish)
open(out + ".ready", "w").close()
while True:
    time.sleep(1)
"""
# The child: on SIGTERM it lets its worker finish (a warm shutdown), waits for it, then exits. It
# waits half a second first, so a SIGTERM sent to the worker too is written before the word to finish.
LEADER = """
import signal, subprocess, sys, time
worker = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]])
def warm_shutdown(*_):
    time.sleep(0.5)
    worker.send_signal(signal.SIGUSR1)
    worker.wait()
    sys.exit(0)
signal.signal(signal.SIGTERM, warm_shutdown)
while True:
    time.sleep(1)
"""


def test_a_stop_sends_sigterm_to_the_child_alone_so_its_own_workers_finish(
    supervisor: Supervisor, tmp_path: Path
) -> None:
    """As a Celery worker's pool: a process in the child's group that the child itself stops must
    not get the SIGTERM too (a pool process once died mid-match that way); nothing is left after."""
    out = tmp_path / "worker.txt"
    command = [sys.executable, "-c", LEADER, WORKER, str(out)]
    child = supervisor.start(ChildSpec("leader", command, env=dict(os.environ), cwd=tmp_path))
    assert child.process is not None
    deadline = time.monotonic() + 15
    while not Path(f"{out}.ready").exists():
        assert time.monotonic() < deadline, "the worker did not start"
        time.sleep(0.05)
    family = {identity(child.process.pid), *descendants(child.process.pid)} - {None}

    supervisor.stop()

    assert out.read_text() == "finished its match\n"
    assert left_after(family, 5.0) == set(), "a process of the stopped child is left"


def test_a_launcher_killed_with_sigkill_leaves_no_process_it_started(tmp_path: Path) -> None:
    """Tried: SIGKILL to a launcher supervising a sleeper, a shell with two children of its own,
    and a shell that ignores SIGTERM (the orphan guard's SIGKILL ends it)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "platform")}
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, str(tmp_path)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert launcher.stdout is not None
    told: list[int] = []
    for line in launcher.stdout:
        told += [int(pid) for pid in re.findall(r"\(pid (\d+)\)", line)]
        if line.strip() == "ready":
            break
    time.sleep(0.5)  # the shells start their own children
    started = descendants(launcher.pid)
    assert {pid for pid, _ in started} >= set(told) and len(told) == 3
    assert len(started) >= 3 + 1 + 3, "three children, the guard, and the shells' own children"

    launcher.kill()
    launcher.wait()

    assert left_after(started, seconds=25) == set(), "every process the launcher started has ended"


def test_the_embedded_redis_keeps_queued_tasks_across_a_sigkill(
    supervisor: Supervisor, tmp_path: Path
) -> None:
    """Tried: 25 match tasks queued, then redis-server killed with SIGKILL and restarted by the
    supervisor (with no append-only file, the restarted server had an empty queue)."""
    spec, socket_path = embedded_redis_spec(tmp_path)
    redis = supervisor.start(spec)
    assert _redis_answers(socket_path, timeout=15)
    url = f"redis+socket://{socket_path}"
    with Connection(url) as connection:
        queue = connection.SimpleQueue("matches")
        for match_id in range(25):
            queue.put({"task": "septet_platform.matches.tasks.match_run_task", "args": [match_id]})
        queue.close()
    time.sleep(1.5)  # appendfsync everysec: a second of writes at most is lost to a crash
    assert redis.process is not None
    killed = identity(redis.process.pid)
    os.kill(redis.process.pid, signal.SIGKILL)

    _tick_until(supervisor, lambda: redis.restarts == 1 and redis.state == "running")
    assert killed is not None and left_after({killed}, seconds=1) == set()
    assert _redis_answers(socket_path, timeout=15)
    with Connection(url) as connection, connection.channel() as channel:
        assert channel.queue_declare(queue="matches", passive=True).message_count == 25


def test_healthz_and_the_ops_page_name_a_dead_supervised_process(
    db: None, settings: Any, tmp_path: Path, private_redis_url: str
) -> None:
    """Tried: a state file naming a worker whose process has just been killed (the launcher has
    not noticed yet) and a Redis waiting to restart."""
    dead = subprocess.Popen(["sleep", "300"])
    dead.kill()
    dead.wait()
    live = subprocess.Popen(["sleep", "300"])
    try:
        state = tmp_path / "supervision.json"
        children = {
            "worker1": {"state": "running", "pid": dead.pid, "restarts": 0, "last_exit": "", "up_seconds": 9},
            "redis": {
                "state": "restarting",
                "pid": None,
                "restarts": 2,
                "last_exit": "killed by SIGKILL",
                "up_seconds": 0,
            },
            "web": {"state": "running", "pid": live.pid, "restarts": 0, "last_exit": "", "up_seconds": 9},
        }
        state.write_text(json.dumps({"updated": time.time(), "children": children}))
        settings.SEPTET_SUPERVISION_STATE = str(state)
        settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens: the broker is down too

        response = Client().get("/healthz")
        assert response.status_code == 503
        processes = response.json()["checks"]["processes"]
        assert processes == "worker1 dead; redis restarting after killed by SIGKILL"

        staff = User.objects.create(username="organiser", is_staff=True)
        organiser = Client()
        organiser.force_login(staff)
        page = organiser.get("/ops/")
        assert page.status_code == 200
        text = page.content.decode()
        assert "<td>redis</td><td>restarting</td>" in text and "killed by SIGKILL" in text
        assert "The broker did not answer." in text
        assert Client().get("/ops/").status_code == 302, "strangers are sent to sign in"

        children["worker1"]["pid"] = live.pid
        children["redis"] = {**children["web"]}
        state.write_text(json.dumps({"updated": time.time(), "children": children}))
        settings.CELERY_BROKER_URL = private_redis_url
        assert Client().get("/healthz").status_code == 200

        state.write_text(json.dumps({"updated": time.time() - 60, "children": children}))
        assert (
            Client()
            .get("/healthz")
            .json()["checks"]["processes"]
            .startswith("the launcher has not written its state for")
        )
    finally:
        live.kill()
        live.wait()
