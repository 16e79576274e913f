"""Fixtures for the site's tests: private storage, recorded tasks, and a site full of real data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from web_data import Queued, Site, site_build

from septet_platform.arena_api import services as arena_services


@pytest.fixture
def storage(settings: Any, tmp_path: Path) -> Path:
    """Private archive and replay folders for the test, and a fresh sign-in limit cache."""
    settings.SEPTET_ARCHIVES_DIR = tmp_path / "archives"
    settings.SEPTET_REPLAYS_DIR = tmp_path / "replays"
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": str(tmp_path)}
    }
    return tmp_path


@pytest.fixture
def qualify_queue(monkeypatch: pytest.MonkeyPatch) -> Queued:
    """The qualification task as the Arena's bot_submit queues it, recorded instead of sent."""
    queued = Queued()
    monkeypatch.setattr(arena_services, "bot_version_qualify_task", queued)
    return queued


@pytest.fixture
def site(db: None, storage: Path) -> Site:
    return site_build()
