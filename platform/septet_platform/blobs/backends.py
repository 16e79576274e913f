"""The two storage backends (Django's storage API) bot archives and replays are kept in.

Both add what Septet needs beyond `Storage`: `write_durably` (a name's bytes written whole, in
place of any earlier ones, and safe before it returns: a caller records a row naming the file only
afterwards) and `discard` (a file a failed transaction wrote, removed again). Reads are checked by
the callers against the size and SHA-256 recorded with the row (`stores.read_checked`); the
database backend checks its own stored size and digest too, so a blob damaged in place is an
error there whatever asked for it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile, File
from django.core.files.storage import FileSystemStorage, Storage
from django.db import DatabaseError, transaction
from django.utils.deconstruct import deconstructible

from referee.engine import replay as replays
from septet_platform.blobs.models import Blob, BlobChunk

CHUNK_BYTES = 1 << 20
"""Bytes per database row of a blob: small enough for any driver's message, few rows per archive."""


class BlobCorrupt(OSError):
    """A stored file whose bytes are not what was stored (a changed byte, a truncated or lengthened
    blob): never handed to a caller."""


class StorageUnavailable(OSError):
    """The storage could not be read or written (the database refused or is unreachable); an
    OSError so that a failed replay write pauses matches exactly as a full disk does."""


class SeptetStorage(Storage):
    """What Septet's code asks of a backend besides Django's `Storage` (see the module docstring)."""

    where = "storage"
    """Where the files are, for messages ("the replay folder")."""
    probe_bytes = 4096
    """How much the health probe writes (`matches.storage`)."""

    def write_durably(self, name: str, data: bytes) -> None:
        raise NotImplementedError

    def read_bytes(self, name: str) -> bytes:
        """The file's bytes: FileNotFoundError when there is none, OSError when unreadable."""
        with self.open(name, "rb") as stream:
            data: bytes = stream.read()
        return data

    def discard(self, name: str) -> None:
        """Removes a file written by a transaction that did not commit (missing: nothing)."""
        self.delete(name)


@deconstructible(path="septet_platform.blobs.backends.LocalFolderStorage")
class LocalFolderStorage(SeptetStorage, FileSystemStorage):
    """A folder of this machine, named by a setting read at each use (tests and `septet up` point
    SEPTET_ARCHIVES_DIR / SEPTET_REPLAYS_DIR elsewhere after start-up). Writes as the platform
    always has: a temporary file beside the name, fsync, rename over it, fsync of the folder, so
    the name never shows a partial file, even after a crash or a full disk."""

    probe_bytes = 256 * 1024  # larger than any replay: a nearly full disk is reported full

    def __init__(self, setting: str = "SEPTET_REPLAYS_DIR", where: str = "the replay folder", **kwargs: Any):
        super().__init__(**kwargs)
        self.setting = setting
        self.where = where

    @property  # type: ignore[override]
    def base_location(self) -> str:
        return str(getattr(settings, self.setting))

    @property  # type: ignore[override]
    def location(self) -> str:
        return os.path.abspath(self.base_location)

    def write_durably(self, name: str, data: bytes) -> None:
        path = Path(self.path(name))
        path.parent.mkdir(parents=True, exist_ok=True)
        replays.write_durably(path, data)

    def read_bytes(self, name: str) -> bytes:
        return Path(self.path(name)).read_bytes()

    def discard(self, name: str) -> None:
        """Removes the file, and its folder when that is left empty (a bot's first submission
        that did not commit leaves no folder of its name)."""
        path = Path(self.path(name))
        path.unlink(missing_ok=True)
        if path.parent != Path(self.location):
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # refused while another submission's file is in it


@deconstructible(path="septet_platform.blobs.backends.DatabaseStorage")
class DatabaseStorage(SeptetStorage):
    """Files as rows of the platform's own database (`Blob`, its bytes in `BlobChunk`s of
    CHUNK_BYTES): every machine that reaches the database reaches them, with no shared folder and
    no other server to run. A write is one transaction (inside a caller's, it commits with the
    caller's rows); a read is one statement, checked against the blob's stored size and SHA-256."""

    probe_bytes = 16 * 1024  # a database write; kept small, every worker probes every few seconds

    def __init__(self, area: str = "replays", where: str = "", using: str = "default") -> None:
        self.area = area
        self.using = using
        self.where = where or f"the database's {area}"

    def write_durably(self, name: str, data: bytes) -> None:
        digest = hashlib.sha256(data).hexdigest()
        pieces = [data[start : start + CHUNK_BYTES] for start in range(0, len(data), CHUNK_BYTES)] or [b""]
        try:
            with transaction.atomic(using=self.using):
                Blob.objects.using(self.using).filter(area=self.area, name=name).delete()
                blob = Blob.objects.using(self.using).create(
                    area=self.area, name=name, size=len(data), sha256=digest
                )
                BlobChunk.objects.using(self.using).bulk_create(
                    [BlobChunk(blob=blob, index=index, data=piece) for index, piece in enumerate(pieces)],
                    batch_size=4,
                )
        except DatabaseError as error:
            raise StorageUnavailable(
                errno.EIO, f"cannot be stored in {self.where} ({error})".strip()
            ) from None

    def read_bytes(self, name: str) -> bytes:
        rows = (
            BlobChunk.objects.using(self.using)
            .filter(blob__area=self.area, blob__name=name)
            .order_by("index")
            .values_list("blob__size", "blob__sha256", "index", "data")
        )
        size, digest, pieces = -1, "", []
        row: tuple[int, str, int, bytes | memoryview]
        try:
            for row in rows.iterator(chunk_size=4):
                size, digest, index, piece = row
                if index != len(pieces):
                    raise BlobCorrupt(errno.EIO, f"{name}: piece {len(pieces)} is missing from {self.where}")
                pieces.append(bytes(piece))
        except DatabaseError as error:
            raise StorageUnavailable(
                errno.EIO, f"{name}: cannot be read from {self.where} ({error})"
            ) from None
        if not pieces:
            if self.exists(name):  # its row without its bytes
                raise BlobCorrupt(errno.EIO, f"{name}: its bytes are missing from {self.where}")
            raise FileNotFoundError(errno.ENOENT, f"{name}: not in {self.where}")
        data = b"".join(pieces)
        if len(data) != size:
            raise BlobCorrupt(errno.EIO, f"{name}: {len(data)} bytes in {self.where}, {size} were stored")
        if hashlib.sha256(data).hexdigest() != digest:
            raise BlobCorrupt(
                errno.EIO, f"{name}: its bytes in {self.where} do not match their stored SHA-256"
            )
        return data

    def _open(self, name: str, mode: str = "rb") -> File[bytes]:
        if any(flag in mode for flag in "wa+"):
            raise ValueError("database storage files are written whole with save() or write_durably()")
        return ContentFile(self.read_bytes(name), name=name)

    def _save(self, name: str, content: File[Any]) -> str:
        content.seek(0)
        data = content.read()
        self.write_durably(name, data if isinstance(data, bytes) else data.encode())
        return name

    def delete(self, name: str) -> None:
        Blob.objects.using(self.using).filter(area=self.area, name=name).delete()

    def exists(self, name: str) -> bool:
        return Blob.objects.using(self.using).filter(area=self.area, name=name).exists()

    def size(self, name: str) -> int:
        size = Blob.objects.using(self.using).filter(area=self.area, name=name).values_list("size", flat=True)
        found = size.first()
        if found is None:
            raise FileNotFoundError(errno.ENOENT, f"{name}: not in {self.where}")
        return int(found)

    def listdir(self, path: str) -> tuple[list[str], list[str]]:
        prefix = f"{path.strip('/')}/" if path.strip("/") else ""
        names = Blob.objects.using(self.using).filter(area=self.area, name__startswith=prefix)
        folders: set[str] = set()
        files: list[str] = []
        for name in names.values_list("name", flat=True):
            rest = name[len(prefix) :]
            if "/" in rest:
                folders.add(rest.split("/", 1)[0])
            else:
                files.append(rest)
        return sorted(folders), sorted(files)
