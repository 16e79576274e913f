"""A bot that plays legally (the first legal action) and then misbehaves as told.

Written against the raw gRPC stubs, not the SDK, so it can also break the protocol itself
(bytes that are no protobuf, oversized replies). Used by tests/bots/test_failures.py:

    python misbehave.py --address unix:/tmp/x.sock --behaviour crash --after 5
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from referee.botkit.protocol import bot_pb2

BEHAVIOURS = (
    "ok", "crash", "hang", "raise", "garbage-bytes", "oversized", "out-of-range", "illegal-value",
    "empty", "slow", "never-healthy", "exit-at-start", "killed", "no-health", "wrong-address",
)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--behaviour", choices=BEHAVIOURS, required=True)
    parser.add_argument("--after", type=int, default=3, help="decisions answered well first")
    parser.add_argument("--sleep", type=float, default=0.3, help="seconds per decision when slow")
    args = parser.parse_args()
    if args.behaviour == "exit-at-start":
        print("cannot find my model weights", file=sys.stderr)
        sys.exit(7)

    answered = 0
    lock = threading.Lock()

    def decide(request: bot_pb2.DecideRequest, context: grpc.ServicerContext) -> bytes:
        nonlocal answered
        with lock:
            answered += 1
            misbehave = answered > args.after
        good = bot_pb2.DecideResponse(index=0).SerializeToString()
        if not misbehave or args.behaviour == "ok":
            return good
        behaviour = args.behaviour
        if behaviour == "crash":
            print("out of memory in my lookup table", file=sys.stderr, flush=True)
            os._exit(3)
        if behaviour == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        if behaviour == "hang":
            time.sleep(3600)
        if behaviour == "raise":
            raise RuntimeError("my policy network diverged")
        if behaviour == "garbage-bytes":
            return b"\xff\xfe\xfd not a protobuf"
        if behaviour == "oversized":
            return bot_pb2.DecideResponse(action=bot_pb2.Action(card="x" * (2 << 20))).SerializeToString()
        if behaviour == "out-of-range":
            return bot_pb2.DecideResponse(index=len(request.legal_actions) + 5).SerializeToString()
        if behaviour == "illegal-value":
            return bot_pb2.DecideResponse(action=bot_pb2.Action(card="ZZ")).SerializeToString()
        if behaviour == "empty":
            return bot_pb2.DecideResponse().SerializeToString()
        if behaviour == "slow":
            if answered <= args.after + 3:
                time.sleep(args.sleep)
            return good
        return good

    def ack(request: bytes, context: grpc.ServicerContext) -> bytes:
        return b""

    handler = grpc.method_handlers_generic_handler(
        "septet.v1.Bot",
        {
            "Decide": grpc.unary_unary_rpc_method_handler(
                decide, request_deserializer=bot_pb2.DecideRequest.FromString, response_serializer=lambda b: b
            ),
            "StartMatch": grpc.unary_unary_rpc_method_handler(ack),
            "EndMatch": grpc.unary_unary_rpc_method_handler(ack),
        },
    )
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=8),
        options=[("grpc.max_send_message_length", 8 << 20)],
    )
    server.add_generic_rpc_handlers((handler,))
    health_servicer = health.HealthServicer()
    if args.behaviour != "no-health":
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    server.add_insecure_port("127.0.0.1:0" if args.behaviour == "wrong-address" else args.address)
    server.start()
    # The health servicer starts SERVING for "": a bot that never gets ready says so.
    ready = args.behaviour != "never-healthy"
    status = health_pb2.HealthCheckResponse.SERVING if ready else health_pb2.HealthCheckResponse.NOT_SERVING
    health_servicer.set("", status)
    print(f"misbehave {args.behaviour} serving on {args.address}", file=sys.stderr)
    signal.signal(signal.SIGTERM, lambda *_: server.stop(0))
    server.wait_for_termination()


if __name__ == "__main__":
    main()
