"""Fixtures of the tournament tests: users with bots, tournaments, and an enqueue recorder."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from tournament_data import Recorder, make_version, play_on_paper

from septet_platform.bots.models import BotVersion
from septet_platform.tournaments import services
from septet_platform.tournaments.models import Tournament


@pytest.fixture
def organiser(db: None) -> User:
    return User.objects.create_user("organiser", is_staff=True)


@pytest.fixture
def bot_version() -> Callable[..., BotVersion]:
    """bot_version(owner, name, number=1, games=("oh-hell",), status=ACTIVE) -> a BotVersion."""
    return make_version


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def open_cup(organiser: User) -> Tournament:
    """An open oh-hell round robin, tables of 3, entries closing in an hour."""
    return services.tournament_create(
        organiser=organiser,
        name="cup",
        title="The Cup",
        game="oh-hell",
        table_size=3,
        entry_deadline=timezone.now() + timedelta(hours=1),
        seed=11,
    )


@pytest.fixture
def running_cup(open_cup: Tournament, recorder: Recorder) -> Tournament:
    """The open cup with four entrants (ann-bot, ben-bot, cat-bot, dan-bot), closed and started,
    every match played on paper (ann strongest, dan weakest)."""
    for name in ("ann", "ben", "cat", "dan"):
        version = make_version(name, f"{name}-bot")
        services.entrant_add(tournament=open_cup, user=version.bot.owner, bot=version.bot)
    Tournament.objects.filter(pk=open_cup.pk).update(entry_deadline=timezone.now())
    services.tournament_start(tournament=open_cup, enqueue=recorder)
    strength = {"ann-bot": 4.0, "ben-bot": 3.0, "cat-bot": 2.0, "dan-bot": 1.0}
    play_on_paper(open_cup, strength.__getitem__)
    open_cup.refresh_from_db()
    return open_cup
