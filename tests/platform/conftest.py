"""Shared fixtures for the platform tests; each block is named for the tests that use it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import pytest
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
