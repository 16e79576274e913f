"""The Content-Security-Policy production sends (septet_platform.web.csp) against the real replay
viewer in Debian's chromium: the match page, the viewer's script and styles and the replay
document load and play under the policy with no violation. A page with an inline script and
inline styles, served under the same header, shows the check does see violations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from web_data import Site

from septet_platform.web.csp import DEFAULT_POLICY, HEADER

pytestmark = pytest.mark.browser

VIEWER_READY = ".septet-viewer[data-steps]"


def test_the_replay_viewer_plays_under_the_policy_with_no_violation(
    served: tuple[str, Site], under_policy: Any
) -> None:
    url, site = served
    console: list[str] = []
    under_policy.on(
        "console", lambda message: console.append(message.text) if message.type == "error" else None
    )

    response = under_policy.goto(f"{url}/matches/{site.match.pk}/")
    under_policy.wait_for_selector(VIEWER_READY, timeout=10_000)
    under_policy.keyboard.press("End")  # step to the end: every part of the viewer drawn
    under_policy.wait_for_timeout(300)

    assert response.headers[HEADER.lower()] == DEFAULT_POLICY
    assert int(under_policy.locator(".septet-viewer").get_attribute("data-steps")) > 100
    assert under_policy.evaluate("window.__csp") == []
    assert [text for text in console if "Content Security Policy" in text] == []


def test_the_check_sees_an_inline_script_and_style_the_policy_blocks(
    served: tuple[str, Site], under_policy: Any
) -> None:
    url, _ = served
    under_policy.route(
        f"{url}/inline-test/",
        lambda route: route.fulfill(
            status=200,
            headers={"content-type": "text/html", HEADER.lower(): DEFAULT_POLICY},
            body="<p style='color:red'>x</p><script>window.ran = true</script>",
        ),
    )

    under_policy.goto(f"{url}/inline-test/")
    under_policy.wait_for_timeout(200)

    violations = under_policy.evaluate("window.__csp")
    assert under_policy.evaluate("window.ran === undefined")
    assert any(v.startswith("script-src") for v in violations), violations
    assert any(v.startswith("style-src") for v in violations), violations


def test_the_middleware_sends_the_policy_on_pages_and_errors(db: None, storage: Path, settings: Any) -> None:
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "septet_platform.web.csp.ContentSecurityPolicyMiddleware"]
    client = Client()
    for url in ("/", "/no-such-page/"):
        assert client.get(url)[HEADER] == DEFAULT_POLICY, url
