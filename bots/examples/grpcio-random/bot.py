"""grpcio-random: a Septet bot on plain grpcio, without the Python SDK (`referee.sdk`).

It serves `septet.v1.Bot` and the standard health service itself, as a bot in any language
does, and answers each `Decide` with the index of a random legal action. The message classes
are the ones generated from protos/septet/v1/bot.proto (`referee.protocol`: stubs only, no
game logic). To generate your own: python -m grpc_tools.protoc -I protos --python_out=.
--grpc_python_out=. protos/septet/v1/bot.proto

    python bot.py --address 127.0.0.1:50052        (or unix:/path/to/bot.sock)
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import threading
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from referee.protocol import bot_pb2, bot_pb2_grpc

NAME = "grpcio-random"


class RandomBot(bot_pb2_grpc.BotServicer):
    """Every RPC of septet.v1.Bot; StartMatch and EndMatch need no more than an empty answer."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def StartMatch(self, request, context):
        print(f"{NAME}: match {request.match_id}, {request.game}, seat {request.seat}", file=sys.stderr)
        return bot_pb2.StartMatchResponse()

    def Decide(self, request, context):
        # Forced decisions (one legal action) are asked too: answering index 0 is always right.
        return bot_pb2.DecideResponse(index=self.rng.randrange(len(request.legal_actions)))

    def EndMatch(self, request, context):
        return bot_pb2.EndMatchResponse()


class Named(grpc.ServerInterceptor):
    """Optional: names the bot in each answer's metadata, so tools show it rather than an address."""

    def intercept_service(self, continuation, details):
        handler = continuation(details)
        if handler is None or handler.unary_unary is None:
            return handler

        def named(request, context):
            context.send_initial_metadata((("septet-bot-name", NAME),))
            return handler.unary_unary(request, context)

        return grpc.unary_unary_rpc_method_handler(
            named, handler.request_deserializer, handler.response_serializer
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=os.environ.get("SEPTET_BOT_ADDRESS", "127.0.0.1:50052"))
    parser.add_argument("--seed", type=int, help="for a reproducible bot (default: a random one)")
    args = parser.parse_args()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), interceptors=[Named()])
    bot_pb2_grpc.add_BotServicer_to_server(RandomBot(random.Random(args.seed)), server)
    health_servicer = health.HealthServicer()
    for service in ("", "septet.v1.Bot"):  # the referee waits for SERVING before a match
        health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    if server.add_insecure_port(args.address) == 0 and not args.address.startswith("unix:"):
        sys.exit(f"{NAME}: error: cannot serve on {args.address}")
    server.start()
    print(f"serving {NAME} on {args.address}", file=sys.stderr, flush=True)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    stop.wait()
    server.stop(grace=2).wait()


if __name__ == "__main__":
    main()
