"""Nothing machine-wide inside a sandbox: /proc shows the sandbox's own processes and limits.

The hostile bot tests/sandbox/hostile/proc-machine reads every machine file of /proc (and the
files of /proc/pressure, /proc/sys/fs, /proc/sys/kernel ...) twice, loading the machine in
between from inside while this test starts and stops threads and processes outside, and asks
sysinfo(2) and statfs(2) and opens IP sockets (whose memory /proc/self/net/sockstat counts for
the whole machine); any file that moved, or any of these calls answering, is a covert channel
between sandboxes. It also looks for the host's boot id, kernel command line and uptime, read
here outside.

Seen to fail against the former sandbox (/proc unmasked, a seccomp filter that allowed sysinfo,
statfs and IP sockets): 21 files moved (loadavg, stat, meminfo, uptime, vmstat, interrupts,
pressure/*, sys/fs/file-nr...), the calls answered, the boot id, command line and uptime were the
host's and MemTotal the machine's.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from sandbox_helpers import hostile_copy

from referee.engine.games import get_game
from referee.engine.match import MatchResult, TimeControl, play_match
from referee.engine.players import Player, RandomPlayer
from referee.tools.botfolder import start_bot
from referee.tools.grpc_player import GrpcPlayer
from referee.tools.sandbox import Limits, MiB, Sandbox, available

pytestmark = pytest.mark.skipif(not available(), reason="bubblewrap cannot make a sandbox here")

LIMITS = Limits(memory_bytes=512 * MiB, file_bytes=8 * MiB, processes=128, tmp_bytes=32 * MiB)
TIME_CONTROL = TimeControl(per_decision=20.0, bank=30.0)  # roomy: the bot reads /proc twice


def _host_facts() -> dict[str, object]:
    return {
        "boot_id": Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
        "cmdline": Path("/proc/cmdline").read_text().strip(),
        "uptime": float(Path("/proc/uptime").read_text().split()[0]),
    }


@contextmanager
def _load_changing_outside() -> Iterator[None]:
    """Outside any sandbox, 20 threads and 2 processes started and stopped every 50 ms."""
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            pause = threading.Event()
            threads = [threading.Thread(target=pause.wait) for _ in range(20)]
            for thread in threads:
                thread.start()
            children = [subprocess.Popen(["sleep", "1"]) for _ in range(2)]
            time.sleep(0.05)
            pause.set()
            for thread in threads:
                thread.join()
            for child in children:
                child.kill()
                child.wait()
            time.sleep(0.05)

    churner = threading.Thread(target=churn)
    churner.start()
    try:
        yield
    finally:
        stop.set()
        churner.join()


@dataclass
class Played:
    """The game and what the bot found (its log's FINDINGS line: the forfeit's reason is cut)."""

    outcome: MatchResult
    findings: list[str]

    def of_kind(self, kind: str) -> list[str]:
        """The findings of one kind ("moved", "sysinfo", "statfs", "inet", "host")."""
        return [finding for finding in self.findings if finding.startswith(kind)]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """One game of the proc-machine bot beside two built-in players, the load changing outside."""
    folder = hostile_copy("proc-machine", tmp_path_factory.mktemp("bots"), _host_facts())
    bot = start_bot(folder, sandbox=Sandbox(limits=LIMITS))
    players: list[Player] = [GrpcPlayer(bot.address, bot.name)]
    players += [RandomPlayer(random.Random(seat)) for seat in (1, 2)]
    try:
        with _load_changing_outside():
            outcome = play_match(
                get_game("oh-hell"), players, seed=3, time_control=TIME_CONTROL, match_id="proc"
            )
        log = bot.log_path.read_text(errors="replace")
    finally:
        players[0].close()  # type: ignore[attr-defined]
        bot.stop(grace=1.0)
    lines = [line for line in log.splitlines() if line.startswith("FINDINGS ")]
    assert len(lines) == 1, f"the bot never reported what it found: {log[-2000:]}"
    return Played(outcome, json.loads(lines[0].removeprefix("FINDINGS ")))


def test_no_machine_file_of_proc_moves_while_the_load_changes(played: Played) -> None:
    assert played.of_kind("moved") == []


def test_sysinfo_statfs_and_ip_sockets_are_refused(played: Played) -> None:
    assert played.of_kind("sysinfo") == [] and played.of_kind("statfs") == [] and played.of_kind("inet") == []


def test_the_host_boot_id_command_line_and_uptime_stay_outside(played: Played) -> None:
    assert played.of_kind("host") == []


def test_the_bot_reading_the_machine_plays_its_game_to_the_end(played: Played) -> None:
    assert played.outcome.forfeits == [] and played.outcome.result.ranks is not None


READ_THE_VIEW = """
import os, pathlib
proc = pathlib.Path("/proc")
print("meminfo", proc.joinpath("meminfo").read_text().split()[1])
print("loadavg", proc.joinpath("loadavg").read_text().strip())
print("uptime", proc.joinpath("uptime").read_text().strip())
print("cpus", os.cpu_count())
print("sys", sorted(os.listdir("/proc/sys")), sorted(os.listdir("/proc/pressure")))
print("fds", sorted(os.listdir("/proc/self/fd")))
for name in ("cmdline", "interrupts", "vmstat"):
    try:
        print(name, repr(proc.joinpath(name).read_text()))
    except OSError as error:
        print(name, type(error).__name__)
"""


@pytest.mark.parametrize("build", [False, True], ids=["play", "build"])
def test_play_and_build_see_their_own_limits_and_no_descriptor_of_the_view(
    tmp_path: Path, build: bool
) -> None:
    """What a runtime reads: MemTotal is the sandbox's memory limit, os.cpu_count() its CPU quota
    (glibc counts /proc/stat's CPUs when /sys is absent), load and uptime constant; the
    descriptors the launcher fed bwrap the constant texts on are not left to the bot."""
    folder = tmp_path / "folder"
    folder.mkdir()
    folder.chmod(0o755)
    (folder / "view.py").write_text(READ_THE_VIEW)
    script = f"{'/src' if build else '/bot'}/view.py"
    words = Sandbox(limits=LIMITS).command([sys.executable, script], folder=folder, build=build)
    done = subprocess.run(words, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["meminfo"] == str(LIMITS.memory_bytes // 1024)
    assert lines["loadavg"] == "0.00 0.00 0.00 1/1 1" and lines["uptime"] == "1.00 1.00"
    assert lines["cpus"] == "1"
    assert lines["sys"] == "[] []"
    assert lines["fds"] == "['0', '1', '2', '3']"  # the standard three and listdir's own
    assert all(lines[name] in ("''", "PermissionError") for name in ("cmdline", "interrupts", "vmstat"))
