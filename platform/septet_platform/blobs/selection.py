"""SEPTET_STORAGE to `settings.STORAGES` entries (imported by the settings: no models here)."""

from __future__ import annotations

from typing import Any

ARCHIVES = "septet_archives"
REPLAYS = "septet_replays"
KINDS = ("local", "database")


def storage_backends(kind: str) -> dict[str, dict[str, Any]]:
    """The STORAGES entries of ARCHIVES and REPLAYS for SEPTET_STORAGE=`kind` (ValueError for an
    unknown one: a typo must not quietly keep files on one machine's disk)."""
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
    raise ValueError(f"SEPTET_STORAGE={kind!r}: expected one of {', '.join(KINDS)}")
