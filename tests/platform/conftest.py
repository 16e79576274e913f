"""Shared fixtures for the platform tests; each block is named for the tests that use it."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import grpc
import pytest
import redis
from bot_versions import ALL_GAMES, tar_folder, version_from_archive, version_row
from django.utils import timezone
from platform_support import EXAMPLES, POSTGRES_ADMIN, claimed_redis_index, reachable

from referee.botkit.protocol import arena_pb2_grpc
from septet_platform.bots.models import BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.matches.models import Match, Seat

# Ladders, ratings and matchmaking (test_ratings.py, test_matchmaking.py) ----------------------


@pytest.fixture
def ladder_oh_hell(db: None) -> Ladder:
    """The Oh Hell! ladder: tables of 3 to 7."""
    return Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)


@pytest.fixture
def ladder_bot_factory(django_user_model: type) -> Callable[..., BotVersion]:
    """make(owner, name, number=1, status=ACTIVE, is_house=False, games=None) -> a BotVersion;
    `owner` is a username (created on first use); `games=None` stores a manifest playing every game."""

    def make(
        owner: str,
        name: str,
        *,
        number: int = 1,
        status: str = BotVersion.Status.ACTIVE,
        is_house: bool = False,
        games: Sequence[str] | None = None,
    ) -> BotVersion:
        return version_row(
            owner,
            name,
            number=number,
            status=status,
            is_house=is_house,
            games=ALL_GAMES if games is None else games,
        )

    return make


@pytest.fixture
def ladder_match_factory() -> Callable[..., Match]:
    """make(ladder, versions, ranks, status=FINISHED, rated=True) -> a played Match with its Seats
    (seat i holds versions[i] and finished ranks[i]; ranks=None leaves the seats unranked)."""

    def make(
        ladder: Ladder,
        versions: Sequence[BotVersion],
        ranks: Sequence[int] | None,
        *,
        status: str = Match.Status.FINISHED,
        rated: bool = True,
        seed: int = 1,
    ) -> Match:
        finished = timezone.now() if status in (Match.Status.FINISHED, Match.Status.ABORTED) else None
        match = Match.objects.create(ladder=ladder, seed=seed, status=status, rated=rated, finished=finished)
        for seat, version in enumerate(versions):
            Seat.objects.create(
                match=match, seat=seat, bot_version=version, rank=None if ranks is None else ranks[seat]
            )
        return match

    return make


# Bot versions with real archives, and matches seating them (for the match-playing tests).


@pytest.fixture
def played_versions(django_user_model: type) -> list[BotVersion]:
    owner = django_user_model.objects.create_user("house")
    return [
        version_from_archive(owner, "random-a", tar_folder(EXAMPLES / "random")),
        version_from_archive(owner, "greedy-a", tar_folder(EXAMPLES / "greedy")),
        version_from_archive(owner, "random-b", tar_folder(EXAMPLES / "random")),
    ]


# A PostgreSQL database and a Redis database index of a test's own (test_end_to_end.py, test_scale.py,
# test_ops.py) ------------------------------------------------------------------------------------


@pytest.fixture
def private_redis_url() -> Iterator[str]:
    """A Redis database index of this test's own (see claimed_redis_index)."""
    if not reachable("127.0.0.1", 6379):
        pytest.skip("needs the machine's Redis on 127.0.0.1:6379")
    with claimed_redis_index() as url:
        yield url


@pytest.fixture
def fresh_services() -> Iterator[dict[str, str]]:
    """DATABASE_URL and REDIS_URL for a platform under test: a new PostgreSQL database and a private
    Redis index when the machine has both, else nothing (the platform's embedded defaults)."""
    if not (reachable("127.0.0.1", 5432) and reachable("127.0.0.1", 6379)):
        yield {}
        return
    import psycopg

    name = f"septet_it_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        with claimed_redis_index() as redis_url:
            yield {"DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{name}", "REDIS_URL": redis_url}
    finally:
        with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# The Arena over a real channel (test_arena.py, test_arena_inputs.py) ---------------------------


@pytest.fixture
def channel(arena_address: str) -> Iterator[grpc.Channel]:
    """A channel to the Arena server running in this process."""
    with grpc.insecure_channel(arena_address) as opened:
        yield opened


@pytest.fixture
def arena(channel: grpc.Channel) -> arena_pb2_grpc.ArenaStub:
    return arena_pb2_grpc.ArenaStub(channel)


# The live streams' Redis (test_live_relay.py, test_live_stream_view.py, test_tables.py) -------------


@pytest.fixture
def live_redis(private_redis_url: str, settings: Any) -> Iterator[redis.Redis]:
    """The live streams' Redis pointed at a database index of this test's own (settings and the
    live app's cached clients alike), for the test to read and write directly."""
    from septet_platform.live import connection

    settings.SEPTET_LIVE_REDIS_URL = private_redis_url
    connection.forget_clients()
    yield redis.Redis.from_url(private_redis_url)
    connection.forget_clients()


# A real S3 server (test_database_storage.py, test_s3_storage.py) ---------------------------------


@pytest.fixture(scope="session")
def s3_server() -> Iterator[Any]:
    """moto's S3 server, a process of its own on a free 127.0.0.1 port (s3_support.S3Server)."""
    pytest.importorskip("storages", reason="the s3 extra is not installed (scripts/setup-env.sh installs it)")
    pytest.importorskip("moto.server", reason="moto[server] (the dev extra) is not installed")
    from s3_support import S3Server

    server = S3Server()
    yield server
    server.stop()
