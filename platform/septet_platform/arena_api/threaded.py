"""The Arena's plain (synchronous) methods on a grpc.aio server: each runs on a thread of the
server's pool exactly as it did on the thread-per-call server.

The Arena is a grpc.aio server so that a self-hosted bot's Connect stream, which lasts as long as
the bot is connected, is a coroutine on the event loop and holds no thread (arena_api.connect).
Every other method is database work written for a thread, and stays so. grpc.aio can run plain
methods on a thread pool itself, but its stand-in context lacks `is_active` (FollowMatch polls it),
never calls `add_callback` callbacks of a stream, and steps a streaming method's generator on
whichever pool thread is free, so the thread-local database connection and context variables of
one call would be spread over several threads. `ThreadedInterceptor` (outermost) therefore wraps
each plain Arena method in a coroutine of its own making:

- a unary method runs on a pool thread with a `ThreadContext`, whose `abort` raises `Aborted`
  (the coroutine then aborts the call with that status, as the synchronous server would have);
- a streaming method's generator runs from its first step to its end on one pool thread, handing
  each response to the event loop through a queue of one (so a slow reader slows the generator,
  as before); when the call ends, `is_active` turns False and its callbacks run;
- a streamed request (SubmitBot's chunks) is read for the thread from the event loop, one message
  at a time.

So a FollowMatch or GetReplay still holds a thread while it streams, and the streams' bound below
the thread count (streams.py, server.py) still holds.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent import futures
from typing import Any, NoReturn

import grpc

from septet_platform.arena_api.handlers import Behavior, ServiceInterceptor, is_async, rewrapped

HANDOFF_POLL_SECONDS = 1.0
"""How often a method's thread, waiting on the event loop (a response taken, a request read),
checks whether the call or the server has ended meanwhile."""


class Aborted(Exception):
    """A plain method aborted its call: the coroutine around it ends the call with this status."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class ThreadContext:
    """The context a plain method sees on its thread: the synchronous server's, as far as the
    Arena uses it, over the call's grpc.aio context."""

    def __init__(self, context: grpc.aio.ServicerContext) -> None:
        self._context = context
        self._active = True
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def abort(self, code: grpc.StatusCode, details: str = "") -> NoReturn:
        raise Aborted(code, details)

    def is_active(self) -> bool:
        return self._active

    def add_callback(self, callback: Callable[[], None]) -> bool:
        with self._lock:
            if self._active:
                self._callbacks.append(callback)
                return True
        return False

    def invocation_metadata(self) -> Any:
        return self._context.invocation_metadata()

    def peer(self) -> str:
        return self._context.peer()

    def time_remaining(self) -> float | None:
        return self._context.time_remaining()

    def set_code(self, code: grpc.StatusCode) -> None:
        self._context.set_code(code)

    def set_details(self, details: str) -> None:
        self._context.set_details(details)

    def set_trailing_metadata(self, metadata: Any) -> None:
        self._context.set_trailing_metadata(metadata)

    def ended(self) -> None:
        """The call is over: `is_active` turns False and the callbacks run (once)."""
        with self._lock:
            self._active = False
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()


class _Failed:
    """A streaming method raised something other than an abort: re-raised on the event loop."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


_END = object()


def _unary(behavior: Behavior, pool: futures.Executor, streamed: bool) -> Behavior:
    async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
        loop = asyncio.get_running_loop()
        thread_context = ThreadContext(context)
        argument = _blocking(request, loop) if streamed else request
        try:
            return await loop.run_in_executor(pool, behavior, argument, thread_context)
        except Aborted as aborted:
            await context.abort(aborted.code, aborted.details)
        finally:
            thread_context.ended()

    return call


def _streaming(behavior: Behavior, pool: futures.Executor, streamed: bool) -> Behavior:
    async def call(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        loop = asyncio.get_running_loop()
        thread_context = ThreadContext(context)
        handoff: asyncio.Queue[Any] = asyncio.Queue(maxsize=1)
        argument = _blocking(request, loop) if streamed else request

        def deliver(item: Any) -> bool:
            """Hands `item` to the reader; False once the call ended and nobody will take it."""
            if not loop.is_running():  # the server stopped: nobody will take it
                return False
            put = asyncio.run_coroutine_threadsafe(handoff.put(item), loop)
            while True:
                try:
                    put.result(timeout=HANDOFF_POLL_SECONDS)
                    return True
                except futures.TimeoutError:
                    if not thread_context.is_active() or not loop.is_running():
                        put.cancel()
                        return False

        def produce() -> None:
            responses: Iterator[Any] | None = None
            try:
                # Inside the try: a wrapper may abort before there is a generator (a request that
                # did not parse), and the reader must hear of it either way.
                responses = behavior(argument, thread_context)
                for response in responses:
                    if not deliver(response):
                        return
                deliver(_END)
            except Aborted as aborted:
                deliver(aborted)
            except Exception as error:  # re-raised on the loop: grpc reports it as for any method
                deliver(_Failed(error))
            finally:
                close = getattr(responses, "close", None)
                if close is not None:
                    close()  # the generator's own cleanup (stream slot, database) on its thread

        producing = loop.run_in_executor(pool, produce)
        try:
            while True:
                item = await handoff.get()
                if item is _END:
                    break
                if isinstance(item, Aborted):
                    await context.abort(item.code, item.details)
                if isinstance(item, _Failed):
                    raise item.error
                yield item
            await producing
        finally:
            thread_context.ended()

    return call


def _blocking(requests: AsyncIterator[Any], loop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    """A streamed request read for a thread: each message is awaited on the event loop."""
    iterator = requests.__aiter__()

    async def next_message() -> Any:
        return await iterator.__anext__()

    while True:
        reading = asyncio.run_coroutine_threadsafe(next_message(), loop)
        while True:
            try:
                message = reading.result(timeout=HANDOFF_POLL_SECONDS)
                break
            except StopAsyncIteration:
                return
            except futures.TimeoutError:
                if not loop.is_running():  # the server stopped: the thread must not wait forever
                    reading.cancel()
                    raise Aborted(grpc.StatusCode.UNAVAILABLE, "the server is stopping") from None
        yield message


class ThreadedInterceptor(ServiceInterceptor):
    """Runs the plain methods of `service` on `pool` (see the module docstring); coroutine
    methods, and other services (health and reflection, themselves coroutines), pass untouched."""

    def __init__(self, service: str, pool: futures.Executor) -> None:
        self.service = service
        self.pool = pool

    def rewrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        def wrap(behavior: Behavior, kind: str) -> Behavior:
            if is_async(behavior):
                return behavior
            streamed = kind.startswith("stream_")
            if kind.endswith("_stream"):
                return _streaming(behavior, self.pool, streamed)
            return _unary(behavior, self.pool, streamed)

        return rewrapped(handler, wrap)
