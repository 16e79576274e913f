"""Hostile bot: answers every decision with a 4 MiB reply (the referee accepts 1 MiB).

Written on the raw gRPC stubs, not the SDK, so it can break the protocol itself.
"""

import argparse
import signal
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2_grpc

from referee.botkit.protocol import bot_pb2


def decide(request: bytes, context: grpc.ServicerContext) -> bytes:
    return bot_pb2.DecideResponse(action=bot_pb2.Action(card="x" * (4 << 20))).SerializeToString()


def ack(request: bytes, context: grpc.ServicerContext) -> bytes:
    return b""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    address = parser.parse_args().address
    handler = grpc.method_handlers_generic_handler(
        "septet.v1.Bot",
        {
            "Decide": grpc.unary_unary_rpc_method_handler(decide),
            "StartMatch": grpc.unary_unary_rpc_method_handler(ack),
            "EndMatch": grpc.unary_unary_rpc_method_handler(ack),
        },
    )
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=4), options=[("grpc.max_send_message_length", 128 << 20)]
    )
    server.add_generic_rpc_handlers((handler,))
    health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), server)
    server.add_insecure_port(address)
    server.start()
    signal.signal(signal.SIGTERM, lambda *_: server.stop(0))
    server.wait_for_termination()


if __name__ == "__main__":
    main()
