"""Issue 18, item 5: the site says where the Arena is (a setting, else the page's host on the
Arena's port) with a copyable submit command on the token page; a bot page follows a qualifying
version through a JSON endpoint that tells the reason of a failure to its owner only; the
manifest's description is shown."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from web_data import Site, version_make

from septet_platform.bots.models import BotVersion
from septet_platform.web.selectors import ARENA_PORT, arena_address

pytestmark = pytest.mark.django_db


def _text(response: Any) -> str:
    return response.content.decode()


@pytest.mark.parametrize(
    ("host", "expected"),
    [("septet.example:8000", f"septet.example:{ARENA_PORT}"), ("127.0.0.1", f"127.0.0.1:{ARENA_PORT}"),
     ("[::1]:8000", f"[::1]:{ARENA_PORT}")],
)  # fmt: skip
def test_the_arena_address_defaults_to_the_pages_host_on_the_arena_port(host: str, expected: str) -> None:
    assert arena_address(request_host=host) == expected


def test_the_token_page_shows_the_configured_arena_and_a_submit_command_to_copy(
    client: Client, site: Site, settings: Any
) -> None:
    settings.SEPTET_ARENA_ADDRESS = "arena.septet.example:443"
    client.force_login(site.alice)
    page = _text(client.get("/account/tokens/"))
    assert "septet submit --server arena.septet.example:443 --token sep_... bots/mine --wait" in page
    assert 'data-copy="submit-template"' in page and "/static/web/copy.js" in page and "<script>" not in page
    created = client.post("/account/tokens/", {"name": "laptop"}, follow=True)
    assert "septet submit --server arena.septet.example:443 --token sep_" in _text(created)
    assert "sep_..." in _text(created) and 'id="submit-command"' in _text(created)


def test_the_home_page_names_the_arena_of_the_host_it_was_asked_for(client: Client, site: Site) -> None:
    page = _text(client.get("/", HTTP_HOST="localhost:8000"))
    assert f"export SEPTET_SERVER=localhost:{ARENA_PORT}" in page


def test_a_qualifying_version_is_followed_live_and_its_failure_reason_is_the_owners(
    client: Client, site: Site
) -> None:
    """alpha v3 qualifies: the page carries the polling script and the status URL; the JSON says
    qualifying, then (failed) the reason to alice only, never to bob or an anonymous visitor."""
    qualifying = version_make(site.alice, "alpha", number=3, status=BotVersion.Status.QUALIFYING)
    page = _text(client.get("/bots/alpha/"))
    assert 'id="qualification"' in page and 'data-status-url="/bots/alpha/v3/status.json"' in page
    assert "/static/web/qualification.js" in page
    state = client.get("/bots/alpha/v3/status.json")
    assert state["Cache-Control"] == "no-store"
    assert state.json() == {
        "bot": "alpha", "number": 3, "status": "qualifying", "label": "Qualifying", "done": False,
        "reason": "",
    }  # fmt: skip
    BotVersion.objects.filter(pk=qualifying.pk).update(
        status=BotVersion.Status.FAILED, error_log="qualification: crashed: ImportError: torch"
    )
    assert client.get("/bots/alpha/v3/status.json").json()["reason"] == ""
    client.force_login(site.bob)
    assert client.get("/bots/alpha/v3/status.json").json() == {
        "bot": "alpha", "number": 3, "status": "failed", "label": "Failed", "done": True, "reason": "",
    }  # fmt: skip
    client.force_login(site.alice)
    assert (
        client.get("/bots/alpha/v3/status.json").json()["reason"]
        == "qualification: crashed: ImportError: torch"
    )
    assert 'id="qualification"' not in _text(client.get("/bots/alpha/"))
    assert client.get("/bots/alpha/v9/status.json").status_code == 404
    assert client.get("/bots/nobody/v1/status.json").status_code == 404


def test_the_manifests_description_is_on_the_bot_page_escaped(client: Client, site: Site) -> None:
    owner = User.objects.get(username="alice")
    version = version_make(owner, "described")
    BotVersion.objects.filter(pk=version.pk).update(
        manifest={**version.manifest, "description": "Counts trumps. <img src=x onerror=alert(1)>"}
    )
    page = _text(client.get("/bots/described/"))
    assert "Counts trumps. &lt;img src=x onerror=alert(1)&gt;" in page and "<img src=x" not in page
