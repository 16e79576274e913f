"""Safe intake of a bot folder archive (.tar.gz, .tar or .zip, told apart by their magic bytes).

`unpack_archive` reads every member's header and checks the whole archive BEFORE it writes a
byte: paths stay inside (no absolute paths, no `..`), only regular files and folders (no
symlinks, hardlinks, devices, fifos or sparse files), at most `max_files` entries, each file and
the total under their size limits, a bounded compression ratio (declared sizes; a gzip stream is
decompressed only up to what the limits allow), and `septet-bot.toml` at the root or inside a
single top-level folder, validated with `referee.tools.botfolder.load_manifest`. While extracting it
counts the bytes it actually reads, so a header that lies about a size is caught too. Files are
written by this module (never by tarfile/zipfile's own extract) with plain 0644/0755 modes.
Any violation raises `ArchiveRejected` with a one-line reason and leaves nothing in `destination`.

Packing (`pack_folder`, `pack_tree`) lives in `referee.tools.packing`, where the CLI can reach it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import io
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from referee.tools.botfolder import MANIFEST, BotFolderError, load_manifest
from referee.tools.building import BUILT_CEILING_BYTES

MiB = 1024 * 1024
CHUNK = 64 * 1024
TAR_BLOCK = 512
# Per entry, a tar stream may carry a header, a long-name or pax header and padding besides the
# file's own bytes; this allowance keeps a folder of many small files from looking like a bomb.
TAR_OVERHEAD_PER_ENTRY = 4 * TAR_BLOCK
TAR_OVERHEAD_FIXED = 20 * TAR_BLOCK
MAX_PATH_CHARS = 1024

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
TAR_MAGIC_OFFSET = 257
TAR_MAGIC = b"ustar"


class ArchiveRejected(ValueError):
    """An archive the platform will not take; the message is one line saying why."""


@dataclass(frozen=True)
class ArchiveLimits:
    """What one bot archive may hold. The ratio (uncompressed / archive bytes) is only enforced
    once the uncompressed total passes `ratio_floor_bytes`, so tiny archives are never refused
    for compressing well."""

    max_archive_bytes: int = 20 * MiB
    max_files: int = 2_000
    max_file_bytes: int = 10 * MiB
    max_total_bytes: int = 50 * MiB
    max_ratio: float = 100.0
    ratio_floor_bytes: int = 1 * MiB


DEFAULT_LIMITS = ArchiveLimits()
BUILT_LIMITS = ArchiveLimits(
    max_archive_bytes=BUILT_CEILING_BYTES,
    max_files=20_000,
    max_file_bytes=BUILT_CEILING_BYTES,
    max_total_bytes=BUILT_CEILING_BYTES,
)
"""What a version's build may leave at most (node_modules are many files), checked like an upload;
each build's own limit is smaller, in proportion to its upload (`built_limits`)."""
PLAYABLE_LIMITS = ArchiveLimits(
    max_archive_bytes=256 * MiB,
    max_files=20_000,
    max_file_bytes=64 * MiB,
    max_total_bytes=200 * MiB,
    max_ratio=float("inf"),
)
"""What a stored archive a match plays may unpack to: the digest is checked first, so these are
bytes the platform stored itself (an upload checked at intake, or its own packing of a built tree
checked at its full size, where no compression ratio means anything); as large as a built folder
could be before builds were limited in proportion to their upload, so older versions still play."""


def built_limits(output_bytes: int) -> ArchiveLimits:
    """The checker's limits for the tar a build wrote back, whose limit was `output_bytes`
    (`referee.tools.building.built_output_limit`): the whole tar and its files within it."""
    return dataclasses.replace(
        BUILT_LIMITS,
        max_archive_bytes=min(BUILT_LIMITS.max_archive_bytes, output_bytes),
        max_file_bytes=min(BUILT_LIMITS.max_file_bytes, output_bytes),
        max_total_bytes=min(BUILT_LIMITS.max_total_bytes, output_bytes),
    )


def unpacked_bytes(folder: Path) -> int:
    """The size of the files under `folder` (as unpacked here: no links), for the build's limit."""
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink())


@dataclass(frozen=True)
class _Entry:
    """One member, checked: its safe relative path, kind, declared size and how to read it."""

    path: PurePosixPath
    is_dir: bool
    size: int
    executable: bool
    open: Callable[[], IO[bytes]]


# Unpacking ---------------------------------------------------------------------------------------


def unpack_archive(data: bytes, destination: Path, *, limits: ArchiveLimits = DEFAULT_LIMITS) -> Path:
    """Checks and extracts a bot folder archive into `destination` (missing or empty); returns the
    bot folder (`destination` or its single top-level folder). Raises ArchiveRejected."""
    destination = Path(destination)
    if destination.exists() and (not destination.is_dir() or any(destination.iterdir())):
        raise ValueError(f"{destination} must be an empty folder or not exist yet")
    with _opened(data, limits) as entries:
        root = _check_layout(entries)
        _check_manifest(entries, root)
        created = not destination.exists()
        try:
            _extract(entries, destination, limits)
        except BaseException:
            _remove_contents(destination, remove_itself=created)
            raise
    return destination.joinpath(*root.parts)


@contextlib.contextmanager
def _opened(data: bytes, limits: ArchiveLimits) -> Iterator[list[_Entry]]:
    """The archive's checked entries, readable while the context is open."""
    if not data:
        raise ArchiveRejected("empty upload: expected a .tar.gz, .tar or .zip archive of a bot folder")
    if len(data) > limits.max_archive_bytes:
        raise ArchiveRejected(
            f"archive is {_size(len(data))}, over the limit of {_size(limits.max_archive_bytes)}"
        )
    if data.startswith(GZIP_MAGIC):
        tar_bytes = _gunzip(data, limits)
        if not _is_tar(tar_bytes):
            raise ArchiveRejected("a gzip file that does not hold a tar archive")
    elif data.startswith(ZIP_MAGICS):
        with _open_zip(data) as archive:
            yield _zip_entries(archive, len(data), limits)
        return
    elif _is_tar(data):
        tar_bytes = data
    else:
        raise ArchiveRejected("not an archive: expected .tar.gz, .tar or .zip (by its first bytes)")
    with _open_tar(tar_bytes) as archive:
        yield _tar_entries(archive, tar_bytes, len(data), limits)


def _open_tar(tar_bytes: bytes) -> tarfile.TarFile:
    try:
        return tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:")
    except tarfile.TarError as error:
        raise ArchiveRejected(f"corrupt tar archive ({error})") from None


def _open_zip(data: bytes) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as error:
        raise ArchiveRejected(f"corrupt zip archive ({error})") from None


def _tar_entries(
    archive: tarfile.TarFile, tar_bytes: bytes, compressed_size: int, limits: ArchiveLimits
) -> list[_Entry]:
    entries: list[_Entry] = []
    try:
        for count, member in enumerate(archive, start=1):
            if count > limits.max_files:
                raise ArchiveRejected(f"archive has more than {limits.max_files} entries")
            entry = _tar_entry(archive, member)
            if entry is None:
                continue
            if not member.isdir() and member.offset_data + member.size > len(tar_bytes):
                raise ArchiveRejected(
                    f"{entry.path}: its header says {member.size} bytes but the archive ends "
                    f"after {max(0, len(tar_bytes) - member.offset_data)}"
                )
            entries.append(entry)
    except tarfile.TarError as error:
        raise ArchiveRejected(f"corrupt tar archive ({error})") from None
    # tarfile stops quietly at a header it cannot parse; after the last member only the zero
    # blocks that end an archive may follow, or a header lied about a size.
    if archive.offset < len(tar_bytes) and tar_bytes[archive.offset :].strip(b"\0"):
        raise ArchiveRejected(
            "data after the last member its headers account for (a header that lies about a size?)"
        )
    _check_sizes(entries, compressed_size, limits)
    return entries


def _zip_entries(archive: zipfile.ZipFile, compressed_size: int, limits: ArchiveLimits) -> list[_Entry]:
    infos = archive.infolist()
    if len(infos) > limits.max_files:
        raise ArchiveRejected(f"archive has more than {limits.max_files} entries")
    entries = [entry for info in infos if (entry := _zip_entry(archive, info, limits)) is not None]
    _check_sizes(entries, compressed_size, limits)
    return entries


def _is_tar(data: bytes) -> bool:
    return data[TAR_MAGIC_OFFSET : TAR_MAGIC_OFFSET + len(TAR_MAGIC)] == TAR_MAGIC


def _gunzip(data: bytes, limits: ArchiveLimits) -> bytes:
    """The tar stream inside a gzip file, decompressed no further than the limits allow."""
    by_total = limits.max_total_bytes
    by_ratio = max(limits.ratio_floor_bytes, int(min(limits.max_ratio * len(data), by_total + 1)))
    overhead = TAR_OVERHEAD_PER_ENTRY * (limits.max_files + 1) + TAR_OVERHEAD_FIXED
    cap = min(by_total, by_ratio) + overhead
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            tar_bytes = stream.read(cap + 1)
    except (OSError, EOFError, zlib.error) as error:
        raise ArchiveRejected(f"corrupt gzip data ({error})") from None
    if len(tar_bytes) > cap:
        if by_ratio < by_total:
            raise ArchiveRejected(
                f"archive decompresses to over {limits.max_ratio:g} times its size (a compression bomb?)"
            )
        raise ArchiveRejected(f"archive decompresses to over {_size(by_total)}, the limit for a bot folder")
    return tar_bytes


def _safe_path(name: str) -> PurePosixPath | None:
    """The member's path relative to the archive root; None for the root itself."""
    if not name or "\\" in name or any(ord(char) < 32 for char in name):
        raise ArchiveRejected(f"{name!r}: unsafe name (empty, backslash or control character)")
    if name.startswith("/"):
        raise ArchiveRejected(f"{name}: absolute paths are not allowed")
    if len(name) > MAX_PATH_CHARS:
        raise ArchiveRejected(f"{name[:40]}...: path longer than {MAX_PATH_CHARS} characters")
    parts = [part for part in PurePosixPath(name).parts if part != "."]
    if ".." in parts:
        raise ArchiveRejected(f"{name}: '..' in a path is not allowed")
    return PurePosixPath(*parts) if parts else None


def _tar_entry(archive: tarfile.TarFile, member: tarfile.TarInfo) -> _Entry | None:
    path = _safe_path(member.name)
    kinds = {
        tarfile.SYMTYPE: "a symlink",
        tarfile.LNKTYPE: "a hardlink",
        tarfile.CHRTYPE: "a character device",
        tarfile.BLKTYPE: "a block device",
        tarfile.FIFOTYPE: "a fifo",
    }
    if member.type in kinds:
        raise ArchiveRejected(f"{member.name}: {kinds[member.type]}; only files and folders are allowed")
    if member.issparse():
        raise ArchiveRejected(f"{member.name}: a sparse file; only plain files and folders are allowed")
    if not (member.isreg() or member.isdir()):
        raise ArchiveRejected(f"{member.name}: unsupported member type {member.type!r}")
    if path is None:
        if member.isdir():
            return None
        raise ArchiveRejected(f"{member.name!r}: a file without a name")

    def open_member() -> IO[bytes]:
        stream = archive.extractfile(member)
        assert stream is not None  # a regular file always has a stream
        return stream

    return _Entry(
        path, member.isdir(), 0 if member.isdir() else member.size, bool(member.mode & 0o111), open_member
    )


def _zip_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limits: ArchiveLimits) -> _Entry | None:
    path = _safe_path(info.filename)
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    names = {
        stat.S_IFLNK: "a symlink",
        stat.S_IFCHR: "a character device",
        stat.S_IFBLK: "a block device",
        stat.S_IFIFO: "a fifo",
        stat.S_IFSOCK: "a socket",
    }
    if kind in names:
        raise ArchiveRejected(f"{info.filename}: {names[kind]}; only files and folders are allowed")
    if info.flag_bits & 0x1:
        raise ArchiveRejected(f"{info.filename}: encrypted entries are not allowed")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ArchiveRejected(f"{info.filename}: compression method {info.compress_type} is not supported")
    if path is None:
        if info.is_dir():
            return None
        raise ArchiveRejected(f"{info.filename!r}: a file without a name")
    if (
        not info.is_dir()
        and info.file_size > limits.ratio_floor_bytes
        and info.file_size > limits.max_ratio * max(1, info.compress_size)
    ):
        raise ArchiveRejected(
            f"{path}: compresses {info.file_size // max(1, info.compress_size)} to 1, over the limit "
            f"of {limits.max_ratio:g} to 1 (a zip bomb?)"
        )
    return _Entry(
        path,
        info.is_dir(),
        0 if info.is_dir() else info.file_size,
        bool(mode & 0o111),
        lambda: archive.open(info),
    )


def _check_sizes(entries: list[_Entry], compressed_size: int, limits: ArchiveLimits) -> None:
    """Declared sizes: each file, the total, and the whole archive's compression ratio."""
    total = 0
    for entry in entries:
        if entry.size > limits.max_file_bytes:
            raise ArchiveRejected(
                f"{entry.path}: {_size(entry.size)}, over the limit of "
                f"{_size(limits.max_file_bytes)} per file"
            )
        total += entry.size
    if total > limits.max_total_bytes:
        raise ArchiveRejected(
            f"files total {_size(total)}, over the limit of {_size(limits.max_total_bytes)} per bot"
        )
    if total > limits.ratio_floor_bytes and total > limits.max_ratio * compressed_size:
        raise ArchiveRejected(
            f"files total {total // compressed_size} times the archive's size, over the limit of "
            f"{limits.max_ratio:g} (a compression bomb?)"
        )


def _check_layout(entries: list[_Entry]) -> PurePosixPath:
    """No path twice, none under a file; returns where the manifest is (root or single folder)."""
    files = {entry.path for entry in entries if not entry.is_dir}
    seen: set[PurePosixPath] = set()
    for entry in entries:
        if entry.path in seen:
            raise ArchiveRejected(f"{entry.path}: appears twice in the archive")
        seen.add(entry.path)
        for parent in entry.path.parents:
            if parent in files:
                raise ArchiveRejected(f"{entry.path}: inside {parent}, which is a file")
    if PurePosixPath(MANIFEST) in files:
        return PurePosixPath()
    tops = {entry.path.parts[0] for entry in entries}
    if len(tops) == 1:
        top = PurePosixPath(tops.pop())
        if top not in files and top / MANIFEST in files:
            return top
    raise ArchiveRejected(f"no {MANIFEST} at the root of the archive or inside its single top-level folder")


def _check_manifest(entries: list[_Entry], root: PurePosixPath) -> None:
    """Validates the manifest in a private scratch folder, before anything reaches the destination."""
    entry = next(entry for entry in entries if entry.path == root / MANIFEST)
    with tempfile.TemporaryDirectory(prefix="septet-manifest-") as scratch:
        folder = Path(scratch).resolve()
        with (folder / MANIFEST).open("wb") as target:
            _copy_counted(entry, target, _Budget(entry.size))
        try:
            load_manifest(folder)
        except BotFolderError as error:
            message = str(error).replace(f"{folder}{os.sep}", "").replace(str(folder), "the archive")
            raise ArchiveRejected(" ".join(message.split())) from None


@dataclass
class _Budget:
    """Bytes the archive may still write in total."""

    left: int


def _copy_counted(entry: _Entry, target: IO[bytes], budget: _Budget) -> None:
    """Copies one member, counting the bytes actually read against its header and the limits."""
    written = 0
    try:
        with entry.open() as source:
            while chunk := source.read(CHUNK):
                written += len(chunk)
                if written > entry.size:
                    raise ArchiveRejected(
                        f"{entry.path}: holds more than the {entry.size} bytes its header says"
                    )
                budget.left -= len(chunk)
                if budget.left < 0:
                    raise ArchiveRejected("files hold more bytes than the limit for a bot folder")
                target.write(chunk)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error) as error:
        raise ArchiveRejected(f"{entry.path}: corrupt data ({error})") from None
    if written != entry.size:
        raise ArchiveRejected(f"{entry.path}: holds {written} bytes but its header says {entry.size}")


def _extract(entries: list[_Entry], destination: Path, limits: ArchiveLimits) -> None:
    budget = _Budget(min(limits.max_total_bytes, sum(entry.size for entry in entries)))
    destination.mkdir(parents=True, exist_ok=True)
    for entry in entries:
        target = destination.joinpath(*entry.path.parts)
        try:
            if entry.is_dir:
                target.mkdir(mode=0o755, parents=True, exist_ok=True)
                continue
            target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            with open(target, "xb") as stream:
                _copy_counted(entry, stream, budget)
            target.chmod(0o755 if entry.executable else 0o644)
        except OSError as error:
            raise ArchiveRejected(f"{entry.path}: cannot be extracted ({error.strerror})") from None


def _remove_contents(folder: Path, *, remove_itself: bool) -> None:
    if remove_itself:
        shutil.rmtree(folder, ignore_errors=True)
        return
    for child in folder.iterdir() if folder.is_dir() else ():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def _size(count: int) -> str:
    """Whole MiB as such ("50 MiB"), anything else exactly ("10,485,761 bytes")."""
    return f"{count // MiB} MiB" if count and count % MiB == 0 else f"{count:,} bytes"
