"""A demonstration event from the example bots: copies of them renamed (one owner may enter several
bots), submitted and qualified like any upload, entered into a new open tournament whose entries
close at once, so the beat freezes and schedules it on its next tick."""

from __future__ import annotations

import re
import shutil
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from referee.tools.packing import pack_folder
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.qualification import bot_version_qualify
from septet_platform.bots.services import bot_version_submit
from septet_platform.ladders.services import ladders_ensure
from septet_platform.tournaments import services
from septet_platform.tournaments.models import Tournament

EXAMPLES_DIR = Path(__file__).resolve().parents[3] / "bots" / "examples"
DEMO_EXAMPLES = ("random", "greedy", "half-greedy", "node-random")


def example_copy(*, owner: AbstractBaseUser, example: str, name: str, game: str) -> BotVersion:
    """An ACTIVE version of bot `name`: the example's folder with its manifest renamed and playing
    only `game` (one smoke game to qualify); an existing bot of that name is reused as it is."""
    existing = Bot.objects.filter(name=name).first()
    if existing is not None:
        version = existing.versions.order_by("-number").first()
        if version is not None:
            return version
    with tempfile.TemporaryDirectory(prefix="septet-demo-") as scratch:
        folder = Path(scratch) / name
        shutil.copytree(EXAMPLES_DIR / example, folder)
        manifest = folder / "septet-bot.toml"
        text = re.sub(r'(?m)^name = ".*"$', f'name = "{name}"', manifest.read_text())
        text = re.sub(r"(?m)^games = \[.*\]$", f'games = ["{game}"]', text)
        manifest.write_text(text)
        version = bot_version_submit(owner=owner, archive=pack_folder(folder, build_first=True))
    return bot_version_qualify(version_id=version.pk)


def demo_tournament(
    *,
    organiser: AbstractBaseUser,
    name: str,
    game: str,
    table_size: int,
    entrants: int = 8,
    duplicate_sets: int = 1,
    deadline: datetime | None = None,
) -> Tournament:
    """Creates the event (TournamentError for a bad one, before any bot is made) and enters
    `entrants` example copies named NAME-EXAMPLE-N; copies that fail to qualify are not entered."""
    tournament = services.tournament_create(
        organiser=organiser,
        name=name,
        title=name.replace("-", " ").title(),
        game=game,
        table_size=table_size,
        duplicate_sets=duplicate_sets,
        entry_deadline=timezone.now() + timedelta(hours=1),  # closed once everyone is entered
        published=True,
    )
    ladders_ensure()  # qualification plays the games that have a ladder
    for number in range(entrants):
        example = DEMO_EXAMPLES[number % len(DEMO_EXAMPLES)]
        version = example_copy(
            owner=organiser,
            example=example,
            name=f"{name}-{example}-{number // len(DEMO_EXAMPLES) + 1}",
            game=game,
        )
        if version.status == BotVersion.Status.ACTIVE:
            services.entrant_add(tournament=tournament, user=organiser, bot=version.bot)
    Tournament.objects.filter(pk=tournament.pk).update(entry_deadline=deadline or timezone.now())
    tournament.refresh_from_db()
    return tournament
