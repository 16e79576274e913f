"""Whole public pages for anonymous visitors, kept a few seconds in a cache all site processes share.

Under load most views of the home page, a ladder or a popular bot are the same anonymous page made
again; the page is made once per SEPTET_PAGE_CACHE_SECONDS (0 turns this off) and served from the
`pages` cache (Redis under `septet up` and in production) meanwhile, so a new result shows within
that time.

What can never leak: a page is stored and served only for a request that carries no session (so
nobody is signed in, and no message is waiting for them) and no messages cookie. A signed-in
owner's page, with their forfeit reasons, logs and unpublished details, is made for them on every
view and never stored, and what an anonymous visitor is shown is what the page shows anyone
(matches.selectors' secrecy rules give an anonymous viewer no owned seat). Only a complete 200
answer that sets no cookie and does not ask to stay private is stored. The key is the address as
asked (scheme, host, path and query): a page names the host it was asked for (the Arena address).

A cache that fails (the embedded Redis restarting, say) costs nothing but the saving: the page is
made as if nothing had been kept.

On Redis the cache is `SharedPageCache`: Django's Redis cache, keeping its redis-py client. Django
makes a new `redis.Redis` for every operation, and redis-py fills about 170 response callbacks into
each: 0.15 ms of CPU, most of a miss, paid on nearly every view of a site whose visitors spread
over thousands of pages.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections.abc import Callable
from typing import Any, TypeVar, cast

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.http import HttpRequest, HttpResponse

CACHE_ALIAS = "pages"
KEY_PREFIX = "septet-page:"
MESSAGES_COOKIE = "messages"
"""django.contrib.messages' cookie: a message waiting for this visitor makes their page their own."""

logger = logging.getLogger(__name__)

View = TypeVar("View", bound=Callable[..., HttpResponse])


def page_seconds() -> int:
    """How long an anonymous page is kept (SEPTET_PAGE_CACHE_SECONDS; 0 or less: not at all)."""
    return int(getattr(settings, "SEPTET_PAGE_CACHE_SECONDS", 0) or 0)


def shared_with_anonymous(request: HttpRequest) -> bool:
    """True when `request` may be answered with, and its answer stored as, the page anyone gets."""
    if request.method != "GET":
        return False
    if settings.SESSION_COOKIE_NAME in request.COOKIES or MESSAGES_COOKIE in request.COOKIES:
        return False
    user = getattr(request, "user", None)
    return user is None or not user.is_authenticated


def page_key(request: HttpRequest) -> str:
    address = f"{request.scheme}://{request.get_host()}{request.get_full_path()}"
    return KEY_PREFIX + hashlib.sha256(address.encode()).hexdigest()


def storable(response: HttpResponse) -> bool:
    """A complete 200 page that sets no cookie and is not marked private or uncacheable."""
    if response.status_code != 200 or response.streaming or response.cookies:
        return False
    control = response.get("Cache-Control", "")
    return "private" not in control and "no-store" not in control


def anonymous_page_cache(view: View) -> View:
    """Serves `view`'s anonymous page from the shared cache while it is fresh (see the module)."""

    @functools.wraps(view)
    def cached_view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        seconds = page_seconds()
        if seconds <= 0 or not shared_with_anonymous(request):
            return view(request, *args, **kwargs)
        key = page_key(request)
        kept = _cache_get(key)
        if kept is not None:
            content, content_type = kept
            return HttpResponse(content, content_type=content_type)
        response = view(request, *args, **kwargs)
        if storable(response):
            _cache_set(key, (response.content, response["Content-Type"]), seconds)
        return response

    return cast(View, cached_view)


def _cache_get(key: str) -> tuple[bytes, str] | None:
    try:
        kept = caches[CACHE_ALIAS].get(key)
    except Exception as error:  # whatever the cache backend raises, only the saving is lost
        logger.warning("page cache unavailable, page made afresh: %s", error)
        return None
    if not (isinstance(kept, tuple) and len(kept) == 2):
        return None
    return cast(tuple[bytes, str], kept)


def _cache_set(key: str, value: tuple[bytes, str], seconds: int) -> None:
    try:
        caches[CACHE_ALIAS].set(key, value, timeout=seconds)
    except Exception as error:  # whatever the cache backend raises, only the saving is lost
        logger.warning("page cache unavailable, page not kept: %s", error)


class _KeptClient(RedisCacheClient):
    """Django's Redis cache client with one redis-py client per connection pool, made once (a
    redis.Redis over a pool is safe to share between threads; the pool hands each command its own
    connection and starts afresh in a forked process)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients.setdefault(id(pool), self._client(connection_pool=pool))
        return client


class SharedPageCache(RedisCache):
    """The `pages` cache on Redis (settings.CACHES): Django's RedisCache with `_KeptClient`."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _KeptClient
