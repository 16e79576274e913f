"""The check at start: with SEPTET_STORAGE=s3, the bucket answers.

A Django system check, so it runs where Django runs them at start: `django-admin migrate` (the
deploy's migrate step, which every other role waits for), `django-admin arena`, `django-admin
check`. A wrong bucket, endpoint or key then stops the deploy with one clear line instead of a
platform that starts and pauses every match ("storage" in /healthz says the same afterwards,
should the bucket go away later). The other kinds have nothing to reach beyond the database.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.core.files.storage import storages

from septet_platform.blobs.selection import ARCHIVES, REPLAYS

UNREACHABLE = "septet.E001"


def storage_reachable(app_configs: Sequence[AppConfig] | None = None, **_: Any) -> list[checks.CheckMessage]:
    """An Error per S3 bucket of the two stores that does not answer a HEAD (nothing for the
    folder and the database kinds)."""
    from septet_platform.blobs.backends import StorageUnavailable

    errors: list[checks.CheckMessage] = []
    seen: set[tuple[str, str]] = set()
    for alias in (ARCHIVES, REPLAYS):
        store = storages[alias]
        reach = getattr(store, "check_reachable", None)
        if reach is None:
            continue
        bucket = (str(getattr(store, "endpoint_url", "") or ""), str(getattr(store, "bucket_name", "")))
        if bucket in seen:
            continue
        seen.add(bucket)
        try:
            reach()
        except StorageUnavailable as error:
            errors.append(
                checks.Error(
                    f"SEPTET_STORAGE=s3: {error.strerror}: archives and replays cannot be kept",
                    hint="check SEPTET_S3_BUCKET, SEPTET_S3_ENDPOINT_URL, SEPTET_S3_REGION and the keys "
                    "(SEPTET_S3_ACCESS_KEY_ID, SEPTET_S3_SECRET_ACCESS_KEY); the bucket must exist",
                    id=UNREACHABLE,
                )
            )
    return errors
