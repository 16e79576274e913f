"""Issue 24 in Debian's chromium, under the production policy where a page has script: the match
page opens on the replay viewer; on a 390 px phone a new token fits and its Copy button puts it on
the clipboard, the tokens table's Revoke and a match list's every column are on screen, and the
home page's leaders and install steps fit."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from web_data import Site

from septet_platform.web.csp import DEFAULT_POLICY, HEADER

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
COPIED = "document.querySelector(\"button[data-copy='new-token']\").textContent === 'Copied'"


@pytest.fixture
def phone(browser: Any, served: tuple[str, Site]) -> Iterator[Any]:
    """A 390 x 844 page signed in as alice, allowed the clipboard, under the production policy,
    recording console errors in `page.errors`."""
    url, site = served
    context = browser.new_context(viewport=PHONE, permissions=["clipboard-read", "clipboard-write"])
    session = Client()
    session.force_login(site.alice)
    context.add_cookies([{"name": "sessionid", "value": session.cookies["sessionid"].value, "url": url}])
    opened = context.new_page()

    def with_policy(route: Any) -> None:
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers, HEADER.lower(): DEFAULT_POLICY})

    opened.route("**/*", with_policy)
    opened.errors = []
    opened.on("console", lambda message: message.type == "error" and opened.errors.append(message.text))
    opened.on("pageerror", lambda error: opened.errors.append(str(error)))
    yield opened
    context.close()


def _on_screen(box: dict[str, float] | None, width: int = PHONE["width"]) -> bool:
    return box is not None and box["width"] > 0 and box["x"] >= 0 and box["x"] + box["width"] <= width


def _page_width(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_match_page_opens_on_the_replay_viewer_above_the_facts_tables(
    served: tuple[str, Site], page: Any, viewport: dict[str, int]
) -> None:
    url, site = served
    page.set_viewport_size(viewport)
    page.goto(f"{url}/matches/{site.match.pk}/")
    page.wait_for_selector(".septet-viewer[data-steps]", timeout=10_000)
    viewer = page.locator(".septet-viewer").bounding_box()
    assert viewer is not None and viewer["y"] < viewport["height"] / 2, "its top is on the first screen"
    for table in ("table.result", "table.rounds"):
        below = page.locator(table).bounding_box()
        assert below is not None and below["y"] > viewer["y"] + viewer["height"], table


def test_a_new_token_fits_a_phone_and_its_copy_button_copies_it(phone: Any, served: tuple[str, Site]) -> None:
    url, _ = served
    phone.goto(f"{url}/account/tokens/")
    phone.fill("input[name=name]", "phone")
    phone.click("form.stacked button[type=submit]")
    token = phone.locator("#new-token")
    plaintext = token.text_content() or ""
    assert plaintext.startswith("sep_") and len(plaintext) > 30
    assert _on_screen(token.bounding_box())
    assert _on_screen(phone.locator("#submit-command").bounding_box())
    assert _page_width(phone) <= PHONE["width"]
    copy = phone.locator("button[data-copy='new-token']")
    assert _on_screen(copy.bounding_box())
    copy.click()
    deadline = time.monotonic() + 10  # polled from here: the page's CSP forbids wait_for_function's eval
    while copy.text_content() != "Copied" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert copy.text_content() == "Copied", "the button says it copied"
    assert phone.evaluate("navigator.clipboard.readText()") == plaintext
    revokes = phone.locator("table.tokens button.danger").all()
    assert len(revokes) == 1
    assert all(_on_screen(button.bounding_box()) for button in revokes)
    assert phone.errors == []


@pytest.mark.parametrize("address", ["/matches/", "/"])
def test_a_match_lists_every_column_is_on_a_phones_screen(
    phone: Any, served: tuple[str, Site], address: str
) -> None:
    """The long hostile bot name included: the match, game, status, finished time and seats of
    every row end inside 390 px without scrolling the page."""
    url, _ = served
    phone.goto(f"{url}{address}")
    rows = phone.locator("table.match-list tbody tr").all()
    assert len(rows) >= 2
    finished = 0
    for row in rows:
        cells = row.locator("td").all()
        assert len(cells) == 5
        for cell in cells:
            if cell.text_content().strip():
                assert _on_screen(cell.bounding_box()), cell.inner_html()
        finished += bool(row.locator("td.col-finished time").count())
    assert finished >= 2
    assert _page_width(phone) <= PHONE["width"]
    assert phone.errors == []


def test_ladders_is_a_page_of_leaders_and_the_home_page_fits_a_phone(
    served: tuple[str, Site], page: Any
) -> None:
    url, _ = served
    page.set_viewport_size(PHONE)
    response = page.goto(f"{url}/ladders/")
    assert response is not None and response.status == 200
    leaders = page.locator("article[data-game='oh-hell'] ol.leaders li")
    assert leaders.count() == 3
    leaders.first.locator("a").click()
    page.wait_for_url(f"{url}/bots/**")
    page.goto(f"{url}/")
    page.locator("header nav a", has_text="Ladders").click()
    page.wait_for_url(f"{url}/ladders/")
    page.goto(f"{url}/")
    assert page.locator("article[data-game='oh-hell'] ol.leaders li").count() == 3
    for step in ("#step-install", "#step-bot", "#step-submit"):
        assert _on_screen(page.locator(step).bounding_box()), step
    assert "septet submit bots/mine --wait" in (page.locator("#step-submit").text_content() or "")
    assert _page_width(page) <= PHONE["width"]
