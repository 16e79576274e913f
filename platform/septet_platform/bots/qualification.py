"""Qualifying a submitted version: it is built once, then plays one game of each game it declares.

First the version is built (`services.bot_version_build`: once, offline, in the sandbox); a build
that fails FAILS the version with the build's bounded log for its owner. Then it plays, through
the bot runtime and the same sandbox as rated play, one game of each declared game that has a
ladder, with the ladder's time control, a fresh random match id and seed per game (kept in
`BotVersion.qualification` so the owner can replay it), and as opponents the ladder's active house
bots started as a rated match starts them (built-in random players fill seats only when there are
too few); like a rated match, each game gets a fresh process of the bot.
It qualifies (ACTIVE; earlier active versions of the bot retire) when it starts, stays
healthy and forfeits nothing; otherwise it FAILS, and why goes to its bounded error log. A version
that passes while a newer version of its bot is already active is RETIRED, not activated.

What a bot can still tell: that it is its first match after a submission, and, when the ladder
has fewer house bots than seats, that a seat is a built-in random player. A sandbox that cannot be
made raises SandboxError and leaves the version QUALIFYING (our failure, not the bot's).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from django.db import transaction
from django.utils import timezone

from referee.engine.games import get_game
from referee.engine.match import TimeControl, new_match_id, play_match
from referee.engine.players import Player, RandomPlayer
from referee.tools.botfolder import BotFolderError, RunningBot, start_bot
from referee.tools.building import bounded_log
from referee.tools.grpc_player import GrpcPlayer
from referee.tools.sandbox import Sandbox
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.services import bot_version_build
from septet_platform.ladders.matchmaking import SEED_BITS
from septet_platform.ladders.models import Ladder
from septet_platform.matches.services import bot_sandbox, version_folder


def bot_version_qualify(*, version_id: int) -> BotVersion:
    """Builds (once) and plays the qualifying games of a QUALIFYING version, then sets it ACTIVE
    or FAILED (idempotent)."""
    version = BotVersion.objects.select_related("bot").get(pk=version_id)
    if version.status != BotVersion.Status.QUALIFYING:
        return version
    sandbox = bot_sandbox()
    if version.build_status in (BotVersion.Build.PENDING, BotVersion.Build.BUILDING):
        version = bot_version_build(version_id=version_id, sandbox=sandbox)
    played: dict[str, dict[str, object]] = {}
    if version.build_status == BotVersion.Build.BUILT:
        problems = _qualifying_games(version, sandbox, played)
    elif version.build_status == BotVersion.Build.FAILED:
        problems = [f"the build failed:\n{version.build_log}"]
    else:  # another worker is building it: it qualifies when that build is done
        return version
    return _decide(version_id, problems, played)


def _decide(version_id: int, problems: list[str], played: dict[str, dict[str, object]]) -> BotVersion:
    with transaction.atomic():
        version = BotVersion.objects.select_for_update().get(pk=version_id)
        if version.status != BotVersion.Status.QUALIFYING:
            return version
        stamp = timezone.now().isoformat(timespec="seconds")
        version.qualification = played
        if problems:
            version.status = BotVersion.Status.FAILED
            lines = "".join(f"{stamp} qualification: {problem}\n" for problem in problems)
        else:
            version.qualified = timezone.now()
            version.status, lines = _activation(version, stamp)
        version.error_log = bounded_log(version.error_log + lines)
        version.save()
    return version


def _activation(version: BotVersion, stamp: str) -> tuple[str, str]:
    """The status of a version that passed, and its log line: ACTIVE (retiring the bot's older
    active versions) unless a newer version is already active, which stays so: qualifications
    finishing out of order never put an older version back in play (it is RETIRED instead). The
    bot's row is locked first, so two versions deciding at once see each other's outcome."""
    Bot.objects.select_for_update().filter(pk=version.bot_id).first()
    active = BotVersion.objects.filter(bot=version.bot, status=BotVersion.Status.ACTIVE)
    newer = active.filter(number__gt=version.number).order_by("-number").first()
    if newer is not None:
        kept = f"{stamp} qualification: passed; v{newer.number} is newer and stays active\n"
        return BotVersion.Status.RETIRED, kept
    active.update(status=BotVersion.Status.RETIRED)
    return BotVersion.Status.ACTIVE, f"{stamp} qualification: passed\n"


def _qualifying_games(
    version: BotVersion, sandbox: Sandbox | None, played: dict[str, dict[str, object]]
) -> list[str]:
    """One game of each declared game that has a ladder; the problems found, if any."""
    games = [game for game in version.manifest.get("games", []) if Ladder.objects.filter(game=game).exists()]
    if not games:
        return ["the manifest declares no game that has a ladder here"]
    problems: list[str] = []
    for game_id in games:
        problems += _qualifying_game(version, game_id, sandbox, played)
    return problems


def _qualifying_game(
    version: BotVersion, game_id: str, sandbox: Sandbox | None, played: dict[str, dict[str, object]]
) -> list[str]:
    """Plays one game at a table like a rated one: a fresh process of the bot, a random seat, id
    and seed, the ladder's time control, house opponents."""
    ladder = Ladder.objects.get(game=game_id)
    game = get_game(game_id)
    seed = secrets.randbits(SEED_BITS)
    match_id = new_match_id()
    seat = secrets.randbelow(game.players.start)
    played[game_id] = {"match_id": match_id, "seed": seed, "seat": seat}
    try:
        bot = start_bot(version_folder(version), sandbox=sandbox)
    except BotFolderError as error:
        return [f"{game_id}: the bot did not start: {error}"]
    player = GrpcPlayer(bot.address, f"{version.bot.name} v{version.number}")
    try:
        with _opponents(version, game_id, game.players.start - 1, sandbox) as opponents:
            players: list[Player] = list(opponents)
            players.insert(seat, player)
            played[game_id]["seats"] = [getattr(each, "name", "") for each in players]
            outcome = play_match(
                game,
                players,
                seed=seed,
                time_control=TimeControl(ladder.decision_seconds, ladder.bank_seconds),
                match_id=match_id,
            )
    finally:
        player.close()
        tail = bot.stderr_tail()
        bot.stop()
    forfeits = [forfeit for forfeit in outcome.forfeits if forfeit.seat == seat]
    problems = [f"{game_id}: {forfeit.status}: {forfeit.reason}" for forfeit in forfeits]
    if problems and tail:
        problems.append(f"the bot's last output:{tail}")
    return problems


@contextmanager
def _opponents(
    version: BotVersion, game_id: str, count: int, sandbox: Sandbox | None
) -> Iterator[list[Player]]:
    """`count` opponents: the ladder's active house bots (other bots than this one), started from
    their built folders in the sandbox as rated matches start them, then built-in random players."""
    house = list(
        BotVersion.objects.filter(status=BotVersion.Status.ACTIVE, bot__is_house=True)
        .exclude(bot=version.bot)
        .select_related("bot")
    )
    house = [candidate for candidate in house if game_id in candidate.manifest.get("games", [])]
    random.SystemRandom().shuffle(house)
    players: list[Player] = []
    with ExitStack() as stack:
        for candidate in house:
            if len(players) == count:
                break
            try:
                running: RunningBot = start_bot(version_folder(candidate), sandbox=sandbox)
            except BotFolderError:
                continue
            stack.callback(running.stop)
            grpc_player = GrpcPlayer(running.address, f"{candidate.bot.name} v{candidate.number}")
            stack.callback(grpc_player.close)
            players.append(grpc_player)
        while len(players) < count:
            players.append(RandomPlayer(random.Random(secrets.randbits(64)), name="random"))
        yield players
