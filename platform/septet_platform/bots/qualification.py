"""Qualifying a submitted version: a smoke game of each game it declares, through the bot runtime.

The version sits at a table of built-in random players with its ladder's time control. It
qualifies (ACTIVE; earlier active versions of the bot retire) when it starts, stays healthy and
forfeits nothing; otherwise it FAILS, and why goes to the error log only its owner sees.
The bot runs in the same sandbox as in rated matches; a sandbox that cannot be made here raises
SandboxError and leaves the version QUALIFYING (our failure, not the bot's).
"""

from __future__ import annotations

import random

from django.db import transaction
from django.utils import timezone

from referee.botfolder import BotFolderError, start_bot
from referee.games import get_game
from referee.match import TimeControl, play_match
from referee.players import Player, RandomPlayer
from referee.players.grpc_player import GrpcPlayer
from septet_platform.bots.models import BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.matches.services import bot_sandbox, version_folder

SMOKE_SEED = 20261122
"""The seed of every smoke game, so a version's qualification can be replayed by its author."""


def bot_version_qualify(*, version_id: int) -> BotVersion:
    """Plays the smoke games of a QUALIFYING version and sets it ACTIVE or FAILED (idempotent)."""
    version = BotVersion.objects.select_related("bot").get(pk=version_id)
    if version.status != BotVersion.Status.QUALIFYING:
        return version
    problems = _smoke_games(version)
    with transaction.atomic():
        version = BotVersion.objects.select_for_update().get(pk=version_id)
        if version.status != BotVersion.Status.QUALIFYING:
            return version
        stamp = timezone.now().isoformat(timespec="seconds")
        if problems:
            version.status = BotVersion.Status.FAILED
            version.error_log += "".join(f"{stamp} qualification: {problem}\n" for problem in problems)
        else:
            BotVersion.objects.filter(bot=version.bot, status=BotVersion.Status.ACTIVE).update(
                status=BotVersion.Status.RETIRED
            )
            version.status = BotVersion.Status.ACTIVE
            version.qualified = timezone.now()
            version.error_log += f"{stamp} qualification: passed\n"
        version.save()
    return version


def _smoke_games(version: BotVersion) -> list[str]:
    """One game of each declared game that has a ladder; the problems found, if any."""
    games = [game for game in version.manifest.get("games", []) if Ladder.objects.filter(game=game).exists()]
    if not games:
        return ["the manifest declares no game that has a ladder here"]
    sandbox = bot_sandbox()
    try:
        bot = start_bot(version_folder(version), sandbox=sandbox)
    except BotFolderError as error:
        return [f"the bot did not start: {error}"]
    problems: list[str] = []
    player = GrpcPlayer(bot.address, f"{version.bot.name} v{version.number}")
    try:
        for game_id in games:
            ladder = Ladder.objects.get(game=game_id)
            game = get_game(game_id)
            players: list[Player] = [player]
            players += [RandomPlayer(random.Random(seat)) for seat in range(1, game.players.start)]
            outcome = play_match(
                game,
                players,
                seed=SMOKE_SEED,
                time_control=TimeControl(ladder.decision_seconds, ladder.bank_seconds),
                match_id=f"qualify-{version.pk}-{game_id}",
            )
            problems += [f"{game_id}: {forfeit.status}: {forfeit.reason}" for forfeit in outcome.forfeits]
    finally:
        player.close()
        tail = bot.stderr_tail()
        bot.stop()
    if problems and tail:
        problems.append(f"the bot's last output:{tail}")
    return problems
