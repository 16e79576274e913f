"""Fixtures for the site's tests: private storage, recorded tasks, and a site full of real data;
for the browser tests (marker `browser`), the live site and a page under the production policy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_data import Queued, Site, site_build

from septet_platform.submissions import services as submission_services
from septet_platform.web.csp import DEFAULT_POLICY, HEADER


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
    """The qualification task as submissions' bot_submit queues it, recorded instead of sent."""
    queued = Queued()
    monkeypatch.setattr(submission_services, "bot_version_qualify_task", queued)
    return queued


@pytest.fixture
def site(db: None, storage: Path) -> Site:
    return site_build()


RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation',
    (event) => window.__csp.push(event.violatedDirective + ' ' + event.blockedURI));
"""


@pytest.fixture(scope="module", autouse=True)
def orm_beside_playwright(request: pytest.FixtureRequest) -> Iterator[None]:
    """In browser test modules: Playwright's sync API runs an asyncio loop in this thread from the
    first page on, which Django takes for async code; everything there is synchronous, including
    the test database's setup and flushes, so the check is off for the module (before any
    database fixture). Other modules keep it."""
    if request.node.get_closest_marker("browser") is None:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture
def served(
    transactional_db: None, storage: Path, live_server: Any, qualify_queue: Queued
) -> Iterator[tuple[str, Site]]:
    """The live server's address and the site's data in its database (rows visible to it)."""
    yield live_server.url, site_build()


@pytest.fixture
def under_policy(page: Any) -> Any:
    """The page with every response of the site carrying the production policy (the live server
    runs the test settings' middleware), and violations recorded in window.__csp."""

    def with_policy(route: Any) -> None:
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers, HEADER.lower(): DEFAULT_POLICY})

    page.route("**/*", with_policy)
    page.add_init_script(RECORD_VIOLATIONS)
    return page
