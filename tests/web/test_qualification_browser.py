"""The bot page follows a qualifying version live in Debian's chromium, under the production
Content-Security-Policy (no inline script): once the version is active the page shows it without
a manual reload, and a failed version shows its owner the reason."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from web_data import Queued, Site, site_build, version_make

from septet_platform.bots.models import BotVersion
from septet_platform.web.csp import DEFAULT_POLICY, HEADER

pytestmark = pytest.mark.browser

RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (event) => window.__csp.push(event.violatedDirective));
"""


@pytest.fixture(scope="module", autouse=True)
def orm_beside_playwright() -> Iterator[None]:
    """Playwright's sync API runs an asyncio loop in this thread (see test_browser.py)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture
def served(
    transactional_db: None, storage: Path, live_server: Any, qualify_queue: Queued
) -> Iterator[tuple[str, Site]]:
    yield live_server.url, site_build()


@pytest.fixture
def under_policy(page: Any) -> Any:
    def with_policy(route: Any) -> None:
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers, HEADER.lower(): DEFAULT_POLICY})

    page.route("**/*", with_policy)
    page.add_init_script(RECORD_VIOLATIONS)
    return page


def test_the_bot_page_follows_qualification_until_the_version_is_active(
    served: tuple[str, Site], under_policy: Any
) -> None:
    url, site = served
    version = version_make(site.alice, "alpha", number=3, status=BotVersion.Status.QUALIFYING)
    under_policy.goto(f"{url}/bots/alpha/")
    assert under_policy.locator("#qualification").is_visible()
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.ACTIVE)
    under_policy.wait_for_selector("#qualification", state="detached", timeout=15_000)  # reloaded
    assert "Active" in under_policy.locator("table").filter(has_text="v3").first.inner_text()
    assert under_policy.evaluate("window.__csp") == []


def test_a_failed_version_shows_its_owner_the_reason_live(
    served: tuple[str, Site], under_policy: Any
) -> None:
    url, site = served
    version = version_make(site.alice, "alpha", number=3, status=BotVersion.Status.QUALIFYING)
    session = Client()
    session.force_login(site.alice)
    cookie = session.cookies["sessionid"].value
    under_policy.context.add_cookies([{"name": "sessionid", "value": cookie, "url": url}])
    under_policy.goto(f"{url}/bots/alpha/")
    BotVersion.objects.filter(pk=version.pk).update(
        status=BotVersion.Status.FAILED, error_log="qualification: alpha v3 crashed: ImportError: torch"
    )
    live = under_policy.locator("#qualification")
    said = ""
    for _ in range(60):  # the live line says why, a few seconds before the page reloads
        said = live.text_content() if live.count() else said
        if "ImportError" in said:
            break
        under_policy.wait_for_timeout(250)
    assert "v3 failed: qualification: alpha v3 crashed: ImportError: torch" in said.replace("Version 3", "v3")
    under_policy.wait_for_selector("#qualification", state="detached", timeout=15_000)
    assert "ImportError: torch" in under_policy.content()  # the owner's log section after the reload
    assert under_policy.evaluate("window.__csp") == []
