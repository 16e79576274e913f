"""The attack of a build that sleeps, performed on the platform's own processes: the match worker,
the build worker, beat and the Arena, started with the commands `septet up` gives them
(launcher._child_specs), against the test's PostgreSQL database and a Redis index of its own.

One user submits two bots whose build is `sleep 30` over the Arena, while the ladder plays and
another user submits a plain bot (nothing to build) and a third a bot with a quick build. Before,
the builds ran inside the qualification task on the match worker's two slots: no match finished
while they slept and the plain bot waited for them. Now a sleeping build holds a builder slot only.
Read from the database: the plain bot qualifies about as fast as before the sleepers came, ladder
matches keep finishing at about the same rate, the sleeper's second build waits while its first
runs (one build per user), the other user's build runs meanwhile, and once the sleeper's build time
for the hour is spent (20 s here) its second build waits for the budget and a new submission is
refused with when to submit again.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import grpc
import pytest
from bot_versions import tar_folder, version_from_archive
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone
from platform_support import EXAMPLES, local_address

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from septet_platform import launcher
from septet_platform.accounts.services import api_token_create
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.matches.models import Match

ROOT = Path(__file__).resolve().parents[2]
SLEEP_SECONDS = 30
BUILD_SECONDS_PER_HOUR = 20
"""Less than one sleeping build: the sleeper's first build spends its hour."""


class Platform:
    """The platform's long-running processes (all of `septet up`'s children but the web site and
    the embedded Redis), on the test's database and a Redis index of its own."""

    def __init__(self, redis_url: str, data: Path, arena: str, log: Path) -> None:
        database = connection.settings_dict
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "septet_platform.settings.test",
            "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
            "REDIS_URL": redis_url,
            "PYTHONPATH": str(ROOT / "platform"),
            "SEPTET_DATA_DIR": str(data),
            "SEPTET_BUILD_SECONDS_PER_HOUR": str(BUILD_SECONDS_PER_HOUR),
        }
        self.arena = arena
        self.children: dict[str, subprocess.Popen[str]] = {}
        self.log = log

    def start(self) -> list[str]:
        """Starts every child but the web site; their names."""
        args = launcher._parser().parse_args(["--arena", self.arena])
        output = self.log.open("a")
        for spec in launcher._child_specs(args):
            if spec.name != "web":
                self.children[spec.name] = subprocess.Popen(
                    spec.command, env=self.env, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT, text=True
                )
        return sorted(self.children)

    def stop(self) -> None:
        for child in self.children.values():
            child.terminate()
        for child in self.children.values():
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        print(self.log.read_text(errors="replace")[-4000:])  # shown when the test failed


@pytest.fixture
def platform(
    private_redis_url: str, tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Platform]:
    if connection.vendor != "postgresql":
        pytest.skip("the platform's processes share the test database: needs PostgreSQL")
    settings.SEPTET_BUILD_WORKERS = 2  # two builder slots: one user's second build must leave one free
    monkeypatch.setenv("SEPTET_DATA_DIR", str(tmp_path))  # where septet up keeps beat's schedule
    running = Platform(private_redis_url, Path(settings.DATA_DIR), local_address(), tmp_path / "children.log")
    try:
        yield running
    finally:
        running.stop()


def _until(condition: Callable[[], Any], seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"not within {seconds:.0f} s: {what}")


def _finished_ladder_matches(since: datetime, until: datetime) -> int:
    return Match.objects.filter(
        kind=Match.Kind.LADDER, status=Match.Status.FINISHED, finished__gte=since, finished__lt=until
    ).count()


def _accepts(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((host, int(port))) == 0


class Author:
    """A user submitting over the Arena with a token of their own."""

    def __init__(self, arena: arena_pb2_grpc.ArenaStub, name: str) -> None:
        self.user = User.objects.create_user(name)
        _, token = api_token_create(user=self.user, name="cli")
        self.metadata = [("authorization", f"Bearer {token}")]
        self.arena = arena

    def submit(self, bot: str, build: str = "") -> pb.SubmitBotResponse:
        command = '["python", "bot.py", "--address", "{address}"]'
        manifest = f'name = "{bot}"\ngames = ["oh-hell"]\ncommand = {command}\n'
        manifest += f"build = {build}\n" if build else ""
        archive = tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest})
        chunks = iter([pb.SubmitBotChunk(data=archive)])
        return self.arena.SubmitBot(chunks, metadata=self.metadata, timeout=30)


def _version(bot: str) -> BotVersion:
    return BotVersion.objects.get(bot__name=bot, number=1)


def _seconds_to_qualify(author: Author, bot: str, limit: float, build: str = "") -> float:
    started = time.monotonic()
    author.submit(bot, build)
    _until(lambda: _version(bot).status == BotVersion.Status.ACTIVE, limit, f"{bot} qualifies")
    return time.monotonic() - started


@pytest.mark.slow  # about a minute: 30 s of the sleep, and the platform's processes starting
@pytest.mark.django_db(transaction=True)
def test_two_sleeping_builds_stop_neither_the_ladder_nor_another_users_qualification(
    platform: Platform,
) -> None:
    Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    house = User.objects.create_user("house")
    for name, example in (("house-a", "random"), ("house-b", "greedy"), ("house-c", "random")):
        version_from_archive(house, name, tar_folder(EXAMPLES / example), games=["oh-hell"], is_house=True)
    started = platform.start()
    _until(lambda: _accepts(platform.arena), 60, "the Arena listens")
    with grpc.insecure_channel(platform.arena) as channel:
        arena = arena_pb2_grpc.ArenaStub(channel)
        carol, mallory, dave = Author(arena, "carol"), Author(arena, "mallory"), Author(arena, "dave")
        ladder = Match.objects.filter(kind=Match.Kind.LADDER, status=Match.Status.FINISHED)
        _until(lambda: ladder.count() >= 2, 60, "ladder matches are played")

        # Without the sleepers: the ladder's pace, and a plain bot's qualification.
        calm_from = timezone.now()
        calm = _seconds_to_qualify(carol, "plain-before", 60)
        time.sleep(max(0.0, 8 - calm))
        calm_to = timezone.now()
        calm_rate = _finished_ladder_matches(calm_from, calm_to) / (calm_to - calm_from).total_seconds()
        assert calm_rate > 0

        # The attack: two submissions whose build sleeps.
        for bot in ("sleeper-a", "sleeper-b"):
            mallory.submit(bot, f'["sleep", "{SLEEP_SECONDS}"]')
        _until(lambda: _version("sleeper-a").build_status == BotVersion.Build.BUILDING, 20, "the first sleep")
        asleep_from = timezone.now()
        attacked = _seconds_to_qualify(carol, "plain-during", calm + 10)
        built = _seconds_to_qualify(dave, "quick-build", 20, build='["true"]')
        sleeping = [_version(bot).build_status for bot in ("sleeper-a", "sleeper-b")]
        assert sleeping == [BotVersion.Build.BUILDING, BotVersion.Build.PENDING], "one build per user"
        _until(lambda: _version("sleeper-a").build_status != BotVersion.Build.BUILDING, SLEEP_SECONDS + 20,
               "the first sleep ends")  # fmt: skip
        asleep_to = timezone.now()
        asleep_rate = (
            _finished_ladder_matches(asleep_from, asleep_to) / (asleep_to - asleep_from).total_seconds()
        )

        # The sleeper's hour of build time is spent: its second build waits, a new one is refused.
        time.sleep(8)  # longer than a waiting build's poll
        second = _version("sleeper-b")
        with pytest.raises(grpc.RpcError) as refused:
            mallory.submit("sleeper-c", '["sleep", "1"]')

    print(f"plain bot qualified in {calm:.1f} s calm, {attacked:.1f} s beside the sleeping builds; "
          f"dave's build and qualification {built:.1f} s; ladder {calm_rate * 60:.0f} matches/min calm, "
          f"{asleep_rate * 60:.0f} asleep")  # fmt: skip
    assert attacked < calm + 10
    assert asleep_rate >= calm_rate / 2, "ladder matches kept finishing while the builds slept"
    first = _version("sleeper-a")
    assert first.build_status == BotVersion.Build.BUILT and first.build_seconds is not None
    assert SLEEP_SECONDS <= first.build_seconds < SLEEP_SECONDS + 15
    assert (second.build_status, second.status) == (BotVersion.Build.PENDING, BotVersion.Status.QUALIFYING)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert f"build time limit reached: {BUILD_SECONDS_PER_HOUR} s of builds per hour per user" in (
        refused.value.details() or ""
    )
    assert re.search(r"try again in (59|60) min$", refused.value.details() or ""), "in about an hour"
    assert not Bot.objects.filter(name="sleeper-c").exists()
    assert {"worker1", "builder", "beat", "arena"} <= set(started), "septet up starts a build worker"
