"""The site's gunicorn worker: uvicorn (ASGI) with a short graceful stop.

A live stream never ends by itself while its match plays, so a stopping worker would otherwise
wait for every viewer to leave (gunicorn's graceful timeout, then a kill). Viewers are cut after
`STOP_SECONDS` instead; their browsers reconnect to another worker and resume where they were.
"""

from __future__ import annotations

from typing import Any

from uvicorn_worker import UvicornWorker

STOP_SECONDS = 3


class SiteWorker(UvicornWorker):
    CONFIG_KWARGS: dict[str, Any] = {
        "loop": "auto",
        "http": "auto",
        "lifespan": "on",
        "timeout_graceful_shutdown": STOP_SECONDS,
    }
