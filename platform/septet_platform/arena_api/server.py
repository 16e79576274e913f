"""The Arena gRPC server: the servicer behind the input and auth interceptors, health (SERVING)
and, where settings.SEPTET_ARENA_REFLECTION allows, server reflection (on for `septet up` and
development, where grpcurl-style tools use it; off in production, where it only tells a prober
every method to try). `create_server` builds and binds it (tests start it on port 0); `serve`
runs it.

Its streams are bounded below its thread count (settings.SEPTET_ARENA_STREAMS in all,
SEPTET_ARENA_STREAMS_PER_USER per user; see `streams`), so unary calls always keep threads."""

from __future__ import annotations

from concurrent import futures

import grpc
from django.conf import settings
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from referee.botkit.protocol import arena_pb2, arena_pb2_grpc
from septet_platform.arena_api.auth import ArenaAuthInterceptor
from septet_platform.arena_api.inputs import ArenaInputInterceptor
from septet_platform.arena_api.servicer import ArenaServicer
from septet_platform.arena_api.streams import StreamLimiter
from septet_platform.bots.archives import CHUNK

ARENA_SERVICE = arena_pb2.DESCRIPTOR.services_by_name["Arena"].full_name
MAX_WORKERS = 32
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


def create_server(address: str, *, max_workers: int = MAX_WORKERS) -> tuple[grpc.Server, int]:
    """An Arena server bound to `address` ("host:port"; port 0 picks a free one), not yet
    started, and the port it is bound to. ValueError when the stream bound would leave unary calls
    no thread of their own."""
    streams = settings.SEPTET_ARENA_STREAMS
    if streams >= max_workers:
        raise ValueError(
            f"SEPTET_ARENA_STREAMS ({streams}) must be below the server's {max_workers} threads: "
            "unary calls need threads of their own"
        )
    limiter = StreamLimiter(total=streams, per_user=settings.SEPTET_ARENA_STREAMS_PER_USER)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="arena"),
        # The input check first: a malformed request is refused before any database query.
        interceptors=[ArenaInputInterceptor(), ArenaAuthInterceptor(limiter)],
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            *KEEPALIVE,
        ],
    )
    arena_pb2_grpc.add_ArenaServicer_to_server(ArenaServicer(), server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in ("", ARENA_SERVICE):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
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
