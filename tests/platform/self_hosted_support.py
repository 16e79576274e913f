"""A self-hosted bot's end of the Arena's Connect stream, driven by a test on its own thread: the
client the platform tests use in place of `septet bot connect` (which the start tests run)."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

import grpc

from referee.botkit.protocol import arena_pb2, arena_pb2_grpc, bot_pb2


class BotClient:
    """A self-hosted bot's end of one Connect call, driven by the test."""

    def __init__(self, channel: grpc.Channel, token: str) -> None:
        self._requests: queue.Queue[arena_pb2.ConnectRequest | None] = queue.Queue()
        stub = arena_pb2_grpc.ArenaStub(channel)
        self.call = stub.Connect(
            iter(self._requests.get, None), metadata=(("authorization", f"Bearer {token}"),)
        )

    def next(self) -> arena_pb2.ConnectResponse:
        return next(self.call)

    def send(self, seat: str, answer: bot_pb2.PlayResponse) -> None:
        self._requests.put(arena_pb2.ConnectRequest(seat=seat, answer=answer))

    def close(self) -> None:
        self._requests.put(None)

    def status(self) -> grpc.StatusCode:
        """The code the call ended with (read to its end)."""
        try:
            for _ in self.call:
                pass
        except grpc.RpcError as error:
            return error.code()  # type: ignore[no-any-return]
        return grpc.StatusCode.OK


def play_seats(client: BotClient, stop: threading.Event, answered: list[str]) -> None:
    """The self-hosted bot: answers every request of every seat it is given (the first legal
    action), until `stop` is set (then it goes silent, as a machine that died would)."""
    while not stop.is_set():
        try:
            message = client.next()
        except (grpc.RpcError, StopIteration):
            return
        if stop.is_set():
            return
        if not message.HasField("request"):
            continue
        request = message.request.request
        kind = request.WhichOneof("message")
        if kind == "start":
            client.send(message.request.seat, bot_pb2.PlayResponse(started=bot_pb2.StartMatchResponse()))
        elif kind == "decide":
            client.send(message.request.seat, bot_pb2.PlayResponse(decision=bot_pb2.DecideResponse(index=0)))
        else:
            client.send(message.request.seat, bot_pb2.PlayResponse(ended=bot_pb2.EndMatchResponse()))
        answered.append(kind or "")


def wait_for(condition: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
