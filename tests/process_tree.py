"""Processes a test started, found from the pids it was told and /proc, never by name: their
descendants, whether each is still alive (the same process, not a reused pid; a zombie counts as
gone), waiting for them to end, and the processes running from a folder only the test made."""

from __future__ import annotations

import os
import time
from pathlib import Path

Identity = tuple[int, int]
"""(pid, start time in clock ticks since boot): a pid reused by another process differs."""


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()  # fields from the state on (field 3 of proc(5))


def identity(pid: int) -> Identity | None:
    fields = _stat_fields(pid)
    return None if fields is None else (pid, int(fields[19]))  # starttime is field 22


def alive(process: Identity) -> bool:
    fields = _stat_fields(process[0])
    return fields is not None and int(fields[19]) == process[1] and fields[0] not in ("Z", "X")


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(word) for word in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def descendants(pid: int) -> set[Identity]:
    """Every living process below `pid`, as identities (not `pid` itself)."""
    found: set[Identity] = set()
    waiting = children(pid)
    while waiting:
        child = waiting.pop()
        known = identity(child)
        if known is not None and known not in found:
            found.add(known)
            waiting += children(child)
    return found


def left_after(processes: set[Identity], seconds: float) -> set[Identity]:
    """The processes still alive once `seconds` passed or all ended, whichever comes first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = {process for process in processes if alive(process)}
        if not left:
            return left
        time.sleep(0.1)
    return {process for process in processes if alive(process)}


def runs_from(pid: int, folder: Path) -> bool:
    """Whether process `pid` runs from `folder`: its working folder, or a word of its command."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return False
    return str(folder) in cmdline or cwd.startswith(str(folder))


def running_from(folder: Path) -> list[int]:
    """Every process on the machine running from `folder` (a folder only the calling test made,
    so nothing else can match)."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and runs_from(int(entry.name), folder)
    ]
