"""ASGI entry point for the site (`septet up` and deploy/ alike: gunicorn with
`septet_platform.asgi_worker.SiteWorker`, i.e. uvicorn).

Two ways in, one site:
- the live streams (`/live/matches/<id>/events`, server-sent events) go to Django's ASGI handler,
  where each viewer is a coroutine waiting on Redis, not a thread (septet_platform.live_api);
- every other request (the pages, the admin, static files, a person's answers) goes to Django's
  WSGI handler on a fixed pool of threads (`PAGE_THREADS`), as gunicorn's threaded workers ran it:
  each thread keeps its database connection between requests, and a burst of page views queues
  for the pool instead of starting a thread (and a connection) per request.

A page is handed to its thread once and back once (`Pages`): the event loop reads the request's
body, the whole WSGI call (middleware, view, the response's body) runs on the page thread, and the
loop sends the bytes. a2wsgi's WSGIMiddleware (whose environ builder this uses) instead blocks the
page thread on the loop for every message of the response: benchmarks/web_load.py measured 5.5-6.5
ms of CPU a page through it against 4.2-4.6 ms this way, as gunicorn's threads took.
"""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from a2wsgi.wsgi import build_environ
from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "septet_platform.settings.prod")

PAGE_THREADS = int(os.environ.get("SEPTET_WEB_THREADS", "4"))
"""Threads answering pages in each site process (gunicorn's gthread setting it replaces: 4
answered 50 clients with the lowest worst page p95; docs/operations.md)."""
MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest request body a page is given (a bot archive uploaded from the site is at most
20 MiB): a larger one is refused (413) before it is read whole into memory."""
STREAM_PREFIX = "/live/"
STREAM_SUFFIX = "/events"

Wsgi = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class Pages:
    """Django's WSGI handler inside the ASGI server, on a fixed pool of threads, one hand-off
    each way per request (see the module docstring)."""

    def __init__(self, app: Wsgi, threads: int) -> None:
        self.app = app
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="septet-page")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > MAX_BODY_BYTES:
                await _answer(send, 413, [(b"content-type", b"text/plain")], b"request body too large\n")
                return
        environ = build_environ(scope, io.BytesIO(bytes(body)))  # type: ignore[arg-type]
        loop = asyncio.get_running_loop()
        status, headers, content = await loop.run_in_executor(self.pool, self._call, environ)
        await _answer(send, status, headers, content)

    def _call(self, environ: dict[str, Any]) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """The whole WSGI call on a page thread: its status, headers and body."""
        started: list[Any] = []
        written: list[bytes] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            started[:] = [status, headers]
            return written.append

        result = self.app(environ, start_response)
        try:
            written.extend(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        status, headers = started
        encoded = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]
        return int(status.split(" ", 1)[0]), encoded, b"".join(written)


async def _answer(send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


streams = get_asgi_application()
pages = Pages(get_wsgi_application(), PAGE_THREADS)


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
    if scope["type"] != "http":  # a WebSocket: the site speaks none (uvicorn refuses it)
        return
    if is_stream(scope):
        await streams(scope, receive, send)
        return
    await pages(scope, receive, send)
