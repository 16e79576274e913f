"""The Django project itself: importable beside the stdlib, migrations complete, settings safe."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import IntegrityError, connection

from septet_platform.bots.models import Bot, BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.matches.models import Match, Seat


def test_the_standard_library_platform_module_is_not_shadowed() -> None:
    import platform

    assert platform.python_version().startswith("3.")


@pytest.mark.django_db
def test_migrations_match_the_models() -> None:
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_tests_use_postgresql_when_it_is_reachable() -> None:
    import socket

    with socket.socket() as probe:
        probe.settimeout(0.5)
        reachable = probe.connect_ex(("127.0.0.1", 5432)) == 0
    if "DATABASE_URL" in os.environ or os.environ.get("SEPTET_TEST_DB") == "sqlite":
        pytest.skip("the database was chosen explicitly")
    assert connection.vendor == ("postgresql" if reachable else "sqlite")


@pytest.mark.django_db
def test_a_seat_holds_one_bot_and_a_version_number_is_unique(django_user_model: type) -> None:
    owner = django_user_model.objects.create_user("alice", password="x")
    bot = Bot.objects.create(owner=owner, name="greedy")
    version = BotVersion.objects.create(bot=bot, number=1, archive="a", archive_sha256="0" * 64, manifest={})
    ladder = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    match = Match.objects.create(ladder=ladder, seed=1)
    Seat.objects.create(match=match, seat=0, bot_version=version)
    with pytest.raises(IntegrityError):
        Seat.objects.create(match=match, seat=0, bot_version=version)


@pytest.mark.django_db
def test_two_versions_of_a_bot_cannot_share_a_number(django_user_model: type) -> None:
    bot = Bot.objects.create(owner=django_user_model.objects.create_user("bob"), name="mine")
    BotVersion.objects.create(bot=bot, number=1, archive="a", archive_sha256="0" * 64, manifest={})
    with pytest.raises(IntegrityError):
        BotVersion.objects.create(bot=bot, number=1, archive="b", archive_sha256="1" * 64, manifest={})


@pytest.mark.parametrize(
    ("environment", "message"),
    [
        ({"DEBUG": "1", "SECRET_KEY": "x" * 50}, "DEBUG"),
        ({}, "SECRET_KEY"),
        ({"SECRET_KEY": "short"}, "SECRET_KEY"),
    ],
)
def test_production_settings_refuse_unsafe_configuration(environment: dict[str, str], message: str) -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("DEBUG", "SECRET_KEY")}
    env.update(environment, DJANGO_SETTINGS_MODULE="septet_platform.settings.prod")
    run = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(settings.BASE_DIR),
    )
    assert run.returncode != 0 and message in run.stderr


def test_production_settings_start_when_configured() -> None:
    env = {**os.environ, "SECRET_KEY": "k" * 50, "DJANGO_SETTINGS_MODULE": "septet_platform.settings.prod"}
    env.pop("DEBUG", None)
    run = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"], capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
