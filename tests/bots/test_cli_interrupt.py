"""The local tools stop every bot they started, however they are stopped.

Each test copies an example into its own tmp folder, starts one command on it, waits until a bot
process of that copy runs under the command (found by walking /proc from the command's own pid),
signals the command mid-game and then looks through /proc for any process whose command line or
working folder lies in the copy: there must be none. SIGTERM and SIGHUP must unwind like Ctrl-C;
SIGKILL cannot be caught, so the bots must die with the tool (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_tree import descendants, running_from, runs_from

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "bots" / "examples"
SEPTET = str(Path(sys.executable).with_name("septet"))
SLOW_BOT = "montecarlo"
"""Thinks 0.2 s a decision: a series of it is surely mid-game when the signal comes."""


def _wait_for_bot(tool: subprocess.Popen[bytes], folder: Path, timeout: float = 60) -> list[int]:
    """The tool's descendants running from `folder`, once there is one (then a moment more, so a
    game is under way)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert tool.poll() is None, f"the tool ended early with code {tool.returncode}"
        bots = [pid for pid, _ in descendants(tool.pid) if runs_from(pid, folder)]
        if bots:
            time.sleep(1.5)
            return bots
        time.sleep(0.1)
    raise AssertionError(f"no bot process of {folder} appeared under the tool")


def _assert_nothing_left(folder: Path, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while running_from(folder) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = running_from(folder)
    for pid in left:  # the test's own bots (they run from its tmp folder): never leave them burning
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert left == [], "bot processes of the tool's folder outlived it"


def _copy(tmp_path: Path, name: str = SLOW_BOT) -> Path:
    folder = tmp_path / "bots" / name
    shutil.copytree(EXAMPLES / name, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def _start(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [SEPTET, *args], cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _command(kind: str, folder: Path) -> tuple[str, ...]:
    bot = str(folder)
    if kind == "check":
        return ("check", bot, "--all-seats", "--budget", "0", "--games", "20")
    if kind == "match":
        return ("match", "--game", "oh-hell", "--players", "5", "--games", "50", bot, "greedy")
    if kind == "compare":
        return ("compare", "--game", "oh7", "--games", "50", bot, "greedy")
    return ("bot", "serve", bot, "--address", f"127.0.0.1:{_free_port()}")


@pytest.mark.parametrize(
    ("kind", "signum"),
    [
        ("check", signal.SIGTERM),
        ("check", signal.SIGHUP),
        ("match", signal.SIGTERM),
        ("compare", signal.SIGTERM),
        ("bot serve", signal.SIGTERM),
    ],
)
def test_a_signalled_tool_stops_every_bot_it_started(tmp_path: Path, kind: str, signum: int) -> None:
    """Tried: SIGTERM (or SIGHUP) to the tool mid-game, its bots running."""
    folder = _copy(tmp_path)
    tool = _start(*_command(kind, folder))
    try:
        assert _wait_for_bot(tool, folder)
        tool.send_signal(signum)
        code = tool.wait(timeout=30)
    finally:
        if tool.poll() is None:
            tool.kill()
            tool.wait()
    assert code in (0, 130, -signum), tool.stderr.read() if tool.stderr else code
    _assert_nothing_left(folder, timeout=2)


@pytest.mark.parametrize("kind", ["match", "check"])
def test_a_tool_killed_outright_leaves_no_bot(tmp_path: Path, kind: str) -> None:
    """Tried: SIGKILL to the tool (no handler runs, no `finally`), its bots mid-game."""
    folder = _copy(tmp_path)
    tool = _start(*_command(kind, folder))
    try:
        bots = _wait_for_bot(tool, folder)
        tool.kill()
        tool.wait(timeout=10)
    finally:
        if tool.poll() is None:
            tool.kill()
            tool.wait()
    assert bots
    _assert_nothing_left(folder)
