"""The bot page follows a qualifying version live in Debian's chromium, under the production
Content-Security-Policy (no inline script): once the version is active the page shows it without
a manual reload, and a failed version shows its owner the reason."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from web_data import Site, version_make

from septet_platform.bots.models import BotVersion

pytestmark = pytest.mark.browser


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
