"""What /proc shows inside a sandbox: the sandbox's own processes and its own limits, nothing of the
machine.

A fresh proc mount (bwrap's `--proc`) hides other processes, but its machine-wide files still show
the whole machine: /proc/loadavg counts every thread of every sandbox, /proc/stat, /proc/meminfo and
/proc/pressure move with every other sandbox's CPU and memory, /proc/sys/fs/file-nr with its open
files. One sandbox holding extra threads for a 1-bit and another reading /proc/loadavg made a covert
channel between two bots at one table (or one bot's copies in the rotations of a duplicate set);
and a bot read the host's boot id, uptime, kernel command line, load and memory.

As container runtimes do (runc's masked and read-only paths, LXCFS's synthetic files), the
sandbox lays over the fresh /proc, by default for every top-level name that is not a process:

- four small files a runtime legitimately reads are replaced by constant text that describes the
  sandbox, never the machine (`synthetic_files`): /proc/stat (glibc counts the CPUs there when
  /sys is absent, as it is in the sandbox: Python's os.cpu_count), /proc/meminfo (Node.js sizes
  its heap from MemTotal: the sandbox's memory limit), /proc/loadavg and /proc/uptime. bwrap copies
  each into a private read-only file of its own (`--ro-bind-data`), so no file is shared between
  sandboxes and no host path shows in /proc/self/mountinfo;
- every other file (cmdline, interrupts, softirqs, vmstat, zoneinfo, diskstats, kmsg, schedstat,
  locks, swaps, slabinfo, buddyinfo, cgroups, version, and whatever a newer kernel adds) is
  /dev/null, read-only;
- every directory (sys with kernel/random/boot_id and fs/file-nr, pressure, fs, irq, bus, driver,
  acpi, tty, sysvipc) is an empty read-only tmpfs;
- kept: the links to the process's own view (self, thread-self, mounts, net: the sandbox's own
  network namespace) and `KEPT_FILES`: /proc/cpuinfo (static facts of the processor a runtime
  may read: its model and flags; see docs/security.md for its clock line).

The system call sysinfo(2) reports the same machine-wide load, process count and free memory; the
seccomp filter denies it (`referee.tools.sandbox_seccomp`).
"""

from __future__ import annotations

import functools
import math
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
KEPT_FILES = frozenset({"cpuinfo"})
"""Top-level files of /proc shown as they are: static facts a runtime may need."""
SYNTHETIC = ("stat", "meminfo", "loadavg", "uptime")
"""The files replaced by constant text (`synthetic_files`), in the order they take descriptors."""
DATA_FDS = (3, 4, 5, 6, 9)
"""Descriptors the sandbox's launcher may open for bwrap's `--ro-bind-data` (a POSIX shell
redirects 0-9 only; 7 and 8 carry bwrap's arguments and the seccomp program)."""
MASK_DIR_BYTES = 4096
"""Size of the empty tmpfs laid over each directory."""
MEMINFO_FIELDS = (
    "MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SwapCached", "Active", "Inactive",
    "Active(anon)", "Inactive(anon)", "Active(file)", "Inactive(file)", "Unevictable", "Mlocked",
    "SwapTotal", "SwapFree", "Dirty", "Writeback", "AnonPages", "Mapped", "Shmem", "KReclaimable",
    "Slab", "SReclaimable", "SUnreclaim", "KernelStack", "PageTables", "NFS_Unstable", "Bounce",
    "WritebackTmp", "CommitLimit", "Committed_AS", "VmallocTotal", "VmallocUsed", "VmallocChunk",
    "Percpu", "HardwareCorrupted", "AnonHugePages", "ShmemHugePages", "ShmemPmdMapped",
)  # fmt: skip
"""The fields of the synthetic /proc/meminfo in kB, in the kernel's order (psutil reads most)."""
MEMINFO_COUNTS = ("HugePages_Total", "HugePages_Free", "HugePages_Rsvd", "HugePages_Surp")


@dataclass(frozen=True)
class ProcEntries:
    """Top-level names of /proc that are not processes, by kind."""

    files: tuple[str, ...]
    directories: tuple[str, ...]


@functools.cache
def proc_entries() -> ProcEntries:
    """The files and directories of /proc that describe the machine (not a process, not a link),
    read once from this process's /proc: a fresh proc mount of the same kernel shows the same
    names."""
    files: list[str] = []
    directories: list[str] = []
    for entry in sorted(os.scandir(PROC), key=lambda found: found.name):
        if entry.name.isdigit():
            continue
        try:
            mode = os.lstat(entry.path).st_mode
        except OSError:
            continue
        if stat.S_ISLNK(mode):
            continue
        (directories if stat.S_ISDIR(mode) else files).append(entry.name)
    return ProcEntries(tuple(files), tuple(directories))


def cpu_count(cpu_cores: float | None) -> int:
    """The CPUs the sandbox's /proc/stat lists: its CPU quota rounded up, or, without one, the
    CPUs this process may run on (a fixed fact of the machine, not a measure of its load)."""
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if cpu_cores is None:
        return max(1, available)
    return max(1, min(available, math.ceil(cpu_cores)))


def synthetic_files(memory_bytes: int, cpu_cores: float | None) -> dict[str, str]:
    """The constant text of /proc/stat, meminfo, loadavg and uptime inside a sandbox: its memory
    limit as the machine's whole and free memory, its CPUs idle, one process running, one second
    up. Nothing in it depends on what the machine or another sandbox does."""
    cpus = cpu_count(cpu_cores)
    counters = " ".join(["0"] * 10)
    stat_lines = [f"cpu  {counters}", *(f"cpu{index} {counters}" for index in range(cpus))]
    stat_lines += ["intr 0", "ctxt 0", "btime 0", "processes 1", "procs_running 1", "procs_blocked 0"]
    stat_lines += ["softirq 0 0 0 0 0 0 0 0 0 0 0"]
    memory_kib = max(1, memory_bytes // 1024)
    meminfo = {name: 0 for name in MEMINFO_FIELDS}
    meminfo.update(MemTotal=memory_kib, MemFree=memory_kib, MemAvailable=memory_kib, CommitLimit=memory_kib)
    meminfo_lines = [f"{name + ':':<16}{value:>8} kB" for name, value in meminfo.items()]
    meminfo_lines += [f"{name + ':':<16}{0:>8}" for name in MEMINFO_COUNTS]
    meminfo_lines += [f"{'Hugepagesize:':<16}{2048:>8} kB", f"{'Hugetlb:':<16}{0:>8} kB"]
    return {
        "stat": "\n".join(stat_lines) + "\n",
        "meminfo": "\n".join(meminfo_lines) + "\n",
        "loadavg": "0.00 0.00 0.00 1/1 1\n",
        "uptime": "1.00 1.00\n",
    }


@dataclass(frozen=True)
class ProcMask:
    """The bwrap options that lay the sandbox's view over its fresh /proc, and the constant text the
    launcher hands bwrap on the descriptors those options name."""

    options: list[str]
    data: dict[int, str]
    """descriptor -> text (the launcher opens each descriptor on its text, bwrap copies it)."""


def proc_mask(memory_bytes: int, cpu_cores: float | None, *, busy_fds: Sequence[int] = ()) -> ProcMask:
    """Options to follow bwrap's `--proc /proc`: synthetic files on descriptors of `DATA_FDS` other
    than `busy_fds` (the caller's --info-fd, say), /dev/null over every other machine file, an
    empty read-only tmpfs over every directory."""
    free = [fd for fd in DATA_FDS if fd not in busy_fds]
    texts = synthetic_files(memory_bytes, cpu_cores)
    entries = proc_entries()
    present = [name for name in SYNTHETIC if name in entries.files]
    if len(free) < len(present):
        raise ValueError(f"descriptors {busy_fds} leave too few of {DATA_FDS} for /proc's files")
    options: list[str] = []
    data: dict[int, str] = {}
    for fd, name in zip(free, present, strict=False):
        options += ["--perms", "0444", "--ro-bind-data", str(fd), str(PROC / name)]
        data[fd] = texts[name]
    for name in entries.files:
        if name not in KEPT_FILES and name not in present:
            options += ["--ro-bind", os.devnull, str(PROC / name)]
    for name in entries.directories:
        path = str(PROC / name)
        options += ["--perms", "0555", "--size", str(MASK_DIR_BYTES), "--tmpfs", path, "--remount-ro", path]
    return ProcMask(options, data)
