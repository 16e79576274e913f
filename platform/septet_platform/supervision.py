"""A small process supervisor for `septet up`: each child is restarted when it dies, with backoff,
until it dies too often in a row (a crash loop), and nothing it started outlives it.

Why our own loop and not a supervisor package: supervisord and circus are daemons with their own
configuration files, control sockets and (circus) a ZeroMQ dependency, and neither ends its
children when it is itself killed with SIGKILL, which is the one guarantee `septet up` needs most.
What is needed here is about a hundred lines: spawn, poll, back off, give up, and three ways of
making sure no process is left behind:

- each child runs in a process group of its own, and stopping a child signals its whole group
  (a Celery worker's pool, gunicorn's workers, a redis-server's save fork);
- each child gets PR_SET_PDEATHSIG (SIGTERM): the kernel signals it when the launcher dies, even
  by SIGKILL, which no handler in the launcher could do;
- an orphan guard (`septet_platform.orphan_guard`, a tiny process with no Django in it) holds a
  pipe from the launcher and the list of its children's process groups; when the pipe closes,
  however the launcher ended, it signals every group still listed (SIGTERM, then SIGKILL).

The state of every child is written, atomically, to a JSON file that the site's /healthz and the
organisers' ops page read (`septet_platform.ops.selectors.supervised_processes`).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

PR_SET_PDEATHSIG = 1
FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 30.0
STABLE_AFTER_SECONDS = 60.0
"""A child that ran this long before dying starts its backoff from the beginning again."""
CRASH_LOOP_EXITS = 5
CRASH_LOOP_WINDOW_SECONDS = 120.0
"""CRASH_LOOP_EXITS exits of one child within this window is a crash loop: the launcher gives up."""
STOP_GRACE_SECONDS = 15.0


@dataclass(frozen=True)
class ChildSpec:
    """How to start one child: its name, command line, environment and working folder."""

    name: str
    command: Sequence[str]
    env: Mapping[str, str]
    cwd: Path
    stdout: int | IO[bytes] | None = None
    stop_last: bool = False
    """Stopped after the others (the broker: the others' shutdown still talks to it)."""


class CrashLoop(Exception):
    """A child kept dying; the message names it and says how it last ended."""


def _set_parent_death_signal() -> None:
    """Runs in the child between fork and exec: the kernel sends it SIGTERM once its parent (the
    launcher's main thread, which alone starts children) is gone, however the parent ended."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def describe_exit(code: int | None) -> str:
    """'exit code 1', 'killed by SIGKILL', or 'running'."""
    if code is None:
        return "running"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit code {code}"


@dataclass
class Child:
    """One supervised child: its current process (None while waiting to restart) and history."""

    spec: ChildSpec
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restarts: int = 0
    failures_in_a_row: int = 0
    last_exit: int | None = None
    restart_at: float | None = None
    exits: deque[float] = field(default_factory=lambda: deque(maxlen=CRASH_LOOP_EXITS))

    @property
    def state(self) -> str:
        if self.process is not None and self.process.poll() is None:
            return "running"
        return "restarting" if self.restart_at is not None else "stopped"


class OrphanGuard:
    """The guard process (see the module docstring) and the pipe that tells it which process
    groups are ours; closing the pipe, or the launcher dying, makes it end the groups listed."""

    def __init__(self, env: Mapping[str, str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("orphan_guard.py"))],  # no package import
            stdin=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            process_group=0,  # a terminal's Ctrl-C is the launcher's to handle, not the guard's
        )
        assert self.process.stdin is not None
        self.pipe = self.process.stdin

    def watch(self, group: int) -> None:
        self._send(f"+{group}")

    def forget(self, group: int) -> None:
        self._send(f"-{group}")

    def _send(self, line: str) -> None:
        with contextlib.suppress(BrokenPipeError, ValueError):
            self.pipe.write(f"{line}\n".encode())
            self.pipe.flush()

    def close(self) -> None:
        with contextlib.suppress(BrokenPipeError, ValueError):
            self.pipe.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=STOP_GRACE_SECONDS + 5)


class Supervisor:
    """Starts children, restarts the ones that die (backoff 1, 2, 4 ... 30 s), raises CrashLoop
    when one exits CRASH_LOOP_EXITS times within CRASH_LOOP_WINDOW_SECONDS, and stops them all."""

    def __init__(
        self,
        *,
        state_file: Path,
        say: Callable[[str], None],
        guard_env: Mapping[str, str],
        cwd: Path,
        first_backoff: float = FIRST_BACKOFF_SECONDS,
        crash_loop_window: float = CRASH_LOOP_WINDOW_SECONDS,
    ) -> None:
        self.first_backoff = first_backoff
        self.crash_loop_window = crash_loop_window
        self.children: dict[str, Child] = {}
        self.state_file = state_file
        self.say = say
        self.guard = OrphanGuard(guard_env, cwd)
        self._written_at = 0.0

    def start(self, spec: ChildSpec) -> Child:
        """Starts a new child now (call from the main thread only: see _set_parent_death_signal)."""
        child = Child(spec)
        self.children[spec.name] = child
        self._spawn(child)
        return child

    def _spawn(self, child: Child) -> None:
        spec = child.spec
        child.process = subprocess.Popen(
            list(spec.command),
            env=dict(spec.env),
            cwd=spec.cwd,
            stdout=spec.stdout,
            process_group=0,
            preexec_fn=_set_parent_death_signal,
        )
        child.started_at = time.monotonic()
        child.restart_at = None
        self.guard.watch(child.process.pid)
        self.say(f"started {spec.name} (pid {child.process.pid})")
        self.write_state(force=True)

    def tick(self) -> None:
        """Notices dead children, schedules their restart, restarts the due ones; CrashLoop when
        one keeps dying. Call it every half second or so."""
        now = time.monotonic()
        for child in self.children.values():
            if child.process is not None and child.restart_at is None and child.process.poll() is not None:
                self._died(child, now)
            if child.restart_at is not None and now >= child.restart_at:
                child.restarts += 1
                self._spawn(child)
        self.write_state()

    def _died(self, child: Child, now: float) -> None:
        assert child.process is not None
        child.last_exit = child.process.returncode
        _signal_group(child.process.pid, signal.SIGKILL)  # whatever it left in its group goes too
        self.guard.forget(child.process.pid)
        child.exits.append(now)
        how = describe_exit(child.last_exit)
        if len(child.exits) == CRASH_LOOP_EXITS and now - child.exits[0] <= self.crash_loop_window:
            raise CrashLoop(
                f"{child.spec.name} exited {CRASH_LOOP_EXITS} times in "
                f"{now - child.exits[0]:.0f} s (last: {how}); giving up"
            )
        ran = now - child.started_at
        child.failures_in_a_row = 1 if ran >= STABLE_AFTER_SECONDS else child.failures_in_a_row + 1
        delay = min(MAX_BACKOFF_SECONDS, self.first_backoff * 2 ** (child.failures_in_a_row - 1))
        child.restart_at = now + delay
        name, pid = child.spec.name, child.process.pid
        self.say(f"{name} (pid {pid}) died ({how}) after {ran:.0f} s; restarting in {delay:.1f} s")
        self.write_state(force=True)

    def stop(self) -> None:
        """SIGTERM to every child, SIGKILL to what is left of its group after STOP_GRACE_SECONDS (the
        `stop_last` children after the others), then the guard is let go with nothing left to end.

        The SIGTERM goes to the child alone, not its group (systemd's KillMode=mixed): a Celery
        worker's warm shutdown lets its pool processes finish their match and rate it, and a pool
        process signalled directly died mid-match (its match played again after its lease, and its
        ratings waited for the sweep). Each child stops its own processes (gunicorn its workers,
        Celery its pool); the group's SIGKILL ends whatever did not."""
        children = list(self.children.values())
        self._stop([child for child in children if not child.spec.stop_last])
        self._stop([child for child in children if child.spec.stop_last])
        for child in children:
            child.restart_at = None
        self.write_state(force=True)
        self.guard.close()

    def _stop(self, children: Sequence[Child]) -> None:
        running = [child.process for child in children if child.process is not None]
        for process in running:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for process in running:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
        for process in running:
            _signal_group(process.pid, signal.SIGKILL)
            process.wait()
            self.guard.forget(process.pid)

    def write_state(self, *, force: bool = False) -> None:
        """The children's state as JSON, replaced atomically; at most once a second unless forced
        (its `updated` time tells a reader whether the launcher is still alive)."""
        now = time.time()
        if not force and now - self._written_at < 1.0:
            return
        self._written_at = now
        document = {
            "updated": now,
            "launcher_pid": os.getpid(),
            "children": {
                name: {
                    "state": child.state,
                    "pid": child.process.pid if child.process is not None else None,
                    "restarts": child.restarts,
                    "last_exit": describe_exit(child.last_exit) if child.last_exit is not None else "",
                    "up_seconds": round(time.monotonic() - child.started_at) if child.process else 0,
                }
                for name, child in self.children.items()
            },
        }
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=self.state_file.parent, prefix=".supervision-")
        with os.fdopen(descriptor, "w") as handle:
            json.dump(document, handle)
        os.replace(temporary, self.state_file)


def _signal_group(group: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)
