"""Control groups of sandboxed bots: memory, processes and CPU counted per sandbox, not per process.

Each sandbox start gets a group of its own, created under the group this process sits in (read
from /proc/self/cgroup), so a container or a systemd unit keeps its own limits above ours:

- cgroup v2 when the unified hierarchy offers the memory, pids and cpu controllers to our group's
  children: memory.max (and memory.swap.max 0), pids.max, cpu.weight, cpu.max;
- else cgroup v1, one group in each of the memory, pids and cpu hierarchies that are writable:
  memory.limit_in_bytes (and memory.memsw.limit_in_bytes, so swap is no way round it), pids.max,
  cpu.shares, cpu.cfs_quota_us;
- else none, and the sandbox falls back to per-process rlimits (`status()` says so in one line).

Memory of a group counts every page its processes use: heaps of all children, SysV shared
memory, memfd and tmpfs pages (the sandbox's /tmp and socket folder), so four children touching
3 GiB each cannot hold 12 GiB. Every sandbox gets the same CPU weight, so a bot that spins four
threads weighs as much as one that thinks on one; with a quota it never gets more than its cores.

The bot's first process joins the group before it can fork (see `referee.tools.sandbox`'s launcher), and
`SandboxGroup.remove` kills whatever is left in it and removes it once the bot stopped.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP_PREFIX = "septet-"
CPU_PERIOD_US = 100_000
V1_CPU_SHARES = 1024
V2_CPU_WEIGHT = 100
STALE_AFTER_SECONDS = 300
"""An empty group of ours this old is left over by a launcher that was killed: removed."""


@dataclass(frozen=True)
class CgroupSupport:
    """Where sandbox groups are made here: `parents` holds one folder per hierarchy used."""

    version: int  # 2, 1, or 0 for none
    memory: Path | None = None
    pids: Path | None = None
    cpu: Path | None = None
    memsw: bool = False

    @property
    def parents(self) -> tuple[Path, ...]:
        return tuple(dict.fromkeys(path for path in (self.memory, self.pids, self.cpu) if path is not None))

    def describe(self) -> str:
        """One line: which limits are per sandbox here and which are missing."""
        if self.version == 0:
            return (
                "cgroups unavailable: memory is limited per process (address space) only, "
                "processes per uid, no CPU share per sandbox"
            )
        have: list[str] = []
        missing: list[str] = []
        for name, path in (("memory", self.memory), ("processes", self.pids), ("CPU share", self.cpu)):
            (have if path is not None else missing).append(name)
        if self.memory is not None and self.version == 1 and not self.memsw:
            have[have.index("memory")] = "memory (swap not counted)"
        line = f"cgroup v{self.version} per sandbox: {', '.join(have)}"
        if missing:
            line += f"; missing: {', '.join(missing)} (per-process rlimits only)"
        return line


@dataclass(frozen=True)
class SandboxGroup:
    """The groups of one sandbox start (one folder per hierarchy)."""

    support: CgroupSupport
    folders: tuple[Path, ...]

    def procs_files(self) -> tuple[Path, ...]:
        """Where the launcher writes its pid to join (every hierarchy)."""
        return tuple(folder / "cgroup.procs" for folder in self.folders)

    def pids(self) -> set[int]:
        found: set[int] = set()
        for procs in self.procs_files():
            with contextlib.suppress(OSError):
                found |= {int(word) for word in procs.read_text().split()}
        return found

    def memory_peak(self) -> int | None:
        """The most memory the sandbox held at once (bytes), when its memory is counted."""
        if self.support.memory is None:
            return None
        folder = self._folder_under(self.support.memory)
        name = "memory.max_usage_in_bytes" if self.support.version == 1 else "memory.peak"
        try:
            return int((folder / name).read_text())
        except (OSError, ValueError):
            return None

    def _folder_under(self, parent: Path) -> Path:
        return next(folder for folder in self.folders if folder.parent == parent)

    def remove(self, timeout: float = 5.0) -> None:
        """Kills every process left in the group, then removes it (retrying while they exit)."""
        deadline = time.monotonic() + timeout
        for folder in self.folders:
            while folder.exists():
                for pid in self.pids():
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                try:
                    folder.rmdir()
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.02)


def _own_groups() -> dict[str, str]:
    """controller -> our group's path in its hierarchy ("" for the v2 hierarchy)."""
    groups: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            groups[controller] = path
    return groups


def _mounts() -> list[tuple[str, Path, str, set[str]]]:
    """(root inside the hierarchy, mount point, fs type, super options) of every cgroup mount."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            found.append((fields[3], Path(fields[4]), tail[0], set(tail[2].split(","))))
    return found


def _under_mount(mount_root: str, mount_point: Path, own: str) -> Path | None:
    """Our group's folder, when it is visible under this mount."""
    relative = os.path.relpath(own, mount_root)
    if relative.startswith(".."):
        return None
    folder = (mount_point / relative).resolve()
    return folder if folder.is_dir() else None


def _writable(parent: Path) -> bool:
    """Whether a child group can be made and removed here (tried, not guessed)."""
    probe = parent / f"{GROUP_PREFIX}probe-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return False
    return True


def _detect_v2(own: dict[str, str], mounts: list[tuple[str, Path, str, set[str]]]) -> CgroupSupport | None:
    for root, point, kind, _ in mounts:
        if kind != "cgroup2" or "" not in own:
            continue
        parent = _under_mount(root, point, own[""])
        if parent is None:
            continue
        try:
            offered = set((parent / "cgroup.controllers").read_text().split())
            enabled = set((parent / "cgroup.subtree_control").read_text().split())
        except OSError:
            continue
        wanted = {"memory", "pids", "cpu"} & offered
        if not {"memory", "pids"} <= wanted:
            continue
        if wanted - enabled:
            with contextlib.suppress(OSError):
                (parent / "cgroup.subtree_control").write_text(
                    " ".join(f"+{name}" for name in wanted - enabled)
                )
            enabled = set((parent / "cgroup.subtree_control").read_text().split())
        if {"memory", "pids"} <= enabled and _writable(parent):
            cpu = parent if "cpu" in enabled else None
            return CgroupSupport(2, memory=parent, pids=parent, cpu=cpu, memsw=True)
    return None


def _detect_v1(own: dict[str, str], mounts: list[tuple[str, Path, str, set[str]]]) -> CgroupSupport | None:
    parents: dict[str, Path] = {}
    for root, point, kind, options in mounts:
        if kind != "cgroup":
            continue
        for controller in ("memory", "pids", "cpu"):
            if controller in options and controller in own and controller not in parents:
                parent = _under_mount(root, point, own[controller])
                if parent is not None and _writable(parent):
                    parents[controller] = parent
    if not parents:
        return None
    memory = parents.get("memory")
    memsw = memory is not None and (memory / "memory.memsw.limit_in_bytes").exists()
    return CgroupSupport(1, memory=memory, pids=parents.get("pids"), cpu=parents.get("cpu"), memsw=memsw)


@functools.cache
def support() -> CgroupSupport:
    """How sandbox groups are made on this machine (probed once per process)."""
    if os.environ.get("SEPTET_SANDBOX_CGROUPS", "") == "off":  # to measure and test the fallback
        return CgroupSupport(0)
    try:
        own, mounts = _own_groups(), _mounts()
    except OSError:
        return CgroupSupport(0)
    return _detect_v2(own, mounts) or _detect_v1(own, mounts) or CgroupSupport(0)


def status() -> str:
    return support().describe()


def create_group(memory_bytes: int, processes: int, cpu_cores: float | None) -> SandboxGroup | None:
    """A new group for one sandbox start with these limits, or None where cgroups are unavailable."""
    found = support()
    if found.version == 0:
        return None
    name = f"{GROUP_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
    folders: list[Path] = []
    try:
        for parent in found.parents:
            _sweep_stale(parent)
            folder = parent / name
            folder.mkdir()
            folders.append(folder)
            if parent == found.memory:
                _limit_memory(found, folder, memory_bytes)
            if parent == found.pids:
                (folder / "pids.max").write_text(str(processes))
            if parent == found.cpu:
                _limit_cpu(found, folder, cpu_cores)
    except OSError:
        SandboxGroup(found, tuple(folders)).remove(timeout=1.0)
        raise
    return SandboxGroup(found, tuple(folders))


def _limit_memory(found: CgroupSupport, folder: Path, memory_bytes: int) -> None:
    if found.version == 2:
        (folder / "memory.max").write_text(str(memory_bytes))
        with contextlib.suppress(OSError):
            (folder / "memory.swap.max").write_text("0")
        return
    (folder / "memory.limit_in_bytes").write_text(str(memory_bytes))
    if found.memsw:
        (folder / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))


def _limit_cpu(found: CgroupSupport, folder: Path, cpu_cores: float | None) -> None:
    if found.version == 2:
        (folder / "cpu.weight").write_text(str(V2_CPU_WEIGHT))
        if cpu_cores:
            (folder / "cpu.max").write_text(f"{int(cpu_cores * CPU_PERIOD_US)} {CPU_PERIOD_US}")
        return
    (folder / "cpu.shares").write_text(str(V1_CPU_SHARES))
    if cpu_cores:
        (folder / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
        (folder / "cpu.cfs_quota_us").write_text(str(int(cpu_cores * CPU_PERIOD_US)))


def _sweep_stale(parent: Path) -> None:
    """Removes empty groups of ours left by launchers that were killed before they cleaned up,
    and empties and removes every group whose starting process is gone (see sweep_orphaned)."""
    now = time.time()
    for folder in parent.glob(f"{GROUP_PREFIX}*"):
        with contextlib.suppress(OSError):
            if _owner_gone(folder.name):
                _clear(folder)
            elif (
                now - folder.stat().st_mtime > STALE_AFTER_SECONDS
                and not (folder / "cgroup.procs").read_text()
            ):
                folder.rmdir()


def sweep_orphaned() -> int:
    """Kills what is left in the groups of sandbox starts whose starting process (a worker) is
    gone, and removes those groups; returns how many it cleared. A worker killed outright takes
    its sandboxes' launchers along, but a sandbox's own processes may outlive them; its group
    still names them, so the next worker (at start, and before each sandbox it makes) ends them."""
    found = support()
    cleared = 0
    for parent in found.parents:
        for folder in parent.glob(f"{GROUP_PREFIX}*"):
            if _owner_gone(folder.name):
                with contextlib.suppress(OSError):
                    _clear(folder)
                    cleared += 1
    return cleared


def _owner_gone(name: str) -> bool:
    """Whether the process that made group `name` (septet-<pid>-<hex>) no longer runs (a zombie
    counts as gone); False for names of another shape (the support probe's)."""
    owner = name.removeprefix(GROUP_PREFIX).split("-", 1)[0]
    if not owner.isdigit():
        return False
    try:
        state = Path(f"/proc/{owner}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def _clear(folder: Path, timeout: float = 2.0) -> None:
    """SIGKILL to every process in `folder`'s group until it is empty, then removes it."""
    deadline = time.monotonic() + timeout
    while True:
        for word in (folder / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(word), signal.SIGKILL)
        try:
            folder.rmdir()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)
