"""Rewrapping a gRPC method handler, for the Arena's server interceptors (auth.py, inputs.py,
threaded.py).

grpc's ServerInterceptor returns a handler, and a handler is one of four kinds (unary or stream
in, unary or stream out) with its own constructor. An interceptor that wraps the behaviour (or
the request parser) builds the same kind again around its wrapper: `rewrapped` is that step, and
`ServiceInterceptor` the part every such interceptor shares (one service's methods only).

The Arena is a grpc.aio server: most methods are plain functions run on its thread pool
(threaded.py), Connect is a coroutine (an async generator) run on the event loop. A wrapper for
an async behaviour cannot abort through a synchronous context, so it raises `Refusal` and the
code that owns the call turns it into the status (`is_async` tells the two behaviours apart).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

Behavior = Callable[..., Any]
"""A method's implementation as grpc calls it: (request or request iterator, context)."""

_KINDS: dict[str, Callable[..., grpc.RpcMethodHandler]] = {
    "unary_unary": grpc.unary_unary_rpc_method_handler,
    "unary_stream": grpc.unary_stream_rpc_method_handler,
    "stream_unary": grpc.stream_unary_rpc_method_handler,
    "stream_stream": grpc.stream_stream_rpc_method_handler,
}


class Refusal(Exception):
    """A call refused with `code` and `details`, raised where no context can abort it (the
    coroutine methods' wrappers, and code that runs on a thread for them)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


def is_async(behavior: Behavior) -> bool:
    """True for a behaviour the event loop runs itself (a coroutine or async generator function),
    as grpc.aio tells them apart."""
    return inspect.iscoroutinefunction(behavior) or inspect.isasyncgenfunction(behavior)


def streams_requests(kind: str) -> bool:
    """True for the kinds whose implementation receives an iterator of requests."""
    return kind.startswith("stream_")


def streams_responses(kind: str) -> bool:
    """True for the kinds whose implementation returns an iterator of responses."""
    return kind.endswith("_stream")


def rewrapped(
    handler: grpc.RpcMethodHandler,
    wrap: Callable[[Behavior, str], Behavior],
    *,
    request_deserializer: Callable[[bytes], Any] | None = None,
) -> grpc.RpcMethodHandler:
    """A handler of `handler`'s kind whose implementation is wrap(implementation, kind), with
    `handler`'s response serializer and its request parser unless another is given."""
    for kind, make in _KINDS.items():
        behavior = getattr(handler, kind)
        if behavior:
            return make(
                wrap(behavior, kind),
                request_deserializer=request_deserializer or handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
    raise ValueError(f"a method handler of no known kind: {handler!r}")


class ServiceInterceptor(grpc.aio.ServerInterceptor):
    """Rewraps the handlers of one service's methods (`service`: its "/package.Service/" prefix)
    with `rewrap`; every other method, and a method no servicer has, passes untouched."""

    service: str

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or not method.startswith(self.service):
            return handler
        return self.rewrap(handler, method)

    def rewrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        raise NotImplementedError
