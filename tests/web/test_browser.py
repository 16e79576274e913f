"""The site in a real browser: Debian's chromium driven by Playwright against a live server.

The server runs in a thread of the test process (pytest-django's `live_server`), so its database
is the test's; `transactional_db` makes the rows the test writes visible to it.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from test_account import bot_archive
from web_data import SCRIPT_NAME, Site

from referee.engine.games import get_game
from referee.engine.match import play_match
from referee.engine.players import RandomPlayer
from septet_platform.accounts.models import ApiToken
from septet_platform.accounts.services import AuthenticationFailed, api_token_authenticate
from septet_platform.bots.models import BotVersion
from septet_platform.matches.models import Match
from septet_platform.matches.services import match_record

pytestmark = pytest.mark.browser

VIEWER_READY = ".septet-viewer[data-steps]"


@pytest.fixture
def errors(page: Any) -> list[str]:
    """JavaScript errors and console errors the page reports (none expected anywhere)."""
    seen: list[str] = []
    page.on("pageerror", lambda error: seen.append(str(error)))
    page.on("console", lambda message: seen.append(message.text) if message.type == "error" else None)
    page.on("dialog", lambda dialog: (seen.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    return seen


def sign_in(page: Any, url: str, username: str, password: str) -> None:
    page.goto(f"{url}/account/sign-in/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("form.stacked button[type=submit]")
    page.wait_for_url(f"{url}/account/bots/")


def test_public_pages_render_and_link_to_each_other(
    served: tuple[str, Site], page: Any, errors: list[str]
) -> None:
    url, site = served
    page.goto(url)
    assert page.locator("h1").inner_text() == "Septet"
    page.click("a[href='/ladders/oh-hell/']")
    assert page.locator("table.standings tbody tr").count() == 3
    page.click("table.standings a[href='/bots/alpha/']")
    assert page.locator("h1").inner_text() == "alpha"
    assert page.locator("svg.chart polyline").count() == 1
    page.click(f"a[href='/matches/{site.match.pk}/']")
    assert page.locator("table.result tbody tr").count() == 3
    page.goto(f"{url}/rules/oh7/")
    assert "Oh 7?" in page.locator("h1").inner_text()
    page.goto(f"{url}/matches/424242/")
    assert page.locator("h1").inner_text() == "Not found"
    assert errors == ["Failed to load resource: the server responded with a status of 404 (Not Found)"]


def test_the_match_page_loads_the_viewer_with_names_as_text(
    served: tuple[str, Site], page: Any, errors: list[str]
) -> None:
    url, site = served
    page.goto(f"{url}/matches/{site.match.pk}/")
    page.wait_for_selector(VIEWER_READY, timeout=10_000)
    viewer = page.locator(".septet-viewer")
    assert int(viewer.get_attribute("data-steps")) > 100
    assert viewer.get_attribute("data-game") == "oh-hell"
    names = page.locator(".septet-viewer [data-role=name]").all_inner_texts()
    assert f"{SCRIPT_NAME} v1" in names
    assert page.locator(".septet-viewer script").count() == 0
    assert errors == []


def test_a_running_match_page_shows_the_viewer_once_the_match_is_recorded(
    served: tuple[str, Site], page: Any, errors: list[str]
) -> None:
    url, site = served
    page.goto(f"{url}/matches/{site.running.pk}/")
    assert page.locator("#match-status").get_attribute("data-status") == "running"
    assert page.locator(".septet-viewer").count() == 0
    seats = list(site.running.seats.select_related("bot_version__bot").order_by("seat"))
    players = [RandomPlayer(random.Random(seat.seat), name=seat.bot_version.bot.name) for seat in seats]
    outcome = play_match(get_game("oh-hell"), players, seed=site.running.seed, match_id=str(site.running.pk))
    assert match_record(match_id=site.running.pk, attempt=site.running.attempt, outcome=outcome)
    page.wait_for_selector(VIEWER_READY, timeout=15_000)
    assert page.locator("#match-status").get_attribute("data-status") == "finished"
    assert page.locator("#live-table").count() == 0
    assert errors == []


def test_sign_in_create_a_token_see_it_once_and_revoke_it(
    served: tuple[str, Site], page: Any, errors: list[str]
) -> None:
    url, site = served
    sign_in(page, url, "alice", "alice-secret-pw")
    page.click("nav a[href='/account/tokens/']")
    page.fill("#id_name", "laptop")
    page.click("form.stacked button[type=submit]")
    plaintext = page.locator("#new-token").inner_text().strip()
    assert plaintext.startswith("sep_")
    assert api_token_authenticate(token=plaintext) == site.alice
    page.reload()
    assert page.locator("#new-token").count() == 0 and plaintext not in page.content()
    token = ApiToken.objects.get(user=site.alice)
    page.click(f"tr[data-prefix='{token.prefix}'] button")
    assert "Revoked the token" in page.locator(".messages").inner_text()
    with pytest.raises(AuthenticationFailed, match="revoked"):
        api_token_authenticate(token=plaintext)
    assert errors == []


def test_uploading_a_bot_folder_archive_from_the_browser_creates_a_version(
    served: tuple[str, Site], page: Any, errors: list[str], tmp_path: Path
) -> None:
    url, site = served
    archive = tmp_path / "web-upload.tar.gz"
    archive.write_bytes(bot_archive("web-upload"))
    sign_in(page, url, "bob", "bob-secret-pw")
    page.click("nav a[href='/account/upload/']")
    page.set_input_files("#id_archive", str(archive))
    page.click("form.stacked button[type=submit]")
    page.wait_for_url(f"{url}/bots/web-upload/")
    assert "it is qualifying now" in page.locator(".messages").inner_text()
    version = BotVersion.objects.get(bot__name="web-upload")
    assert version.status == BotVersion.Status.QUALIFYING and version.bot.owner == site.bob
    assert (Path(settings.SEPTET_ARCHIVES_DIR) / version.archive).read_bytes() == archive.read_bytes()
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(b"not an archive")
    page.goto(f"{url}/account/upload/")
    page.set_input_files("#id_archive", str(bad))
    page.click("form.stacked button[type=submit]")
    assert "not an archive" in page.locator(".errors").inner_text()
    assert BotVersion.objects.filter(bot__owner=site.bob).count() == 3  # beta, the script bot, web-upload
    assert Match.objects.count() == 3
    assert errors == []
