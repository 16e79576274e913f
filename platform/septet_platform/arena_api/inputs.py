"""What an Arena request may hold, checked before any method runs: a clear INVALID_ARGUMENT for
anything else, never INTERNAL or UNKNOWN with a Python message, and nothing changed.

`ArenaInputInterceptor` wraps every Arena method handler (outside the auth interceptor, so a bad
request costs no database query):

- Bytes that do not parse as the method's request message. grpc's server deserializes in its own
  code, where an exception becomes INTERNAL "Exception deserializing request!"; here the wrapped
  deserializer returns an `Unparsable` in its place and the method answers INVALID_ARGUMENT.
- Every string field, nested messages' too (seats), is bounded (`MAX_TEXT`: no name this server
  stores is longer; `page_token` its own `selectors.MAX_PAGE_TOKEN`) and holds no control character (a NUL
  is refused by PostgreSQL with a ValueError; a newline forges log lines).
- Ids (`match_id`, `challenge_id`) are positive: no row has id 0 or below.

Counts and choices that depend on the data (page_size, status, sets, seats, versions) are checked
where they are used (selectors.matches_page, challenges.services.challenge_request), with their own
reasons.
"""

from __future__ import annotations

import inspect
import unicodedata
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from septet_platform.arena_api.auth import SERVICE
from septet_platform.arena_api.handlers import (
    Refusal,
    ServiceInterceptor,
    is_async,
    rewrapped,
    streams_requests,
)
from septet_platform.arena_api.selectors import BAD_PAGE_TOKEN, MAX_PAGE_TOKEN

MAX_TEXT = 150
"""Characters of any string field: a username's length, the longest name this server stores."""
POSITIVE_IDS = frozenset({"match_id", "challenge_id"})


class BadInput(ValueError):
    """A request field out of range; the message says which and why, on one line."""


@dataclass(frozen=True)
class Unparsable:
    """Stands in for a request whose bytes did not parse; `reason` says so on one line."""

    reason: str


def _parsing(deserializer: Callable[[bytes], Any] | None, method: str) -> Callable[[bytes], Any] | None:
    """`deserializer`, answering an `Unparsable` instead of raising on bytes that do not parse."""
    if deserializer is None:
        return None
    name = method.rsplit("/", 1)[-1]

    def parse(data: bytes) -> Any:
        try:
            return deserializer(data)
        except DecodeError:
            return Unparsable(f"the {name} request is not a valid protobuf message of its type")

    return parse


def request_check(message: Message) -> None:
    """BadInput for the first field of `message` (nested ones included) out of range."""
    for field, value in message.ListFields():
        values = value if field.is_repeated else [value]
        for one in values:
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                request_check(one)
            elif field.type == FieldDescriptor.TYPE_STRING:
                _text_check(field.name, one)
            elif field.name in POSITIVE_IDS and one < 1:
                raise BadInput(f"{field.name} must be a positive id, not {one}")


def _text_check(name: str, text: str) -> None:
    if name == "page_token":
        if len(text) > MAX_PAGE_TOKEN or not text.isprintable():
            raise BadInput(BAD_PAGE_TOKEN)
        return
    if len(text) > MAX_TEXT:
        raise BadInput(f"{name} is {len(text)} characters long; no {name} here is over {MAX_TEXT}")
    if any(unicodedata.category(char) == "Cc" for char in text):
        raise BadInput(f"{name} holds a control character (a NUL or a newline, say); no {name} here does")


def _refusal(request: Any) -> Refusal | None:
    """Why `request` is refused (it did not parse or is out of range), None when it is fine."""
    if isinstance(request, Unparsable):
        return Refusal(grpc.StatusCode.INVALID_ARGUMENT, request.reason)
    try:
        request_check(request)
    except BadInput as error:
        return Refusal(grpc.StatusCode.INVALID_ARGUMENT, str(error))
    return None


def _checked(request: Any, context: grpc.ServicerContext) -> Any:
    """`request`, or an INVALID_ARGUMENT abort when it did not parse or is out of range."""
    refusal = _refusal(request)
    if refusal is not None:
        context.abort(refusal.code, refusal.details)
    return request


def _single(behavior: Callable[..., Any]) -> Callable[[Any, grpc.ServicerContext], Any]:
    def call(request: Any, context: grpc.ServicerContext) -> Any:
        return behavior(_checked(request, context), context)

    return call


def _each(requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
    for request in requests:
        yield _checked(request, context)


def _streamed(behavior: Callable[..., Any]) -> Callable[[Iterator[Any], grpc.ServicerContext], Any]:
    def call(requests: Iterator[Any], context: grpc.ServicerContext) -> Any:
        return behavior(_each(requests, context), context)

    return call


async def _each_async(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """The coroutine methods' requests, checked: a bad one raises `Refusal` in the method's reader
    (arena_api.connect ends the call with it), as `_each` aborts a threaded method."""
    async for request in requests:
        refusal = _refusal(request)
        if refusal is not None:
            raise refusal
        yield request


def _streamed_async(behavior: Callable[..., Any]) -> Callable[[AsyncIterator[Any], Any], AsyncIterator[Any]]:
    async def call(requests: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:
        async with aclosing(behavior(_each_async(requests), context)) as responses:
            async for response in responses:
                yield response

    return call


def _wrap(behavior: Callable[..., Any], kind: str) -> Callable[..., Any]:
    if is_async(behavior):
        if kind != "stream_stream" or not inspect.isasyncgenfunction(behavior):
            raise TypeError(f"only a bidirectional coroutine method is checked on the event loop, not {kind}")
        return _streamed_async(behavior)
    return _streamed(behavior) if streams_requests(kind) else _single(behavior)


class ArenaInputInterceptor(ServiceInterceptor):
    """Refuses unparsable or out-of-range Arena requests (see the module docstring); other
    services pass untouched."""

    service = SERVICE

    def rewrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        return rewrapped(
            handler,
            _wrap,
            request_deserializer=_parsing(handler.request_deserializer, method),
        )
