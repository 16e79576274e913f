"""Shared fixtures for the platform tests; each block is named for the tests that use it."""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from archived_versions import tar_folder, version_from_archive
from django.utils import timezone

from septet_platform.bots.models import Bot, BotVersion
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
        user, _ = django_user_model.objects.get_or_create(username=owner)
        bot, _ = Bot.objects.get_or_create(owner=user, name=name, defaults={"is_house": is_house})
        manifest = {"name": name, "games": list(games) if games is not None else _ALL_GAMES}
        digest = hashlib.sha256(f"{name}/{number}".encode()).hexdigest()
        return BotVersion.objects.create(
            bot=bot,
            number=number,
            archive=f"{digest}.tar.gz",
            archive_sha256=digest,
            manifest=manifest,
            status=status,
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


_ALL_GAMES = ["oh7", "oh7-advanced", "oh7-duel", "oh-hell", "black-sevens", "seven-up-seven-down"]


# Bot versions with real archives, and matches seating them (for the match-playing tests).

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "bots" / "examples"
FAULTY = ROOT / "tests" / "bots" / "faulty" / "misbehave.py"


def match_with(game: str, versions: list[BotVersion], seed: int = 7) -> Match:
    ladder, _ = Ladder.objects.get_or_create(game=game, defaults={"min_players": 3, "max_players": 7})
    match = Match.objects.create(ladder=ladder, seed=seed)
    for seat, version in enumerate(versions):
        Seat.objects.create(match=match, seat=seat, bot_version=version)
    return match


@pytest.fixture
def played_versions(django_user_model: type) -> list[BotVersion]:
    owner = django_user_model.objects.create_user("house")
    return [
        version_from_archive(owner, "random-a", tar_folder(EXAMPLES / "random")),
        version_from_archive(owner, "greedy-a", tar_folder(EXAMPLES / "greedy")),
        version_from_archive(owner, "random-b", tar_folder(EXAMPLES / "random")),
    ]


# The Arena service running in this process (test_arena.py, test_arena_cli.py) -----------------


class Queued:
    """Stands in for a Celery task: records what `.delay` was called with."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def delay(self, object_id: int) -> None:
        self.calls.append(object_id)


@pytest.fixture
def storage(settings: Any, tmp_path: Path) -> tuple[Path, Path]:
    """Private archive and replay folders for the test."""
    settings.SEPTET_ARCHIVES_DIR = tmp_path / "archives"
    settings.SEPTET_REPLAYS_DIR = tmp_path / "replays"
    return settings.SEPTET_ARCHIVES_DIR, settings.SEPTET_REPLAYS_DIR


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> dict[str, Queued]:
    """The qualification and match tasks, recorded instead of sent to a broker."""
    from septet_platform.arena_api import services

    tasks = {"qualify": Queued(), "match": Queued()}
    monkeypatch.setattr(services, "bot_version_qualify_task", tasks["qualify"])
    monkeypatch.setattr(services, "match_run_task", tasks["match"])
    return tasks


@pytest.fixture
def arena_address(storage: tuple[Path, Path], queued: dict[str, Queued]) -> Iterator[str]:
    """host:port of an Arena server running in this process on a free port."""
    from septet_platform.arena_api.server import create_server

    server, port = create_server("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(grace=None).wait()


# A PostgreSQL database and a Redis database index of a test's own (test_end_to_end.py, test_scale.py,
# test_ops.py) ------------------------------------------------------------------------------------

POSTGRES_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
REDIS_INDEXES = range(8, 16)
"""Redis database indexes tests may claim; 0-7 are left to everything else on the machine."""
CLAIM_KEY = "septet-test-claim"


SEPTET = str(Path(sys.executable).with_name("septet"))
"""The `septet` command of this environment, for tests that run it as a user would."""


def local_address() -> str:
    """127.0.0.1:PORT with a port free right now, for a server a test starts."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def reachable(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((host, port)) == 0


@contextlib.contextmanager
def claimed_redis_index() -> Iterator[str]:
    """redis://127.0.0.1:6379/N for a database index held by this caller alone (claimed atomically,
    so parallel test processes never share one), empty at the start and emptied at the end."""
    import redis

    for index in REDIS_INDEXES:
        url = f"redis://127.0.0.1:6379/{index}"
        client = redis.Redis.from_url(url)
        if client.set(CLAIM_KEY, str(os.getpid()), nx=True, ex=3600):
            client.flushdb()  # drops the claim too: nothing of a previous run stays
            client.set(CLAIM_KEY, str(os.getpid()), ex=3600)
            try:
                yield url
            finally:
                client.flushdb()
            return
    raise RuntimeError(f"every Redis index in {REDIS_INDEXES} is claimed by another test")


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
