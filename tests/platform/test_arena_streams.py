"""The Arena cannot be starved by its streams (a real server on a free port, real gRPC calls):
followers past the per-user or the total bound are refused with RESOURCE_EXHAUSTED at once while
unary calls still answer, a closed stream gives its slot back, an idle follower is ended, and a
bound as large as the thread pool is refused when the server is made."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from django.contrib.auth.models import User

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from septet_platform.accounts.services import api_token_create
from septet_platform.arena_api.server import create_server
from septet_platform.ladders.models import Ladder
from septet_platform.matches.models import Match

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8


@pytest.fixture
def bounded_arena(settings: Any) -> Iterator[arena_pb2_grpc.ArenaStub]:
    """An Arena of 8 threads serving at most 3 streams, 2 per user."""
    settings.SEPTET_ARENA_STREAMS = 3
    settings.SEPTET_ARENA_STREAMS_PER_USER = 2
    server, port = create_server("127.0.0.1:0", max_workers=THREADS)
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield arena_pb2_grpc.ArenaStub(channel)
    finally:
        channel.close()
        server.stop(grace=None).wait()


@pytest.fixture
def waiting_match() -> Match:
    """A match that stays SCHEDULED: following it keeps the stream open."""
    ladder = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    return Match.objects.create(ladder=ladder, seed=5)


@pytest.fixture
def token_of() -> Callable[[str], list[tuple[str, str]]]:
    def make(username: str) -> list[tuple[str, str]]:
        user, _ = User.objects.get_or_create(username=username)
        _, plaintext = api_token_create(user=user, name="cli")
        return [("authorization", f"Bearer {plaintext}")]

    return make


def _follow(arena: arena_pb2_grpc.ArenaStub, match: Match, metadata: list[tuple[str, str]]) -> Any:
    """An open FollowMatch stream whose first event has arrived (so it holds its slot)."""
    stream = arena.FollowMatch(pb.FollowMatchRequest(match_id=match.pk), metadata=metadata, timeout=60)
    assert next(stream).status == "scheduled"
    return stream


def _refusal(arena: arena_pb2_grpc.ArenaStub, match: Match, metadata: list[tuple[str, str]]) -> grpc.RpcError:
    started = time.monotonic()
    with pytest.raises(grpc.RpcError) as caught:
        next(arena.FollowMatch(pb.FollowMatchRequest(match_id=match.pk), metadata=metadata, timeout=10))
    assert time.monotonic() - started < 2, "refused at once, not after waiting for a thread"
    return caught.value


def _unary_answers(arena: arena_pb2_grpc.ArenaStub) -> bool:
    started = time.monotonic()
    arena.ListLadders(pb.ListLaddersRequest(), timeout=2)
    return time.monotonic() - started < 1


def test_streams_past_the_bounds_are_refused_while_unary_calls_answer(
    bounded_arena: arena_pb2_grpc.ArenaStub, waiting_match: Match, token_of: Callable
) -> None:
    """Tried: a third stream of one user, a fourth stream in all, an anonymous stream."""
    ada, bob, eve = token_of("ada"), token_of("bob"), token_of("eve")
    ada_streams = [_follow(bounded_arena, waiting_match, ada) for _ in range(2)]

    third_of_ada = _refusal(bounded_arena, waiting_match, ada)
    assert third_of_ada.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "2 streams open, the most one user may" in (third_of_ada.details() or "")

    bob_stream = _follow(bounded_arena, waiting_match, bob)
    over_all = _refusal(bounded_arena, waiting_match, eve)
    assert over_all.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "the most it serves at once" in (over_all.details() or "")
    anonymous = _refusal(bounded_arena, waiting_match, [])
    assert anonymous.code() == grpc.StatusCode.UNAUTHENTICATED
    assert _unary_answers(bounded_arena), "a unary call still answers with every stream slot taken"
    assert bounded_arena.GetMatch(pb.GetMatchRequest(match_id=waiting_match.pk), metadata=eve, timeout=2)

    ada_streams[0].cancel()
    deadline = time.monotonic() + 5
    while True:  # the server notices the cancel within a poll
        try:
            ada_streams[0] = _follow(bounded_arena, waiting_match, ada)
            break
        except (grpc.RpcError, AssertionError):
            assert time.monotonic() < deadline, "a closed stream gives its slot back"
            time.sleep(0.2)
    for stream in [*ada_streams, bob_stream]:
        stream.cancel()


def test_a_follower_of_a_match_that_does_not_change_is_ended_after_the_idle_timeout(
    bounded_arena: arena_pb2_grpc.ArenaStub, waiting_match: Match, token_of: Callable, settings: Any
) -> None:
    settings.SEPTET_FOLLOW_IDLE_SECONDS = 1.0
    stream = _follow(bounded_arena, waiting_match, token_of("ada"))
    with pytest.raises(grpc.RpcError) as caught:
        next(stream)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "has not changed for 1 s" in (caught.value.details() or "")
    assert _follow(bounded_arena, waiting_match, token_of("ada")), "its slot is free again"


def test_a_stream_bound_as_large_as_the_thread_pool_is_refused(settings: Any) -> None:
    settings.SEPTET_ARENA_STREAMS = THREADS
    with pytest.raises(ValueError, match="must be below the server's 8 threads"):
        create_server("127.0.0.1:0", max_workers=THREADS)
