"""Replay storage: whether replays can be written right now, and reading one back checked.

Replays are kept in the replay store (`blobs.stores.replay_store`: the replay folder by default,
the database with SEPTET_STORAGE=database). A match is recorded only once its replay is safely
stored (`SeptetStorage.write_durably`, before the database commit). When it cannot be written
(a full disk, a read-only mount, a database that takes no writes), playing matches would only
throw their results away in a loop, so a worker stops taking matches while `replays_writable`
says no (the task is queued again a little later, unclaimed) and takes them again by itself once
a probe write succeeds. /healthz asks the same question
(`storage_check`) and answers 503 with the reason meanwhile.

The probe writes as a replay is written (for the folder: temporary file, fsync, rename, folder
fsync) a file larger than a typical replay, so a disk with a few kilobytes left is reported full
rather than failing the next match's replay; for the database, a blob written in a transaction of
its own and deleted (so /healthz says "storage" is down when the database takes no writes); for an
S3 bucket, an object PUT and deleted (down when the server, the bucket or the keys refuse). Its
answer is kept for a few seconds per process, so a worker taking many matches, or a busy probe,
costs one write per few seconds.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

from referee.engine import replay as replays
from septet_platform.blobs.backends import SeptetStorage
from septet_platform.blobs.stores import replay_store
from septet_platform.matches.models import Match

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


def replays_writable(*, fresh: bool = False) -> StorageHealth:
    """Whether a replay can be written to the replay store now (a probe write, kept
    PROBE_CACHE_SECONDS unless `fresh`)."""
    global _cached
    store = replay_store()
    with _cache_lock:
        now = time.monotonic()
        cached = _cached
        if cached is not None and not fresh and _still_valid(cached, _identity(store), now):
            return cached[2]
        health = _probe(store)
        _cached = (now, _identity(store), health)
        return health


def _identity(store: SeptetStorage) -> str:
    """Which store a cached answer is about (tests point the folder elsewhere)."""
    where = ("endpoint_url", "bucket_name", "location", "area")  # an S3 bucket's; a folder's; a table's
    return ":".join([type(store).__name__, *(str(getattr(store, part, "") or "") for part in where)])


def _still_valid(cached: tuple[float, str, StorageHealth], identity: str, now: float) -> bool:
    return cached[1] == identity and now - cached[0] < PROBE_CACHE_SECONDS


def storage_failed(error: OSError) -> StorageHealth:
    """Records a failed replay write (so this process stops taking matches at once, without
    waiting for its cached probe to expire); the health it now reports."""
    global _cached
    store = replay_store()
    health = StorageHealth(False, _reason(error, store))
    with _cache_lock:
        _cached = (time.monotonic(), _identity(store), health)
    return health


def _probe(store: SeptetStorage) -> StorageHealth:
    name = f"{PROBE_NAME}-{socket.gethostname()}-{os.getpid()}"
    try:
        store.write_durably(name, b"x" * store.probe_bytes)
        store.delete(name)
    except OSError as error:
        return StorageHealth(False, _reason(error, store))
    return StorageHealth(True)


def _reason(error: OSError, store: SeptetStorage) -> str:
    what = error.strerror or type(error).__name__
    return f"replays cannot be written to {store.where} ({what}): matches are paused"


def storage_check() -> tuple[str, bool, str]:
    """For /healthz: ("storage", ok, reason)."""
    health = replays_writable()
    return "storage", health.ok, health.reason


def replay_load(match: Match) -> tuple[bytes, dict[str, Any]]:
    """The stored bytes and document of `match`'s replay, checked against what was recorded with
    the match (size, SHA-256, the match id the replay names): ReplayError for a damaged,
    truncated or swapped file, FileNotFoundError for a missing one. Matches recorded before
    checksums were stored are read as they are (still parsed and shape-checked)."""
    data = replay_read(match)
    if not match.replay_sha256:
        return data, replays.parse(data, match.replay)
    document = replays.parse_checked(
        data,
        match.replay,
        size=match.replay_size or 0,
        sha256=match.replay_sha256,
        match_id=match.replay_match_id,
    )
    return data, document


def replay_read(match: Match) -> bytes:
    """The bytes stored as `match`'s replay, unchecked (callers check them, as `replay_load`
    does): FileNotFoundError when it has none or it is missing, ReplayError when unreadable
    (the database backend's own check of a damaged blob included)."""
    if not match.replay:
        raise FileNotFoundError(f"match {match.pk} has no replay yet (it is {match.status})")
    try:
        return replay_store().read_bytes(match.replay)
    except FileNotFoundError:
        raise FileNotFoundError(f"the replay of match {match.pk} is missing from storage") from None
    except OSError as error:
        raise replays.ReplayError(f"cannot read {match.replay}: {error.strerror or error}") from None
