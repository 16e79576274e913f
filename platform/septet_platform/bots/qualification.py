"""Qualifying a submitted version: it is built once, then plays one game of each game it declares.

First the version is built (`services.bot_version_build`: once, offline, in the sandbox; a
submission's build runs in the build pool, bots.build_budget, which then queues this); a build
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

While it plays, `BotVersion.qualification` is saved after each step (each game's entry says
whether it is over, whether it found a problem, and the name the bot reported), so its owner can
follow it (`qualification_progress`): six games of a slow bot take minutes. The failure log says
each distinct problem once with the games it happened in, and each distinct last output of the
bot once: a bot that cannot start is not started again for its other games (they would start the
same command), and six games failing alike read as one problem, not six tracebacks.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from referee.engine.games import get_game
from referee.engine.match import TimeControl, new_match_id, play_match
from referee.engine.players import Player, RandomPlayer
from referee.tools.botfolder import BotFolderError, RunningBot
from referee.tools.building import bounded_log
from referee.tools.grpc_player import GrpcPlayer
from referee.tools.lineup import reported_name
from referee.tools.sandbox import Sandbox
from septet_platform.bots.build_budget import has_build_step
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.services import bot_version_build
from septet_platform.ladders.matchmaking import SEED_BITS
from septet_platform.ladders.models import Ladder
from septet_platform.matches.services import bot_sandbox, version_start


def bot_version_qualify(*, version_id: int, build_here: bool = True) -> BotVersion:
    """Builds (once) and plays the qualifying games of a QUALIFYING version, then sets it ACTIVE
    or FAILED (idempotent). A version whose build failed is FAILED with the build's log, with no
    game played. `build_here=False` (the qualification task, on a match worker) never runs a
    build: a version with a build still to run is returned as it is, for the build task
    (bots.build_budget); one with nothing to build is marked built at once."""
    version = BotVersion.objects.select_related("bot").get(pk=version_id)
    if version.status != BotVersion.Status.QUALIFYING:
        return version
    if version.build_status == BotVersion.Build.FAILED:
        return _decide(version_id, [f"the build failed:\n{version.build_log}"], {})
    if version.build_status != BotVersion.Build.BUILT and not build_here and has_build_step(version):
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


@dataclass(frozen=True)
class GameProblem:
    """What went wrong in one qualifying game (`problem`, without the game id) and the last lines
    the bot wrote there (`output`, "" when none or when the game went well)."""

    game: str
    problem: str
    output: str = ""
    started: bool = True
    """False when the bot did not start: nothing of the game was played."""


@dataclass(frozen=True)
class QualificationProgress:
    """How far a QUALIFYING version has got, for its owner to follow: `step` is "queued" (no
    worker has taken it yet), "building" or "playing"; while playing, the games it plays in
    order, how many are over and how many of those found a problem, and the one being played
    ("" between games)."""

    step: str
    games: tuple[str, ...] = ()
    games_over: int = 0
    games_failed: int = 0
    game: str = ""


def qualifying_game_ids(version: BotVersion) -> list[str]:
    """The games `version` qualifies on: those its manifest declares that have a ladder here."""
    declared = [game for game in version.manifest.get("games", []) if isinstance(game, str)]
    laddered = set(
        Ladder.objects.filter(game__in=declared, pool=Ladder.Pool.SANDBOXED).values_list("game", flat=True)
    )
    return [game for game in declared if game in laddered]


def qualification_progress(version: BotVersion) -> QualificationProgress | None:
    """Where a QUALIFYING version's qualification is, from what the worker saved as it went
    (`BotVersion.qualification`); None once the version is no longer qualifying."""
    if version.status != BotVersion.Status.QUALIFYING:
        return None
    played: dict[str, dict[str, object]] = version.qualification or {}
    if not played and version.build_status != BotVersion.Build.BUILT:
        building = version.build_status == BotVersion.Build.BUILDING
        return QualificationProgress(step="building" if building else "queued")
    games = tuple(qualifying_game_ids(version))
    over = [game for game in games if played.get(game, {}).get("over")]
    playing = [game for game in games if game in played and not played[game].get("over")]
    return QualificationProgress(
        step="playing",
        games=games,
        games_over=len(over),
        games_failed=sum(1 for game in over if played[game].get("problem")),
        game=playing[0] if playing else "",
    )


def reported_names(version: BotVersion) -> list[str]:
    """The names the bot's processes reported in its qualifying games (each once, in the order
    of its games); empty when it reported none (not every bot does: bot.proto has no field)."""
    played: dict[str, dict[str, object]] = version.qualification or {}
    names: list[str] = []
    for game in version.manifest.get("games", []):
        name = played.get(game, {}).get("reported_name") if isinstance(game, str) else None
        if isinstance(name, str) and name and name not in names:
            names.append(name)
    return names


def _qualifying_games(
    version: BotVersion, sandbox: Sandbox | None, played: dict[str, dict[str, object]]
) -> list[str]:
    """One game of each declared game that has a ladder, saving progress after each step; the
    problems found, if any, as the lines of the failure log (`failure_report`)."""
    games = qualifying_game_ids(version)
    if not games:
        return ["the manifest declares no game that has a ladder here"]
    problems: list[GameProblem] = []
    for index, game_id in enumerate(games):
        problem = _qualifying_game(version, game_id, sandbox, played)
        played[game_id].update(over=True, problem=problem is not None)
        _save_progress(version, played)
        if problem is None:
            continue
        problems.append(problem)
        if not problem.started:
            untried = games[index + 1 :]
            return failure_report(problems, games[: index + 1]) + _untried(untried)
    return failure_report(problems, games)


def _untried(games: Sequence[str]) -> list[str]:
    if not games:
        return []
    return [f"not played: {', '.join(games)} (each would start the bot the same way)"]


def failure_report(problems: Sequence[GameProblem], games: Sequence[str]) -> list[str]:
    """The failure log's lines for `problems` found in the qualifying `games`: each distinct
    problem once, saying where ("in all 6 games" when in every one), then each distinct last
    output of the bot once, saying where too; [] when there is no problem."""
    lines = [f"{_where(where, games)}: {problem}" for problem, where in _grouped(problems, "problem").items()]
    outputs = _grouped([problem for problem in problems if problem.output], "output")
    for output, where in outputs.items():
        lines.append(f"the bot's last output ({_where(where, games)}):{output}")
    return lines


def _grouped(problems: Sequence[GameProblem], field: str) -> dict[str, list[str]]:
    """The games of `problems` grouped by the text of `field`, in the order first seen."""
    groups: dict[str, list[str]] = {}
    for problem in problems:
        groups.setdefault(getattr(problem, field), []).append(problem.game)
    return groups


def _where(where: Sequence[str], games: Sequence[str]) -> str:
    """The games a problem happened in, in words: "oh7", "in all 6 games", "in 2 games (a, b)"."""
    if len(where) == 1:
        return where[0]
    if len(where) == len(games):
        return f"in all {len(games)} games"
    return f"in {len(where)} games ({', '.join(where)})"


def _save_progress(version: BotVersion, played: dict[str, dict[str, object]]) -> None:
    """Saves the qualification so far while the version still qualifies (an owner follows it)."""
    BotVersion.objects.filter(pk=version.pk, status=BotVersion.Status.QUALIFYING).update(qualification=played)


def _qualifying_game(
    version: BotVersion, game_id: str, sandbox: Sandbox | None, played: dict[str, dict[str, object]]
) -> GameProblem | None:
    """Plays one game at a table like a rated one: a fresh process of the bot, a random seat, id
    and seed, the ladder's time control, house opponents; what went wrong, or None."""
    ladder = Ladder.objects.get(game=game_id, pool=Ladder.Pool.SANDBOXED)
    game = get_game(game_id)
    seed = secrets.randbits(SEED_BITS)
    match_id = new_match_id()
    seat = secrets.randbelow(game.players.start)
    played[game_id] = {"match_id": match_id, "seed": seed, "seat": seat, "over": False}
    _save_progress(version, played)
    try:
        bot = version_start(version, sandbox=sandbox)  # its folder held until it stops
    except BotFolderError as error:
        return GameProblem(game_id, f"the bot did not start: {error}", started=False)
    # Its exit code or signal if it dies mid-game (never its output: a forfeit reason is published).
    player = GrpcPlayer(bot.address, f"{version.bot.name} v{version.number}", exited=bot.exit_status)
    try:
        played[game_id]["reported_name"] = reported_name(bot.address) or ""
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
    if not forfeits:
        return None
    problem = "; ".join(f"{forfeit.status}: {forfeit.reason}" for forfeit in forfeits)
    return GameProblem(game_id, problem, tail)


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
                running: RunningBot = version_start(candidate, sandbox=sandbox)
            except BotFolderError:
                continue
            stack.callback(running.stop)
            grpc_player = GrpcPlayer(running.address, f"{candidate.bot.name} v{candidate.number}")
            stack.callback(grpc_player.close)
            players.append(grpc_player)
        while len(players) < count:
            players.append(RandomPlayer(random.Random(secrets.randbits(64)), name="random"))
        yield players
