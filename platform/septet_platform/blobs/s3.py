"""Archives and replays as objects in an S3 bucket (SEPTET_STORAGE=s3), through django-storages.

For a platform whose workers run on other machines and whose files should live neither in a
shared folder nor in its database: AWS S3 or any server that speaks its API (MinIO, Ceph, R2...).
Installed with the `s3` extra (`pip install 'septet[s3]'`); `selection.storage_backends` refuses
SEPTET_STORAGE=s3 at start without it.

The guarantees are the other kinds':

- A write is one PutObject of the whole file (`write_durably`). S3 answers 200 only once the
  object is stored durably, and a PUT is atomic: a reader sees the earlier object or the new one
  whole, never part of one, and reads after the answer see the new bytes. So when
  `write_durably` returns, the file is safe before the row naming it commits, as the folder's
  fsync-and-rename and the database's transaction are. Content-MD5 goes with every PUT, so a
  server refuses bytes changed on the way (BadDigest) instead of storing them.
- Every object carries its own SHA-256 (user metadata `sha256`), and a read checks the size and
  digest it got against it, as the database's blobs do; the callers check again against what was
  recorded with the row (`stores.read_checked`), whatever the backend.
- A name is a relative path without `.`/`..` parts: its key is `<prefix>/<area>/<name>`, and a
  name that would leave that is SuspiciousFileOperation before any request is sent.
- A missing object is FileNotFoundError; anything the server or the network refuses (the bucket
  missing, credentials refused, the server down) is StorageUnavailable, an OSError, so a failed
  replay write pauses matches exactly as a full disk does and /healthz says why.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import posixpath
from collections.abc import Iterator
from typing import Any

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from django.core.exceptions import SuspiciousFileOperation
from django.core.files.base import ContentFile, File
from django.utils.deconstruct import deconstructible
from storages.backends.s3 import S3Storage

from septet_platform.blobs.backends import BlobCorrupt, SeptetStorage, StorageUnavailable

DIGEST_METADATA = "sha256"
"""The user metadata (x-amz-meta-sha256) holding an object's SHA-256, hex, as written."""
MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})
"""Error codes that mean "no such object" (HEAD answers a bare 404). NoSuchBucket is not one: a
missing bucket is a broken store, not a missing file."""


@deconstructible(path="septet_platform.blobs.s3.S3BucketStorage")
class S3BucketStorage(SeptetStorage, S3Storage):
    """One area ("archives" or "replays") of a bucket: the keys under `<prefix>/<area>/`.

    Options come from the settings (SEPTET_S3_*, see `settings.base`); empty credentials leave them
    to boto3's own chain (AWS_* variables, an instance or pod role). Every request has a connect
    and read timeout and at most `attempts` tries, so a dead server is an error in seconds,
    never a worker hanging on a replay."""

    probe_bytes = 16 * 1024  # one PUT and one DELETE per probe; every worker probes every few seconds

    def __init__(
        self,
        *,
        bucket: str,
        area: str = "replays",
        prefix: str = "",
        endpoint_url: str = "",
        region: str = "",
        access_key: str = "",
        secret_key: str = "",
        connect_timeout: float = 5.0,
        read_timeout: float = 30.0,
        attempts: int = 3,
    ) -> None:
        self.area = area
        location = "/".join(part for part in (prefix.strip("/"), area) if part)
        super().__init__(
            bucket_name=bucket,
            location=location,
            endpoint_url=endpoint_url or None,
            region_name=region or None,
            access_key=access_key or None,
            secret_key=secret_key or None,
            file_overwrite=True,  # a name is written in place of its earlier bytes, as in a folder
            default_acl=None,  # the bucket's own policy: never public
            client_config=Config(
                connect_timeout=connect_timeout,
                read_timeout=read_timeout,
                retries={"max_attempts": attempts, "mode": "standard"},
                # Checksums only where S3 requires them: Content-MD5 is sent by write_durably and
                # accepted everywhere; the newer default (CRC32 headers, streamed trailers) is not
                # understood by every S3-compatible server.
                request_checksum_calculation="when_required",
                response_checksum_validation="when_required",
            ),
        )
        self.where = f"the S3 bucket {bucket!r} under {location}/"

    # Names and errors

    def _key(self, name: str) -> str:
        """The object key of `name`, or SuspiciousFileOperation for a name that is not a plain
        relative path (absolute, `.` or `..` parts, empty parts, backslashes, NUL)."""
        parts = str(name).split("/")
        if not name or "\\" in name or "\x00" in name or any(part in ("", ".", "..") for part in parts):
            raise SuspiciousFileOperation(f"{name!r} is not a file name inside {self.where}")
        key: str = self._normalize_name(name)  # django-storages' own check that it stays inside
        return key

    @contextlib.contextmanager
    def _answered(self, name: str, doing: str) -> Iterator[None]:
        """Turns botocore's errors into the OSErrors Septet's callers handle: FileNotFoundError for
        a missing object, StorageUnavailable for everything else (with the server's code)."""
        try:
            yield
        except ClientError as error:
            code, message = _code_and_message(error)
            if code in MISSING_CODES:
                raise FileNotFoundError(errno.ENOENT, f"{name}: not in {self.where}") from None
            raise StorageUnavailable(
                errno.EIO, f"{name}: cannot be {doing} {self.where} ({code}: {message})"
            ) from None
        except BotoCoreError as error:  # no connection, timeouts, no credentials, a cut-off body
            raise StorageUnavailable(errno.EIO, f"{name}: cannot be {doing} {self.where} ({error})") from None

    # What Septet asks of a store

    def write_durably(self, name: str, data: bytes) -> None:
        key = self._key(name)
        with self._answered(name, "stored in"):
            self.connection.meta.client.put_object(
                Bucket=self.bucket_name,
                Key=key,
                Body=data,
                ContentLength=len(data),
                ContentMD5=base64.b64encode(hashlib.md5(data).digest()).decode(),
                # The bytes as they are: no Content-Encoding (a .json.gz would be guessed gzip), so
                # nothing between here and a reader ever decompresses what was hashed.
                ContentType="application/octet-stream",
                Metadata={DIGEST_METADATA: hashlib.sha256(data).hexdigest()},
            )

    def read_bytes(self, name: str) -> bytes:
        key = self._key(name)
        with self._answered(name, "read from"):
            answer = self.connection.meta.client.get_object(Bucket=self.bucket_name, Key=key)
            data: bytes = answer["Body"].read()
        size = int(answer.get("ContentLength", len(data)))
        if len(data) != size:
            raise BlobCorrupt(
                errno.EIO, f"{name}: {len(data)} bytes read from {self.where}, {size} were sent"
            )
        digest = (answer.get("Metadata") or {}).get(DIGEST_METADATA, "")
        if digest and hashlib.sha256(data).hexdigest() != digest.lower():
            raise BlobCorrupt(
                errno.EIO, f"{name}: its bytes in {self.where} do not match their stored SHA-256"
            )
        return data

    def discard(self, name: str) -> None:
        self.delete(name)

    def check_reachable(self) -> None:
        """StorageUnavailable, saying why, unless the bucket answers a HEAD with these credentials
        (the check at start, `blobs.checks`)."""
        at = f"the S3 bucket {self.bucket_name!r} at {self.endpoint_url or 'AWS S3'}"
        try:
            self.connection.meta.client.head_bucket(Bucket=self.bucket_name)
        except ClientError as error:
            code, message = _code_and_message(error)
            why = "it does not exist" if code in MISSING_CODES else f"{code}: {message}"
            raise StorageUnavailable(errno.EIO, f"{at} refused ({why})") from None
        except BotoCoreError as error:
            raise StorageUnavailable(errno.EIO, f"{at} cannot be reached ({error})") from None

    # Django's Storage, every call through the same names and errors

    def _open(self, name: str, mode: str = "rb") -> File[bytes]:
        if any(flag in mode for flag in "wa+"):
            raise ValueError("S3 objects are written whole with save() or write_durably()")
        return ContentFile(self.read_bytes(name), name=name)

    def _save(self, name: str, content: File[Any]) -> str:
        content.seek(0)
        data = content.read()
        self.write_durably(name, data if isinstance(data, bytes) else data.encode())
        return name

    def delete(self, name: str) -> None:
        key = self._key(name)
        with self._answered(name, "deleted from"):
            self.connection.meta.client.delete_object(Bucket=self.bucket_name, Key=key)

    def exists(self, name: str) -> bool:
        try:
            self.size(name)
        except FileNotFoundError:
            return False
        return True

    def size(self, name: str) -> int:
        key = self._key(name)
        with self._answered(name, "read from"):
            answer = self.connection.meta.client.head_object(Bucket=self.bucket_name, Key=key)
        return int(answer["ContentLength"])

    def listdir(self, path: str) -> tuple[list[str], list[str]]:
        folder = path.strip("/")
        prefix = f"{self._key(folder)}/" if folder else f"{self.location}/"
        folders: list[str] = []
        files: list[str] = []
        with self._answered(path or "/", "listed in"):
            pages = self.connection.meta.client.get_paginator("list_objects_v2")
            for page in pages.paginate(Bucket=self.bucket_name, Prefix=prefix, Delimiter="/"):
                below = page.get("CommonPrefixes", ())
                folders += [posixpath.basename(entry["Prefix"].rstrip("/")) for entry in below]
                files += [entry["Key"][len(prefix) :] for entry in page.get("Contents", ())]
        return sorted(folders), sorted(files)


def _code_and_message(error: ClientError) -> tuple[str, str]:
    """The S3 error code of a refusal ("NoSuchBucket", "AccessDenied"; a HEAD's bare status) and its
    message."""
    details = error.response.get("Error", {})
    code = str(details.get("Code") or error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", "?"))
    return code, str(details.get("Message") or code)
