"""The machine's process table from Linux /proc, for benchmarks that charge CPU and memory to the
process trees they started (never to processes found by name)."""

from __future__ import annotations

import os
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_table() -> tuple[dict[int, list[int]], dict[int, tuple[int, int]]]:
    """Children of every process, and each one's (CPU ticks, resident pages)."""
    parents: dict[int, list[int]] = {}
    figures: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry.name))
        figures[int(entry.name)] = (int(fields[11]) + int(fields[12]), int(fields[21]))
    return parents, figures


def tree_cpu_seconds(roots: list[int]) -> float:
    """User and system CPU seconds of these processes and their descendants so far."""
    parents, figures = process_table()
    total, todo = 0, list(roots)
    while todo:
        pid = todo.pop()
        total += figures.get(pid, (0, 0))[0]
        todo += parents.get(pid, [])
    return total / CLOCK_TICKS
