"""The Redis that carries live streams and seat answers: the Celery broker's (REDIS_URL), or
SEPTET_LIVE_REDIS_URL where an organiser gives live traffic a server of its own.

One client per process for blocking and non-blocking calls alike (redis-py's pool hands each
command its own connection, and starts afresh in a forked process); the asyncio client is one per
event loop, for the site's streaming views."""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from typing import Any

import redis
import redis.asyncio
from django.conf import settings

SOCKET_TIMEOUT = 5.0
"""Seconds a live call may wait on Redis (a blocking read waits less: live.relay, live.streams)."""
ASYNC_CONNECTIONS = 512
"""Connections a site process keeps to the live Redis at most: one per stream it follows (each
waits in a blocking read) and a few for the viewers joining. Past it a call waits for a free one
(`POOL_WAIT_SECONDS`) instead of failing: 500 viewers opening their streams at once once took all
of redis-py's default 100 and each then retried half a second later."""
POOL_WAIT_SECONDS = 10.0
BLOCKING_READ_TIMEOUT = 30.0
"""The site's asyncio client waits on blocking reads (live.hub: 5 s each) up to this long; without
it redis-py would use the connect timeout for reads too, and cut every blocking read short."""

_lock = threading.Lock()
_clients: dict[tuple[int, str], redis.Redis] = {}
_async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, redis.asyncio.Redis] = (
    weakref.WeakKeyDictionary()
)


def live_redis_url() -> str:
    """The live Redis as a redis-py URL (kombu's `redis+socket://PATH` becomes `unix://PATH`)."""
    url = str(getattr(settings, "SEPTET_LIVE_REDIS_URL", "") or settings.CELERY_BROKER_URL)
    if url.startswith("redis+socket://"):
        return "unix://" + url.removeprefix("redis+socket://")
    return url


def key_prefix() -> str:
    """What every live key starts with (settings.SEPTET_LIVE_PREFIX, `septet:`): platforms that
    share a Redis, or test runs, keep apart by giving each its own."""
    return str(getattr(settings, "SEPTET_LIVE_PREFIX", "") or "septet:")


def live_redis() -> redis.Redis:
    """This process's client of the live Redis (made on first use; one per forked process)."""
    key = (os.getpid(), live_redis_url())
    client = _clients.get(key)
    if client is None:
        with _lock:
            client = _clients.get(key)
            if client is None:
                client = redis.Redis.from_url(
                    key[1],
                    socket_timeout=SOCKET_TIMEOUT,
                    socket_connect_timeout=SOCKET_TIMEOUT,
                    health_check_interval=30,
                )
                _clients[key] = client
    return client


def live_redis_async() -> redis.asyncio.Redis:
    """The running event loop's asyncio client of the live Redis (its blocking reads wait on the
    server without a thread each)."""
    loop = asyncio.get_running_loop()
    client = _async_clients.get(loop)
    if client is None:
        pool = redis.asyncio.BlockingConnectionPool.from_url(
            live_redis_url(),
            max_connections=ASYNC_CONNECTIONS,
            timeout=POOL_WAIT_SECONDS,
            socket_connect_timeout=SOCKET_TIMEOUT,
            socket_timeout=BLOCKING_READ_TIMEOUT,
            health_check_interval=30,
        )
        client = redis.asyncio.Redis(connection_pool=pool)
        _async_clients[loop] = client
    return client


def forget_clients() -> None:
    """Drops this process's clients (tests that point the live Redis elsewhere)."""
    with _lock:
        _clients.clear()
    _async_clients.clear()


def decoded(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
