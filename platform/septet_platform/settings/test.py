"""Tests: real PostgreSQL when it answers on 127.0.0.1:5432 (or `DATABASE_URL`), else SQLite."""

from __future__ import annotations

import os
import socket
import tempfile
import uuid
from pathlib import Path

import dj_database_url

from septet_platform.settings.base import *  # noqa: F403


def _postgres_reachable(host: str = "127.0.0.1", port: int = 5432) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((host, port)) == 0


# DATABASE_URL is set for the worker processes tests start (or by whoever picks the test database):
# they connect as production does, keeping connections between tasks.
if "DATABASE_URL" in os.environ:
    DATABASES = {
        "default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=60, conn_health_checks=True)
    }
elif _postgres_reachable() and os.environ.get("SEPTET_TEST_DB") != "sqlite":
    DATABASES = {"default": dj_database_url.parse("postgres://postgres@127.0.0.1:5432/test")}
else:
    DATABASES = {"default": dj_database_url.parse("sqlite:///:memory:")}

# A worker process started by a test shares the test's data folder through SEPTET_DATA_DIR.
DATA_DIR = Path(os.environ.get("SEPTET_DATA_DIR") or tempfile.mkdtemp(prefix="septet-test-data-"))
SEPTET_ARCHIVES_DIR = DATA_DIR / "archives"
SEPTET_REPLAYS_DIR = DATA_DIR / "replays"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast; tests only

# Tests count bot processes after each match; the ones about warm house bots turn this on.
SEPTET_WARM_HOUSE_BOTS = False

# Whole pages are not kept in tests (a test changes data and looks again at once); the tests of the
# page cache turn it on with their own, private cache.
SEPTET_PAGE_CACHE_SECONDS = 0
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "pages": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "septet-test-pages"},
}

# Live streams and seat answers go to the machine's Redis (the broker's) under a prefix of this test
# run's own, inherited by the worker processes a test starts: matches of another run's database
# have the same ids, and their streams must never be taken for this run's.
SEPTET_LIVE_PREFIX = os.environ.setdefault("SEPTET_LIVE_PREFIX", f"septet-test-{uuid.uuid4().hex[:12]}:")
