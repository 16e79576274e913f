"""ASGI entry point for the site (`septet up` and deploy/ alike: gunicorn with
`septet_platform.asgi_worker.SiteWorker`, i.e. uvicorn).

Two ways in, one site:
- the live streams (`/live/matches/<id>/events`, server-sent events) go to Django's ASGI handler,
  where each viewer is a coroutine waiting on Redis, not a thread (septet_platform.live_api);
- every other request (the pages, the admin, static files, a person's answers) goes to Django's
  WSGI handler on a fixed pool of threads (`PAGE_THREADS`), as gunicorn's threaded workers ran it:
  each thread keeps its database connection between requests, and a burst of page views queues
  for the pool instead of starting a thread (and a connection) per request.
"""

from __future__ import annotations

import os
from typing import Any

from a2wsgi import WSGIMiddleware
from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "septet_platform.settings.prod")

PAGE_THREADS = int(os.environ.get("SEPTET_WEB_THREADS", "4"))
"""Threads answering pages in each site process (gunicorn's gthread setting it replaces: 4
answered 50 clients with the lowest worst page p95; docs/operations.md)."""
STREAM_PREFIX = "/live/"
STREAM_SUFFIX = "/events"

streams = get_asgi_application()
pages = WSGIMiddleware(get_wsgi_application(), workers=PAGE_THREADS)


def is_stream(scope: dict[str, Any]) -> bool:
    path = str(scope.get("path", ""))
    return path.startswith(STREAM_PREFIX) and path.endswith(STREAM_SUFFIX)


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Routes a request to the stream handler or the page pool; answers the server's lifespan."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                from septet_platform.live.hub import close_hub

                await close_hub()
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] == "http" and is_stream(scope):
        await streams(scope, receive, send)
        return
    await pages(scope, receive, send)
