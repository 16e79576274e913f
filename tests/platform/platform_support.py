"""Helpers of the platform tests that test modules import (fixtures stay in conftest.py, which
test modules never import: several test folders have a conftest.py, and `conftest` would name
whichever was loaded last)."""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

from septet_platform.bots.models import BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.matches.models import Match, Seat

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "bots" / "examples"
FAULTY = ROOT / "tests" / "bots" / "faulty" / "misbehave.py"


def match_with(game: str, versions: list[BotVersion], seed: int = 7) -> Match:
    ladder, _ = Ladder.objects.get_or_create(
        game=game, pool=Ladder.Pool.SANDBOXED, defaults={"min_players": 3, "max_players": 7}
    )
    match = Match.objects.create(ladder=ladder, seed=seed)
    for seat, version in enumerate(versions):
        Seat.objects.create(match=match, seat=seat, bot_version=version)
    return match


POSTGRES_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
REDIS_INDEXES = range(8, 16)
"""Redis database indexes tests may claim; 0-7 are left to everything else on the machine."""
CLAIM_KEY = "septet-test-claim"


SEPTET = str(Path(sys.executable).with_name("septet"))
"""The `septet` command of this environment, for tests that run it as a user would."""


QUICK_HOUSE_BOTS = ("random", "greedy", "half-greedy", "node-random")


def quick_examples(folder: Path) -> Path:
    """The example bots but montecarlo, linked into `folder`, for `septet up --examples`: the house
    montecarlo thinks for its whole budget at every decision, and a test that only needs rated
    matches to flow waited minutes behind its sets (the start command's own tests keep it)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in QUICK_HOUSE_BOTS:
        (folder / name).symlink_to(EXAMPLES / name, target_is_directory=True)
    return folder


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
