"""A worker process's unpacked bot folders: each version once, shared by its seats and matches.

A match seats three to seven bots, often one version in several seats, and a worker plays the
same versions match after match. Each version's archive is unpacked once per worker process into
a cache folder of that process's own, on the worker's local disk (`SEPTET_UNPACKED_DIR`, never the
shared data folder), and every later seat of that version in this process plays from it:

- read from the archive store (`blobs.stores`: the data folder, or the database when workers run
  on other machines) only when this process has no folder of that version yet;
- keyed by the archive's SHA-256, which is checked against the stored digest before anything is
  unpacked (a changed or corrupted archive raises `UnpackedArchiveCorrupt`, never plays); the
  archive is checked by the intake's checker (`bots.archives.unpack_archive`) too;
- unpacked into a temporary folder beside its place and renamed there, so no reader ever sees a
  half-written folder;
- made read-only (files 0444 or 0555, folders 0555, owned by the worker's user, never by a
  sandbox's) and bound read-only into every sandbox (`--ro-bind ... /bot`): no bot can write it,
  so two sandboxes share no writable file, and the host never reads back anything a bot wrote.
  Channels through a read-only file (flock, inotify) are closed by the sandbox's seccomp filter,
  as for the shared runtime;
- bounded (`SEPTET_UNPACKED_CACHE_BYTES` per process): past it, the least recently used folders
  no running bot holds are removed. A bot holds its folder from its start to its stop
  (`hold`/`Held.release`, `RunningBot.when_stopped`), warm house bots included, so a folder is
  never removed under a playing bot; while every folder is held the cache may pass its bound.

Each process's cache folder holds an exclusive lock on its `lock` file for the process's life; a
new process removes the folders of processes that are gone (their lock is free), so a worker
restarted many times leaves at most one cache per live process.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
import shutil
import stat
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from septet_platform.blobs.backends import BlobCorrupt
from septet_platform.bots.archives import PLAYABLE_LIMITS, ArchiveLimits, unpack_archive, unpacked_bytes

MiB = 1 << 20
DEFAULT_CACHE_BYTES = 512 * MiB
LOCK_NAME = "lock"
CREATING_GRACE_SECONDS = 3600.0
"""A process folder still being created (hidden name) this long is a crashed start's: removed."""


class UnpackedArchiveCorrupt(OSError):
    """A stored archive whose bytes do not match its recorded SHA-256: never unpacked or played
    (our storage's failure, not the bot's: the match is voided)."""


@dataclass
class _Entry:
    folder: Path
    size: int
    holds: int = 0


@dataclass
class Held:
    """A folder held for one bot: `release()` (idempotent) lets the cache remove it again."""

    folder: Path
    _cache: UnpackedFolders = field(repr=False)
    _digest: str = field(repr=False)
    _released: bool = field(default=False, repr=False)

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._cache._release(self._digest)


class UnpackedFolders:
    """One process's cache of unpacked versions under `base`, at most `max_bytes` of files kept
    beyond the folders held (see the module docstring). Thread-safe."""

    def __init__(self, base: Path, *, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self.unpacks = 0
        """Archives this cache unpacked (a hit unpacks nothing): for operations and tests."""
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.folder, self._lock_fd = _process_folder(Path(base))

    def hold(
        self,
        *,
        archive: Path | str,
        digest: str,
        limits: ArchiveLimits = PLAYABLE_LIMITS,
        read: Callable[[], bytes] | None = None,
    ) -> Held:
        """The unpacked folder of the archive `archive` whose SHA-256 is `digest`, unpacked now
        if this process has not yet, and held until `Held.release()`: its bytes come from `read`
        (the archive store: a file of this machine or a row of the database), else from the file
        `archive`, and are fetched only on a miss. ArchiveRejected for an archive the checker
        refuses, UnpackedArchiveCorrupt for bytes that are not `digest`'s."""
        digest = digest.lower()
        label = PurePosixPath(str(archive)).name
        if len(digest) != 64 or any(char not in "0123456789abcdef" for char in digest):
            raise UnpackedArchiveCorrupt(f"{label}: no SHA-256 recorded for it")
        with self._lock:
            entry = self._entries.get(digest)
            if entry is None:
                entry = self._unpack(label, read or Path(archive).read_bytes, digest, limits)
                self._entries[digest] = entry
            self._entries.move_to_end(digest)
            entry.holds += 1
            self._evict()
        return Held(entry.folder, self, digest)

    def bytes_kept(self) -> int:
        with self._lock:
            return sum(entry.size for entry in self._entries.values())

    def digests(self) -> list[str]:
        """The versions' digests unpacked now, least recently used first."""
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        """Removes every folder no bot holds (tests, and a worker asked to free its disk)."""
        with self._lock:
            for digest in [digest for digest, entry in self._entries.items() if entry.holds == 0]:
                _remove_tree(self._entries.pop(digest).folder)

    def _release(self, digest: str) -> None:
        with self._lock:
            entry = self._entries.get(digest)
            if entry is not None and entry.holds > 0:
                entry.holds -= 1
            self._evict()

    def _unpack(self, label: str, read: Callable[[], bytes], digest: str, limits: ArchiveLimits) -> _Entry:
        """Reads, checks and unpacks the archive into its place (lock held)."""
        try:
            data = read()
        except BlobCorrupt as error:
            raise UnpackedArchiveCorrupt(error.strerror or str(error)) from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise UnpackedArchiveCorrupt(f"{label}: its bytes do not match its recorded SHA-256")
        target = self.folder / digest
        if target.exists():  # left by a failed removal: start afresh
            _remove_tree(target)
        scratch = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=self.folder))
        try:
            unpack_archive(data, scratch / "bot", limits=limits)
            _read_only(scratch / "bot")
            os.rename(scratch / "bot", target)
            target.chmod(0o555)  # last: a folder being renamed needs its write bit
        finally:
            _remove_tree(scratch)
        self.unpacks += 1
        return _Entry(target, unpacked_bytes(target))

    def _evict(self) -> None:
        """Removes least recently used folders no bot holds while over `max_bytes` (lock held);
        never the most recently used, which a caller has just been handed."""
        total = sum(entry.size for entry in self._entries.values())
        for digest in list(self._entries)[:-1]:
            if total <= self.max_bytes:
                return
            entry = self._entries[digest]
            if entry.holds == 0:
                del self._entries[digest]
                _remove_tree(entry.folder)
                total -= entry.size


def _process_folder(base: Path) -> tuple[Path, int]:
    """A new folder of this process's own under `base`, locked for its life; the folders of
    processes that are gone are removed first."""
    _ensure_private_base(base)
    _sweep(base)
    creating = Path(tempfile.mkdtemp(prefix=f".p{os.getpid()}-", dir=base))
    fd = os.open(creating / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    creating.chmod(0o755)  # the sandbox's user passes through to the folders it binds
    folder = base / f"p{os.getpid()}-{secrets.token_hex(4)}"
    os.rename(creating, folder)
    return folder, fd


def _ensure_private_base(base: Path) -> None:
    """`base` as a folder of ours that nobody else can write (made if missing): a folder someone
    else made or can write, or a link, is refused (OSError)."""
    with contextlib.suppress(FileExistsError):
        base.mkdir(mode=0o755, parents=True)
    found = os.lstat(base)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid() or found.st_mode & 0o022:
        raise PermissionError(f"{base}: not a folder of this user's that only it can write")


def _sweep(base: Path) -> None:
    """Removes the cache folders of processes that are gone: their lock can be taken."""
    for child in base.iterdir():
        if child.name.startswith(".p"):
            with contextlib.suppress(OSError):
                if time.time() - child.lstat().st_mtime > CREATING_GRACE_SECONDS:
                    _remove_tree(child)
            continue
        if not child.name.startswith("p") or child.is_symlink() or not child.is_dir():
            continue
        try:
            fd = os.open(child / LOCK_NAME, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # a live process's
        finally:
            os.close(fd)
        _remove_tree(child)


def _read_only(folder: Path) -> None:
    """Read-only for everyone but readable by the sandbox's unprivileged user (an archive may carry
    0600 files): files r--r--r-- (r-xr-xr-x when executable), folders r-xr-xr-x, owned by us."""
    for path in reversed(list(folder.rglob("*"))):  # children before their folder loses its write bit
        if path.is_symlink():
            continue
        executable = path.is_dir() or path.stat().st_mode & 0o100
        path.chmod(0o555 if executable else 0o444)


def _remove_tree(folder: Path) -> None:
    """Removes a folder of ours whose folders are read-only (their write bit comes back first)."""
    if not folder.exists() or folder.is_symlink():
        return
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            with contextlib.suppress(OSError):
                path.chmod(0o755)
    shutil.rmtree(folder, ignore_errors=True)


_PROCESS_CACHES: dict[Path, tuple[int, UnpackedFolders]] = {}
_PROCESS_LOCK = threading.Lock()


def process_folders(base: Path, max_bytes: int) -> UnpackedFolders:
    """This process's cache under `base` (made on first use, and made anew in a forked child: a
    pool process never shares its parent's)."""
    with _PROCESS_LOCK:
        made = _PROCESS_CACHES.get(base)
        if made is None or made[0] != os.getpid():
            made = (os.getpid(), UnpackedFolders(base, max_bytes=max_bytes))
            _PROCESS_CACHES[base] = made
        made[1].max_bytes = max_bytes
        return made[1]
