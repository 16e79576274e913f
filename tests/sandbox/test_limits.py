"""Limits that hold per sandbox, not per process: each hostile bot in tests/sandbox/hostile/ attacks
through the real sandbox (bwrap, its control group, its seccomp filter) at an Oh Hell! table, and
raises an error starting with BREACH when its attack worked.

Each test was seen to fail with its fix switched off: SEPTET_SANDBOX_CGROUPS=off (memory),
SEPTET_SANDBOX_SECCOMP=off (namespaces, ptrace, SysV IPC, locks), a socket tmpfs as large as the
flood, following the socket path, binding the bot's folder at its host path.
"""

from __future__ import annotations

import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sandbox_helpers import EXAMPLES as ROOT_EXAMPLES
from sandbox_helpers import hostile_copy

from referee.engine.games import get_game
from referee.engine.match import MatchResult, TimeControl, play_match
from referee.engine.players import Player, RandomPlayer
from referee.tools.botfolder import BotFolderError, RunningBot, start_bot
from referee.tools.grpc_player import GrpcPlayer
from referee.tools.sandbox import Limits, MiB, Sandbox, describe_limits
from referee.tools.sandbox_cgroups import SandboxGroup, support

LIMITS = Limits(memory_bytes=512 * MiB, file_bytes=64 * MiB, processes=128, tmp_bytes=32 * MiB)
"""512 MiB for the whole sandbox: less than the four children's 4 x 300 MiB."""
TIME_CONTROL = TimeControl(per_decision=20.0, bank=30.0)  # roomy: the attacks run in a decision
needs_memory_group = pytest.mark.skipif(
    support().memory is None, reason="no memory cgroup here: " + support().describe()
)


def _play(bots: list[RunningBot]) -> MatchResult:
    """One game: the given bots in the first seats, built-in random players in the others."""
    players: list[Player] = [GrpcPlayer(bot.address, bot.name) for bot in bots]
    players += [RandomPlayer(random.Random(seat)) for seat in range(3 - len(bots))]
    try:
        return play_match(get_game("oh-hell"), players, seed=5, time_control=TIME_CONTROL, match_id="limits")
    finally:
        for player in players[: len(bots)]:
            player.close()  # type: ignore[attr-defined]


def _breaches(outcome: MatchResult) -> list[str]:
    return [forfeit.reason for forfeit in outcome.forfeits if "BREACH" in forfeit.reason]


def _start(
    name: str, tmp_path: Path, targets: dict[str, object] | None = None, limits: Limits = LIMITS
) -> RunningBot:
    folder = hostile_copy(name, tmp_path / "bots", targets or {})
    return start_bot(folder, sandbox=Sandbox(limits=limits))


def _play_alone(name: str, tmp_path: Path, targets: dict[str, object] | None = None) -> MatchResult:
    """One game of the hostile bot `name` beside random players; the bot is stopped after it."""
    bot = _start(name, tmp_path, targets)
    try:
        return _play([bot])
    finally:
        bot.stop(grace=1.0)


def test_the_limits_line_says_what_holds_here() -> None:
    line = describe_limits()
    assert line.startswith("sandbox: ") and "seccomp" in line
    assert ("cgroups unavailable" in line) == (support().version == 0), line


@needs_memory_group
def test_four_children_share_one_memory_limit(tmp_path: Path) -> None:
    """Four children touch 300 MiB each under a 512 MiB sandbox: they never hold it together."""
    bot = _start("memory-children", tmp_path)
    try:
        outcome = _play([bot])
        peak = bot.sandbox_group.memory_peak() if bot.sandbox_group else None
    finally:
        bot.stop(grace=1.0)
    assert _breaches(outcome) == []
    assert outcome.result.ranks is not None, "the other seats' game did not complete"
    assert peak is not None and peak <= LIMITS.memory_bytes, f"the sandbox held {peak} bytes at once"


@needs_memory_group
def test_shared_memory_is_refused_and_a_memfd_counts_to_the_sandbox(tmp_path: Path) -> None:
    """shmget fails (seccomp); a memfd written past the limit gets the bot killed, not 768 MiB."""
    bot = _start("shm-memfd", tmp_path)
    group = bot.sandbox_group
    peaks: list[int] = []
    playing = threading.Event()
    playing.set()

    def sample() -> None:
        # The hoarder is killed mid-match and its sandbox removes its control group as it ends,
        # so read the group's high-water mark while it lives (once read after the match: None).
        while playing.is_set() and group is not None:
            if (peak := group.memory_peak()) is not None:
                peaks.append(peak)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        outcome = _play([bot])
    finally:
        playing.clear()
        sampler.join()
        bot.stop(grace=1.0)
    peak = max(peaks, default=None)
    assert _breaches(outcome) == []
    assert [forfeit.seat for forfeit in outcome.forfeits] == [0], "the hoarder was expected to be stopped"
    assert peak is not None and peak <= LIMITS.memory_bytes, f"the sandbox held {peak} bytes at once"


def test_no_user_namespace_ptrace_or_process_vm_readv(tmp_path: Path) -> None:
    outcome = _play_alone("namespaces-ptrace", tmp_path)
    assert _breaches(outcome) == []
    assert outcome.forfeits == [], "refused calls should leave the bot playing"


def test_file_locks_on_the_shared_runtime_carry_nothing_between_two_sandboxes(tmp_path: Path) -> None:
    """Two bots of different users at once: the sender locks files of /usr, the receiver probes."""
    sender = _start("lock-sender", tmp_path)
    try:
        receiver = _start("lock-receiver", tmp_path)
        try:
            assert sender.process.pid != receiver.process.pid
            outcome = _play([receiver, sender])
        finally:
            receiver.stop(grace=1.0)
    finally:
        sender.stop(grace=1.0)
    assert _breaches(outcome) == []
    assert outcome.forfeits == []


def test_a_flood_of_the_socket_folder_stops_at_its_small_tmpfs(tmp_path: Path) -> None:
    outcome = _play_alone("socket-flood", tmp_path)
    assert _breaches(outcome) == []
    assert outcome.forfeits == [], "the full folder should not stop the bot's own socket"


def test_a_socket_replaced_by_a_link_to_a_host_listener_is_never_followed(tmp_path: Path) -> None:
    """The bot links its socket path to a listener the test runs on the host: the host refuses
    the bot and never connects there."""
    listener_path = tmp_path / "host-listener.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(listener_path))
    listener.listen()
    listener.setblocking(False)
    try:
        with pytest.raises(BotFolderError) as refused:
            _start("socket-swap", tmp_path, {"listener": str(listener_path)})
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
        assert "not a socket of the bot" in str(refused.value)
    finally:
        listener.close()


def test_proc_inside_the_sandbox_shows_no_host_folder(tmp_path: Path) -> None:
    """The data folder appears nowhere; the bot's own folder (bound at /bot) not in /proc/1/cmdline,
    its command line or its working folder (mountinfo's root field does show it: a known gap)."""
    data = tmp_path / "data"
    data.mkdir()
    targets = {"host_paths": [str(data)], "folder_paths": [str(tmp_path / "bots")]}
    outcome = _play_alone("proc-paths", tmp_path, targets)
    assert _breaches(outcome) == []
    assert outcome.forfeits == []


@pytest.mark.skipif(support().version == 0, reason="no cgroups here: " + support().describe())
def test_a_sandbox_group_carries_its_limits_and_is_removed_when_the_bot_stops(tmp_path: Path) -> None:
    bot = start_bot(ROOT_EXAMPLES / "random", sandbox=Sandbox(limits=LIMITS))
    group = bot.sandbox_group
    try:
        assert group is not None
        assert bot.process.pid in group.pids(), "the launcher did not join its group before starting"
        wanted = {
            1: {
                "memory.limit_in_bytes": LIMITS.memory_bytes,
                "pids.max": LIMITS.processes,
                "cpu.shares": 1024,
            },
            2: {"memory.max": LIMITS.memory_bytes, "pids.max": LIMITS.processes, "cpu.weight": 100},
        }[support().version]
        found = {
            name: int((folder / name).read_text())
            for folder in group.folders
            for name in wanted
            if (folder / name).is_file()
        }
        assert found and found == {name: wanted[name] for name in found}, found
    finally:
        bot.stop(grace=1.0)
    assert all(not folder.exists() for folder in group.folders), "the sandbox's group was left behind"


LAUNCH_AND_WAIT = """
import sys, time
from referee.tools.botfolder import launch_bot
from referee.tools.sandbox import Sandbox
bot = launch_bot(sys.argv[1], sandbox=Sandbox())
bot.wait_until_healthy()
group = bot.sandbox_group
print(" ".join(str(path) for path in (group.folders if group else ())), flush=True)
time.sleep(120)
"""


@pytest.mark.skipif(support().version == 0, reason="no cgroups here: " + support().describe())
def test_a_worker_killed_outright_takes_its_sandboxes_along(tmp_path: Path) -> None:
    """Tried: SIGKILL to the process that started a sandboxed bot (no cleanup runs in it)."""
    worker = subprocess.Popen(
        [sys.executable, "-c", LAUNCH_AND_WAIT, str(ROOT_EXAMPLES / "random")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stdout is not None
        folders = [Path(word) for word in worker.stdout.readline().split()]
        assert folders, "the bot had no control group"
        procs = folders[0] / "cgroup.procs"
        assert procs.read_text().split(), "the group was empty while the bot ran"
    finally:
        worker.kill()
        worker.wait()
    deadline = time.monotonic() + 5
    while procs.read_text().split() and time.monotonic() < deadline:
        time.sleep(0.05)
    left = procs.read_text().split()
    SandboxGroup(support(), tuple(folders)).remove(timeout=2.0)
    assert left == [], f"the bot's processes outlived the worker that started them: {left}"


ORPHAN_MAKER = """
import subprocess, sys, time
from referee.tools.sandbox_cgroups import create_group
group = create_group(64 << 20, 16, 1.0)
# a process of the sandbox, in its group, whose launcher will not be there to clean up
orphan = subprocess.Popen(
    ["sh", "-c", 'for procs in "$@"; do echo $$ > "$procs"; done; exec sleep 300', "sh",
     *map(str, group.procs_files())],
    start_new_session=True,
)
time.sleep(0.3)
print(orphan.pid, *(str(folder) for folder in group.folders), flush=True)
time.sleep(300)
"""


@pytest.mark.skipif(support().version == 0, reason="no control groups can be made here")
def test_the_sandboxes_of_a_worker_killed_outright_are_ended_by_the_next_one(tmp_path: Path) -> None:
    """Tried: a process (a worker) makes a sandbox's group with a process in it, then is killed
    with SIGKILL, so nothing of its own cleans up; the next worker's sweep (what a worker runs at
    start and before each sandbox) ends the orphan and removes its group. A group whose maker
    lives is left alone."""
    from referee.tools.sandbox_cgroups import create_group, sweep_orphaned

    maker = subprocess.Popen([sys.executable, "-c", ORPHAN_MAKER], stdout=subprocess.PIPE, text=True)
    assert maker.stdout is not None
    words = maker.stdout.readline().split()
    orphan, folders = int(words[0]), [Path(word) for word in words[1:]]
    mine = create_group(64 << 20, 16, 1.0)
    assert mine is not None
    try:
        maker.kill()
        maker.wait(timeout=10)
        assert Path(f"/proc/{orphan}").exists(), "the orphan outlived its worker, as after a kill -9"
        assert sweep_orphaned() >= 1
        deadline = time.monotonic() + 5
        while Path(f"/proc/{orphan}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        state = (
            Path(f"/proc/{orphan}/stat").read_text().split(") ")[1][0]
            if Path(f"/proc/{orphan}").exists()
            else "gone"
        )
        assert state in ("gone", "Z"), "the orphaned sandbox process was ended"
        assert not any(folder.exists() for folder in folders), "its groups are removed"
        assert all(folder.exists() for folder in mine.folders), "a living worker's group is left alone"
    finally:
        mine.remove()
