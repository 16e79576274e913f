"""SEPTET_STORAGE to `settings.STORAGES` entries (imported by the settings: no models here, and
nothing of the optional `s3` extra is imported, only looked for)."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ImproperlyConfigured

ARCHIVES = "septet_archives"
REPLAYS = "septet_replays"
KINDS = ("local", "database", "s3")
S3_EXTRA = ("storages", "boto3")
"""The modules the `s3` extra installs (django-storages, boto3)."""


def storage_backends(kind: str, s3: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """The STORAGES entries of ARCHIVES and REPLAYS for SEPTET_STORAGE=`kind` (ValueError for an
    unknown one: a typo must not quietly keep files on one machine's disk). `s3` holds the
    bucket's settings for kind "s3" (`s3_backends`)."""
    kind = (kind or "local").strip().lower()
    if kind in ("local", "file", "folder"):
        backend = "septet_platform.blobs.backends.LocalFolderStorage"
        return {
            ARCHIVES: {
                "BACKEND": backend,
                "OPTIONS": {"setting": "SEPTET_ARCHIVES_DIR", "where": "the archive folder"},
            },
            REPLAYS: {
                "BACKEND": backend,
                "OPTIONS": {"setting": "SEPTET_REPLAYS_DIR", "where": "the replay folder"},
            },
        }
    if kind in ("database", "db", "db://"):
        backend = "septet_platform.blobs.backends.DatabaseStorage"
        return {
            ARCHIVES: {"BACKEND": backend, "OPTIONS": {"area": "archives"}},
            REPLAYS: {"BACKEND": backend, "OPTIONS": {"area": "replays"}},
        }
    if kind in ("s3", "s3://"):
        return s3_backends(s3 or {})
    raise ValueError(f"SEPTET_STORAGE={kind!r}: expected one of {', '.join(KINDS)}")


def s3_backends(options: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The entries for SEPTET_STORAGE=s3: `options` are `blobs.s3.S3BucketStorage`'s (bucket,
    prefix, endpoint_url, region, access_key, secret_key), each area under `<prefix>/<area>/`.
    ImproperlyConfigured, when every process starts, if the `s3` extra is not installed, no
    bucket is named or the prefix could name keys outside itself: better than a platform that
    starts and then pauses every match."""
    missing = [module for module in S3_EXTRA if importlib.util.find_spec(module) is None]
    if missing:
        raise ImproperlyConfigured(
            f"SEPTET_STORAGE=s3 needs the s3 extra ({', '.join(missing)} not installed): "
            "pip install 'septet[s3]'"
        )
    settings = {key: value.strip() if isinstance(value, str) else value for key, value in options.items()}
    if not settings.get("bucket"):
        raise ImproperlyConfigured("SEPTET_STORAGE=s3 needs the bucket's name in SEPTET_S3_BUCKET")
    prefix = str(settings.get("prefix") or "").strip("/")
    if prefix and any(part in ("", ".", "..") or "\\" in part for part in prefix.split("/")):
        raise ImproperlyConfigured(
            f"SEPTET_S3_PREFIX={prefix!r}: expected plain folder names joined by '/' (no '.', '..' or '//')"
        )
    settings["prefix"] = prefix
    backend = "septet_platform.blobs.s3.S3BucketStorage"
    return {
        ARCHIVES: {"BACKEND": backend, "OPTIONS": {**settings, "area": "archives"}},
        REPLAYS: {"BACKEND": backend, "OPTIONS": {**settings, "area": "replays"}},
    }
