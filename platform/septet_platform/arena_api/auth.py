"""API-token authentication of Arena calls, and Django database hygiene around each call.

`ArenaAuthInterceptor` wraps every Arena method handler. The wrapper of a threaded method runs in
the server's worker thread (threaded.py): it closes stale database connections, reads
`authorization: Bearer sep_...` from the metadata and checks it with `api_token_authenticate`,
sets `current_user` for the servicer, runs the method and closes stale connections again. Methods
in `USER_REQUIRED` need a token (UNAUTHENTICATED without one); on the others a token is optional,
but a bad one is refused too. Every server-streaming Arena method (FollowMatch, GetReplay) runs
inside a slot of the interceptor's `StreamLimiter` (see `streams`): RESOURCE_EXHAUSTED past its
bounds. Connect, a
coroutine on the event loop, has its token checked on a pool thread and is bounded by a limiter of
its own (settings.SEPTET_ARENA_CONNECTIONS): a connected bot holds no thread.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import aclosing
from typing import Any

import grpc
from django.contrib.auth.models import AbstractBaseUser
from django.db import close_old_connections

from septet_platform.accounts.models import ApiToken
from septet_platform.accounts.services import AuthenticationFailed, api_token_check
from septet_platform.arena_api.handlers import (
    Behavior,
    Refusal,
    ServiceInterceptor,
    is_async,
    rewrapped,
    streams_responses,
)
from septet_platform.arena_api.streams import StreamLimiter, StreamsExhausted

SERVICE = "/septet.v1.Arena/"
USER_REQUIRED = frozenset(
    f"{SERVICE}{method}"
    for method in (
        "SubmitBot",
        "RequestChallenge",
        "GetChallenge",
        "SetChallengesAccepted",
        "EnterTournament",
        # Match reads: what a caller may see of a match depends on who they are (forfeit reasons
        # of their own seats), and an anonymous caller cannot be counted or refused by name.
        "ListMatches",
        "GetMatch",
        "GetReplay",
        "FollowMatch",
        "GetMatchLogs",
    )
)
BEARER = "bearer "
CONNECT = f"{SERVICE}Connect"
"""The one method a bot-scoped token may call, and the one that needs such a token."""

current_user: contextvars.ContextVar[AbstractBaseUser | None] = contextvars.ContextVar(
    "arena_current_user", default=None
)
current_token: contextvars.ContextVar[ApiToken | None] = contextvars.ContextVar(
    "arena_current_token", default=None
)


def _authenticated(
    context: grpc.ServicerContext, *, required: bool, method: str = ""
) -> AbstractBaseUser | None:
    """The caller's user, None for an anonymous read; aborts UNAUTHENTICATED otherwise. A token
    scoped to a self-hosted bot may only Connect (PERMISSION_DENIED elsewhere), and Connect takes
    no other token."""
    try:
        token = _caller_token(context.invocation_metadata(), required=required, method=method)
    except Refusal as refusal:
        context.abort(refusal.code, refusal.details)
    current_token.set(token)
    return token.user if token is not None else None


def _caller_token(metadata: Any, *, required: bool, method: str) -> ApiToken | None:
    """The caller's live token, checked for `method` (see `_authenticated`); Refusal otherwise."""
    token = _token(metadata, required=required)
    scoped = token is not None and token.bot_id is not None
    if scoped and method != CONNECT:
        assert token is not None and token.bot is not None
        raise Refusal(
            grpc.StatusCode.PERMISSION_DENIED,
            f"this token is scoped to the self-hosted bot {token.bot.name!r} and may only Connect "
            "as it: use an account token (made on the site's API tokens page) for other calls",
        )
    if method == CONNECT and not scoped:
        raise Refusal(
            grpc.StatusCode.PERMISSION_DENIED,
            "Connect needs a token made for one self-hosted bot (the site's API tokens page, "
            "'Self-hosted bots'), not an account token",
        )
    return token


def _token(metadata: Any, *, required: bool) -> ApiToken | None:
    """The caller's live token, None for an anonymous read; Refusal(UNAUTHENTICATED) otherwise."""
    values = [value for key, value in (metadata or ()) if key == "authorization"]
    if not values:
        if required:
            raise Refusal(
                grpc.StatusCode.UNAUTHENTICATED,
                "this call needs an API token: send metadata 'authorization: Bearer sep_...'",
            )
        return None
    header = values[0] if isinstance(values[0], str) else values[0].decode("utf-8", "replace")
    if not header.lower().startswith(BEARER):
        raise Refusal(
            grpc.StatusCode.UNAUTHENTICATED, "the authorization metadata must read 'Bearer sep_...'"
        )
    try:
        return api_token_check(token=header[len(BEARER) :])
    except AuthenticationFailed as error:
        raise Refusal(grpc.StatusCode.UNAUTHENTICATED, str(error)) from None


def _connect_token(metadata: Any) -> ApiToken:
    """Connect's token (scoped to one self-hosted bot, its bot loaded), checked on a thread of the
    pool: the database is not for the event loop."""
    close_old_connections()
    try:
        token = _caller_token(metadata, required=True, method=CONNECT)
        assert token is not None and token.bot is not None
        return token
    finally:
        close_old_connections()


def _unary(
    behavior: Callable[..., Any], required: bool, method: str
) -> Callable[[Any, grpc.ServicerContext], Any]:
    def call(request: Any, context: grpc.ServicerContext) -> Any:
        close_old_connections()
        try:
            token = current_user.set(_authenticated(context, required=required, method=method))
            try:
                return behavior(request, context)
            finally:
                current_user.reset(token)
        finally:
            close_old_connections()

    return call


def _streaming(
    behavior: Callable[..., Any], required: bool, limiter: StreamLimiter, method: str
) -> Callable[[Any, grpc.ServicerContext], Iterator[Any]]:
    def call(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        close_old_connections()
        try:
            user = _authenticated(context, required=required, method=method)
            token = current_user.set(user)
            try:
                with limiter.slot(_stream_key(user, context, current_token.get())):
                    yield from behavior(request, context)
            except StreamsExhausted as error:
                context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(error))
            finally:
                current_user.reset(token)
        finally:
            close_old_connections()

    return call


def _connecting(
    behavior: Callable[..., AsyncIterator[Any]], limiter: StreamLimiter
) -> Callable[[AsyncIterator[Any], grpc.aio.ServicerContext], AsyncIterator[Any]]:
    """Connect, a coroutine on the event loop: its token is checked on a thread of the pool, and
    the bot's connection holds a slot of the connection limiter (not of the threads' streams: it
    holds no thread)."""

    async def call(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        try:
            token = await asyncio.to_thread(_connect_token, context.invocation_metadata())
        except Refusal as refusal:
            await context.abort(refusal.code, refusal.details)
        current_token.set(token)
        current_user.set(token.user)
        try:
            with limiter.slot(_stream_key(token.user, context, token)):
                async with aclosing(behavior(requests, context)) as responses:
                    async for response in responses:
                        yield response
        except StreamsExhausted as error:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(error))

    return call


def _stream_key(
    user: AbstractBaseUser | None, context: grpc.ServicerContext, token: ApiToken | None = None
) -> str:
    """Whom a stream is counted against: a self-hosted bot's connection against that bot (one at
    a time: a newer one replaces it), else the user (all their tokens together), else the peer's
    address (an anonymous stream, where a method allows one)."""
    if token is not None and token.bot_id is not None:
        return f"bot:{token.bot_id}"
    if user is not None:
        return f"user:{user.pk}"
    return "peer:" + context.peer().rsplit(":", 1)[0]


class ArenaAuthInterceptor(ServiceInterceptor):
    """Authenticates Arena calls and bounds their streams (see the module docstring); other
    services pass untouched."""

    service = SERVICE

    def __init__(self, limiter: StreamLimiter, connections: StreamLimiter | None = None) -> None:
        self.limiter = limiter
        self.connections = connections or limiter

    def rewrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        required = method in USER_REQUIRED or method == CONNECT

        def wrap(behavior: Behavior, kind: str) -> Behavior:
            if is_async(behavior):
                if method != CONNECT:
                    raise TypeError(
                        f"{method} is a coroutine method; only Connect is served on the event loop"
                    )
                return _connecting(behavior, self.connections)
            if streams_responses(kind):
                return _streaming(behavior, required, self.limiter, method)
            return _unary(behavior, required, method)

        return rewrapped(handler, wrap)
