"""The platform's two stores, chosen by SEPTET_STORAGE, and the checked read every caller uses.

`settings.STORAGES` names them ARCHIVES ("septet_archives": uploaded and built bot archives) and
REPLAYS ("septet_replays"); `selection.storage_backends(kind)` builds that entry from SEPTET_STORAGE:

- "local" (the default): the data folder's archives/ and replays/, as Septet always kept them.
  Every process that plays or serves them must see that folder (one machine, or a shared mount).
- "database": the platform's own database (`backends.DatabaseStorage`), so a worker on another
  machine needs nothing from the centre but the network (docs/operations.md).
- "s3": a bucket of S3 or an S3-compatible server (`s3.S3BucketStorage`, django-storages; the
  SEPTET_S3_* settings), for files kept neither in a shared folder nor in the database.

Whatever the backend, a read is checked against the size and SHA-256 recorded with its row
before anyone uses the bytes (`read_checked`), and a write is safe before the row naming it
commits (`SeptetStorage.write_durably`).
"""

from __future__ import annotations

import errno
import hashlib
from typing import cast

from django.core.files.storage import storages

from septet_platform.blobs.backends import BlobCorrupt, SeptetStorage
from septet_platform.blobs.selection import ARCHIVES, REPLAYS


def archive_store() -> SeptetStorage:
    """Where bot archives (uploads and builds) are kept."""
    return cast(SeptetStorage, storages[ARCHIVES])


def replay_store() -> SeptetStorage:
    """Where replays are kept."""
    return cast(SeptetStorage, storages[REPLAYS])


def read_checked(store: SeptetStorage, name: str, *, size: int, sha256: str) -> bytes:
    """The bytes of `name`, refused (BlobCorrupt) unless they are `size` bytes (0: not recorded,
    as for rows older than sizes; no stored archive is empty) with SHA-256 `sha256`.
    FileNotFoundError for a missing file, OSError for an unreadable store."""
    data = store.read_bytes(name)
    if size and len(data) != size:
        raise BlobCorrupt(
            errno.EIO, f"{name} has {len(data)} bytes, {size} were stored (damaged or truncated)"
        )
    if hashlib.sha256(data).hexdigest() != sha256.lower():
        raise BlobCorrupt(
            errno.EIO, f"{name}: its bytes do not match its recorded SHA-256 (damaged or replaced)"
        )
    return data
