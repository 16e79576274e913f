"""Helpers for the sandbox tests: hostile bot folders copied with their targets, and a scan of
the machine's processes by uid (every sandboxed start runs as a uid of its own)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

HOSTILE = Path(__file__).parent / "hostile"
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "bots" / "examples"


def hostile_copy(name: str, into: Path, targets: dict[str, Any]) -> Path:
    """A copy of tests/sandbox/hostile/NAME with a targets.json telling it what to attack."""
    folder = into / name
    shutil.copytree(HOSTILE / name, folder)
    (folder / "targets.json").write_text(json.dumps(targets))
    return folder


def processes() -> dict[int, tuple[int, str]]:
    """pid -> (real uid, command line) of every process of the machine."""
    found: dict[int, tuple[int, str]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text()
            cmdline = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        uid = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("Uid:"))
        found[int(entry.name)] = (uid, cmdline)
    return found


def uids_serving(root_pid: int) -> set[int]:
    """The uids of the bot's processes: those below `root_pid` (its launcher) but bwrap's own."""
    import psutil

    below = psutil.Process(root_pid).children(recursive=True)
    return {process.uids().real for process in below if "bwrap" not in process.name()}


def tree_digest(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` and its bytes (to prove a folder unchanged)."""
    return {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*") if path.is_file()}
