"""The Arena gRPC server: the servicer behind the thread, input and auth interceptors, health
(SERVING) and, where settings.SEPTET_ARENA_REFLECTION allows, server reflection (on for `septet up`
and development, where grpcurl-style tools use it; off in production, where it only tells a prober
every method to try). `create_server` builds and binds it (tests start it on port 0); `serve`
runs it.

It is a grpc.aio server on an event loop of its own thread (`ArenaServer`, which keeps the
start/stop/wait of a thread-per-call grpc.Server for its callers): a self-hosted bot's Connect
stream lasts as long as the bot is connected, and as a coroutine it holds no thread, so one
process serves settings.SEPTET_ARENA_CONNECTIONS of them. Every other method runs on the server's
thread pool as before (threaded.py). Its thread-holding streams (FollowMatch, GetReplay) are
bounded below the thread count (settings.SEPTET_ARENA_STREAMS in all,
SEPTET_ARENA_STREAMS_PER_USER per user; see `streams`), so unary calls always keep threads."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from concurrent import futures
from typing import Any, TypeVar

import grpc
from django.conf import settings
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

try:
    import uvloop
except ImportError:  # pragma: no cover - a platform without it runs asyncio's own loop
    uvloop = None  # type: ignore[assignment]

from referee.botkit.protocol import arena_pb2, arena_pb2_grpc
from septet_platform.arena_api.auth import SERVICE, ArenaAuthInterceptor
from septet_platform.arena_api.inputs import ArenaInputInterceptor
from septet_platform.arena_api.servicer import ArenaServicer
from septet_platform.arena_api.streams import StreamLimiter
from septet_platform.arena_api.threaded import ThreadedInterceptor
from septet_platform.bots.archives import CHUNK

_T = TypeVar("_T")
ARENA_SERVICE = arena_pb2.DESCRIPTOR.services_by_name["Arena"].full_name
MAX_WORKERS = 32
ENDINGS_SECONDS = 3.0
"""How long a stopping server waits for its ended calls' cleanup (above the inbox wait's 1 s)."""
KEEPALIVE = (
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 5_000),
    ("grpc.http2.max_ping_strikes", 2),
)
"""The server pings a quiet connection (a self-hosted bot's Connect stream between matches) every
20 s and drops it after 10 s without an answer; a client may ping every 5 s at most, or is cut
off after two strikes (docs/self-hosted.md)."""
# A SubmitBot chunk or a replay chunk is small; this bounds any one message with room to spare.
MAX_MESSAGE_BYTES = 4 * 1024 * 1024 + CHUNK


class ArenaServer:
    """A grpc.aio Arena server running on an event loop of its own thread, driven from plain
    threads (the management command, tests) as a grpc.Server is: `start`, `stop(grace).wait()`,
    `wait_for_termination`."""

    def __init__(self, pool: futures.ThreadPoolExecutor) -> None:
        self._pool = pool
        # uvloop (a dependency already, uvicorn's) where it imports: the Connect sessions' tasks,
        # queues and sockets cost less on it than on asyncio's own loop.
        self._loop = uvloop.new_event_loop() if uvloop is not None else asyncio.new_event_loop()
        # The connection log and Connect's token check go to the same pool (asyncio.to_thread).
        self._loop.set_default_executor(pool)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arena-loop", daemon=True)
        self._thread.start()
        self._server: grpc.aio.Server | None = None

    def _run(self) -> None:
        try:
            self._loop.run_forever()
        finally:
            # The calls' own endings (stream slots, connection logs, database connections) are
            # done on the pool's threads before anyone is told the server stopped.
            self._pool.shutdown(wait=True, cancel_futures=False)
            self._loop.close()
            self._stopped.set()

    def run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        """Runs `coroutine` on the server's loop and returns its result (from any other thread)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    @property
    def server(self) -> grpc.aio.Server:
        assert self._server is not None
        return self._server

    def start(self) -> None:
        self.run(self.server.start())

    def stop(self, grace: float | None) -> threading.Event:
        """Stops taking calls, ends those still running after `grace` seconds (at once for
        None), lets their endings finish, then stops the loop and the pool; the event is set once
        all that is done."""
        if not self._stopped.is_set() and self._loop.is_running():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                asyncio.run_coroutine_threadsafe(self._stop(grace), self._loop)
        return self._stopped

    async def _stop(self, grace: float | None) -> None:
        try:
            if self._server is not None:
                await self._server.stop(grace)
            # Ended calls finish their `finally` (a Connect session drops its connection record and
            # writes its log line; its inbox wait gives back a handle within a second).
            others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            if others:
                await asyncio.wait(others, timeout=ENDINGS_SECONDS)
        finally:
            self._loop.stop()

    def wait_for_termination(self, timeout: float | None = None) -> bool:
        """Blocks until the server stopped (True) or `timeout` seconds passed (False)."""
        return self._stopped.wait(timeout)


def create_server(address: str, *, max_workers: int = MAX_WORKERS) -> tuple[ArenaServer, int]:
    """An Arena server bound to `address` ("host:port"; port 0 picks a free one), not yet
    started, and the port it is bound to. ValueError when the stream bound would leave unary calls
    no thread of their own."""
    streams = settings.SEPTET_ARENA_STREAMS
    if streams >= max_workers:
        raise ValueError(
            f"SEPTET_ARENA_STREAMS ({streams}) must be below the server's {max_workers} threads: "
            "unary calls need threads of their own"
        )
    pool = futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="arena")
    arena = ArenaServer(pool)
    try:
        arena._server, port = arena.run(_built(address, pool))
    except BaseException:
        arena.stop(grace=None).wait()
        raise
    return arena, port


async def _built(address: str, pool: futures.ThreadPoolExecutor) -> tuple[grpc.aio.Server, int]:
    """The grpc.aio server, made on the loop that will run it (grpc.aio binds it to that loop)."""
    limiter = StreamLimiter(
        total=settings.SEPTET_ARENA_STREAMS, per_user=settings.SEPTET_ARENA_STREAMS_PER_USER
    )
    connections = StreamLimiter(
        total=settings.SEPTET_ARENA_CONNECTIONS, per_user=settings.SEPTET_ARENA_STREAMS_PER_USER
    )
    server = grpc.aio.server(
        # Outermost the threads (a plain method runs on the pool, its checks with it), then the
        # input check: a malformed request is refused before any database query.
        interceptors=[
            ThreadedInterceptor(SERVICE, pool),
            ArenaInputInterceptor(),
            ArenaAuthInterceptor(limiter, connections),
        ],
        migration_thread_pool=pool,
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            *KEEPALIVE,
        ],
    )
    arena_pb2_grpc.add_ArenaServicer_to_server(ArenaServicer(), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in ("", ARENA_SERVICE):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    if settings.SEPTET_ARENA_REFLECTION:
        reflection.enable_server_reflection(
            (ARENA_SERVICE, health.SERVICE_NAME, reflection.SERVICE_NAME), server
        )
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"could not bind the Arena service to {address}")
    return server, port


def serve(address: str) -> None:
    """Runs the Arena service on `address` until interrupted."""
    server, port = create_server(address)
    server.start()
    print(f"Arena service listening on port {port}", flush=True)
    try:
        server.wait_for_termination()
    except KeyboardInterrupt:
        server.stop(grace=2).wait()
