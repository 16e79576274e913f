"""Replay storage: whether replays can be written right now, and reading one back checked.

A match is recorded only once its replay is safely on disk (`referee.engine.replay.save_durably`, before
the database commit). When the replay folder cannot be written (a full disk, a read-only mount),
playing matches would only throw their results away in a loop, so a worker stops taking matches
while `replays_writable` says no (the task is queued again a little later, unclaimed) and takes
them again by itself once a probe write succeeds. /healthz asks the same question
(`storage_check`) and answers 503 with the reason meanwhile.

The probe writes as a replay is written (temporary file, fsync, rename, folder fsync) a file
larger than a typical replay, so a disk with a few kilobytes left is reported full rather than
failing the next match's replay. Its answer is kept for a few seconds per process, so a worker
taking many matches, or a busy probe, costs one write per few seconds.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from referee.engine import replay as replays
from septet_platform.matches.models import Match

PROBE_BYTES = 256 * 1024
"""Larger than the replays of the longest games (tens of kilobytes gzipped)."""
PROBE_CACHE_SECONDS = 2.0
PROBE_NAME = ".septet-write-probe"
"""The probe file's name, followed by the probing process's host and pid: processes sharing the
folder (a prefork worker's pool, several workers) must never remove each other's probe."""


@dataclass(frozen=True)
class StorageHealth:
    """Whether replays can be written; `reason` says why not, in one line."""

    ok: bool
    reason: str = ""


_cache_lock = threading.Lock()
_cached: tuple[float, str, StorageHealth] | None = None


def replays_folder() -> Path:
    return Path(settings.SEPTET_REPLAYS_DIR)


def replays_writable(*, fresh: bool = False) -> StorageHealth:
    """Whether a replay can be written to the replay folder now (a probe write, kept
    PROBE_CACHE_SECONDS unless `fresh`)."""
    global _cached
    folder = replays_folder()
    with _cache_lock:
        now = time.monotonic()
        cached = _cached
        if cached is not None and not fresh and _still_valid(cached, folder, now):
            return cached[2]
        health = _probe(folder)
        _cached = (now, str(folder), health)
        return health


def _still_valid(cached: tuple[float, str, StorageHealth], folder: Path, now: float) -> bool:
    return cached[1] == str(folder) and now - cached[0] < PROBE_CACHE_SECONDS


def storage_failed(error: OSError) -> StorageHealth:
    """Records a failed replay write (so this process stops taking matches at once, without
    waiting for its cached probe to expire); the health it now reports."""
    global _cached
    health = StorageHealth(False, _reason(error))
    with _cache_lock:
        _cached = (time.monotonic(), str(replays_folder()), health)
    return health


def _probe(folder: Path) -> StorageHealth:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f"{PROBE_NAME}-{socket.gethostname()}-{os.getpid()}"
        stored = replays.save_durably({"probe": "x" * PROBE_BYTES}, probe)
        os.unlink(stored.path)
    except OSError as error:
        return StorageHealth(False, _reason(error))
    return StorageHealth(True)


def _reason(error: OSError) -> str:
    what = error.strerror or type(error).__name__
    return f"replays cannot be written to the replay folder ({what}): matches are paused"


def storage_check() -> tuple[str, bool, str]:
    """For /healthz: ("storage", ok, reason)."""
    health = replays_writable()
    return "storage", health.ok, health.reason


def replay_load(match: Match, path: Path) -> tuple[bytes, dict[str, Any]]:
    """The stored bytes and document of `match`'s replay at `path`, checked against what was
    recorded with the match (size, SHA-256, the match id the replay names): ReplayError for a
    damaged, truncated or swapped file, FileNotFoundError for a missing one. Matches recorded
    before checksums were stored are read as they are (still parsed and shape-checked)."""
    if not match.replay_sha256:
        return path.read_bytes(), replays.load(path)
    return replays.load_checked(
        path, size=match.replay_size or 0, sha256=match.replay_sha256, match_id=match.replay_match_id
    )
