"""Playing a scheduled match: claim it, run the referee with the seated bots, record it once.

A match is claimed by one UPDATE from SCHEDULED to RUNNING that also bumps its `attempt` and sets
a lease; the result is written only if the row is still RUNNING under that attempt, so a task
delivered twice (late acks, a visibility timeout) plays at most once and records exactly once.
A failure that is not a bot's fault (an exception of ours, a worker that dies: its lease runs out
and `matches_reap` puts the match back) voids the attempt: the match is scheduled again and
nothing is scored. A bot that does not start, crashes or misbehaves forfeits its seat, as the
referee's forfeit policy says; the other seats' game is played out.

Every bot process runs inside the bubblewrap sandbox (`bot_sandbox`); a sandbox that cannot be
made is our failure (the attempt is voided), unless `SEPTET_ALLOW_UNSANDBOXED` is set for local
development. Every seat is its own process, even when one version fills two seats (a process
serving two seats would see both hands), all from one read-only copy of the version unpacked
once per worker process (`unpacked.py`). House bots' processes stay warm between matches of one
worker (`warm.py`), never for a seed they played; a submitted bot's process lives for its match
only. The bots see a random match id, unrelated to the match's row, seed or kind.

A claim's lease is renewed while the referee plays (`_LeaseKeeper`), so a long match is never
handed to another worker as if its worker had died; a match's length is bounded anyway by each
seat's budget for the whole match (`TimeControl.seat_budget`), so a slow bot forfeits rather than
holding the match until its result is thrown away.

The rotations of one duplicate set (one deal, the seats rotated) never play at the same time: they
seat the same bots, and two of a bot's processes (or two colluding bots' processes) playing the
same deal at once could pass each other the hands they hold through any channel the machine
leaves them. A claim therefore also checks, under a lock on the set's rows, that no other rotation
of its set is RUNNING; a delivery that finds one leaves its match SCHEDULED ("set playing"), and
the worker that records a rotation plays the set's next one at once (`match_play_set`), rather
than send it to the back of a queue a few ticks long for every rotation; the reaper queues any
rotation left waiting with no task (a worker that died in between) as a lost task.

Recovery in under a minute (the beat runs `matches_reap_task` every 10 s): a dead worker's lease
(LEASE, renewed every third of it) runs out within LEASE and the match is queued again; a match
recorded but not rated (its worker died between the two) is rated by `matches_rate_unrated`; a
SCHEDULED match whose task is in none of the broker's queues nor held by a worker (a broker
restarted without its queue) is queued again by `matches_requeue_stale` (see `lost.py`).

A replay is written durably (temporary file, fsync, rename, folder fsync) before the result is
committed, with its size and SHA-256 stored on the match. A replay that cannot be written voids
the attempt (no result, no rating, no forfeit: not a bot's fault) and pauses this worker's taking
of matches until the replay folder can be written again (`storage.py`).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, models, transaction
from django.db.models import F
from django.utils import timezone

import referee
from referee.engine import replay as replays
from referee.engine.games import get_game
from referee.engine.games.base import Action, Game
from referee.engine.match import (
    REPLAY_FORMAT,
    Forfeit,
    MatchResult,
    PlayerError,
    TimeControl,
    new_match_id,
    play_match,
)
from referee.engine.players import Player
from referee.tools.bot_logs import CapturedLog, captured_text, log_size, read_log_tail
from referee.tools.botfolder import BotFolderError, RunningBot, launch_bot
from referee.tools.grpc_player import GrpcPlayer
from referee.tools.sandbox import Sandbox, SandboxError, check_available
from referee.tools.sandbox_seccomp import SeccompUnavailable, compiled_filter
from septet_platform.blobs.stores import archive_store, read_checked, replay_store
from septet_platform.bots.models import BotVersion
from septet_platform.ladders.services import RatingError, ratings_apply
from septet_platform.live.bot_relay import RelayedBotPlayer
from septet_platform.live.relay import RemoteSeatPlayer
from septet_platform.live.streams import LivePublisher, live_end, stream_end
from septet_platform.matches import lost, storage
from septet_platform.matches.models import Match, Seat, SeatLog
from septet_platform.matches.selectors import match_is_published
from septet_platform.matches.unpacked import Held, UnpackedFolders, process_folders
from septet_platform.matches.warm import WarmBot, WarmHouseBots

log = logging.getLogger(__name__)
WARM_HOUSE_BOTS = WarmHouseBots()
"""This worker process's idle house-bot processes (see warm.py)."""

LEASE = timedelta(seconds=30)
"""How long a claim holds before the reaper may hand the match to another worker; renewed every
third of it while the match plays (`_LeaseKeeper`), so only a dead worker lets it run out (a
database blip of up to two renewals is absorbed). With the reaper every 10 s, a dead worker's
match is queued again at most 40 s after its last renewal."""
PERSON_DECISION_SECONDS = 30.0
"""A person's time per decision when their seat names none."""
PERSON_MATCH_DECISIONS = 200
"""A person's budget for the whole match: their bank plus this many decision times (an Oh Hell!
game asks a seat about 130 decisions), so a person who answers within their clock never runs out."""
UNRATED_GRACE = timedelta(seconds=5)
"""A finished match is left this long to the worker that recorded it before the sweep rates it
(rating twice is harmless anyway: `ratings_apply` is idempotent)."""


def bot_sandbox() -> Sandbox | None:
    """The sandbox submitted bots run in. None only when bubblewrap cannot work here and
    settings.SEPTET_ALLOW_UNSANDBOXED allows running them bare (local development); otherwise
    SandboxError, which voids the match or postpones the qualification (never the bot's fault)."""
    try:
        check_available()
    except SandboxError as error:
        if getattr(settings, "SEPTET_ALLOW_UNSANDBOXED", False):
            log.warning("running submitted bots WITHOUT a sandbox (SEPTET_ALLOW_UNSANDBOXED): %s", error)
            return None
        raise
    if getattr(settings, "SEPTET_REQUIRE_SECCOMP", False):
        try:
            compiled_filter()
        except SeccompUnavailable as error:
            raise SandboxError(
                f"SEPTET_REQUIRE_SECCOMP is set and the seccomp filter is unavailable: {error}"
            ) from None
    return Sandbox()


class _NotStarted:
    """The seat of a bot that could not be started: it forfeits at its first decision."""

    concurrent = False

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        raise PlayerError(f"did not start: {self.reason}")


@dataclass(frozen=True)
class Played:
    """What `match_play` did with a match."""

    match_id: int
    outcome: str  # "recorded", "not claimed", SET_PLAYING, "voided", "lost its claim", or see PLAY_AGAIN
    attempt: int = 0


SET_PLAYING = "set playing"
"""The outcome when another rotation of the match's duplicate set is RUNNING: the match stays
SCHEDULED, and that rotation's worker plays it next (`match_play_set`)."""


class _SetPlaying(Exception):
    """Raised inside a claim's transaction: another rotation of the set holds the deal."""


PLAY_AGAIN = frozenset({"voided", "storage failed", "storage unavailable"})
"""Outcomes after which the match is SCHEDULED and its task is queued again after a pause: an
attempt voided by our failure, a replay that could not be written, a worker not taking matches
while replays cannot be written."""


def match_claim(*, match_id: int, worker: str, now: datetime | None = None) -> int | None:
    """Claims a SCHEDULED match for `worker`; returns the claim's attempt number, or None (not
    SCHEDULED, or another rotation of its set is playing)."""
    try:
        claimed = _claimed(match_id=match_id, worker=worker, now=now)
    except _SetPlaying:
        return None
    return None if claimed is None else claimed.attempt


def _claimed(*, match_id: int, worker: str, now: datetime | None = None) -> Match | None:
    """Claims a SCHEDULED match for `worker` (one UPDATE) and reads it back with its ladder and
    tournament (one SELECT): the claimed row, whose `attempt` is the claim's (nothing else can
    change it while the claim's lease holds), or None when the match was not SCHEDULED.

    A match of a duplicate set first locks its set's rows (in id order, so two claims in one set
    queue rather than deadlock; PostgreSQL then reads them as committed) and raises _SetPlaying
    if another rotation is RUNNING. SQLite's IMMEDIATE transactions hold the write lock anyway."""
    now = now or timezone.now()
    with transaction.atomic():
        duplicate_set = (
            Match.objects.filter(pk=match_id, status=Match.Status.SCHEDULED)
            .values_list("duplicate_set", flat=True)
            .first()
        )
        if duplicate_set is None:
            return None
        if duplicate_set:
            rotations = Match.objects.select_for_update().filter(duplicate_set=duplicate_set).order_by("pk")
            if any(
                pk != match_id and status == Match.Status.RUNNING
                for pk, status in rotations.values_list("pk", "status")
            ):
                raise _SetPlaying(duplicate_set)
        claimed = Match.objects.filter(pk=match_id, status=Match.Status.SCHEDULED).update(
            status=Match.Status.RUNNING,
            attempt=F("attempt") + 1,
            worker=worker,
            started=now,
            lease_until=now + LEASE,
        )
    if not claimed:
        return None
    return Match.objects.select_related("ladder", "tournament").get(pk=match_id)


def duplicate_set_next(*, match_id: int) -> int | None:
    """The rotation of `match_id`'s duplicate set to queue now that `match_id` is done with its
    deal: the first SCHEDULED one (by rotation), if no rotation of the set is RUNNING; else None
    (a set of one, a set still playing, a set that is over)."""
    duplicate_set = Match.objects.filter(pk=match_id).values_list("duplicate_set", flat=True).first()
    if not duplicate_set:
        return None
    rotations = list(
        Match.objects.filter(duplicate_set=duplicate_set)
        .exclude(pk=match_id)
        .order_by("rotation", "pk")
        .values_list("pk", "status")
    )
    if any(status == Match.Status.RUNNING for _, status in rotations):
        return None
    return next((pk for pk, status in rotations if status == Match.Status.SCHEDULED), None)


def version_folder(version: BotVersion) -> Path:
    """The built bot folder of a version, unpacked once per worker process into the process's
    cache (`unpacked.py`: on the worker's local disk, keyed by the archive's SHA-256, which is
    checked first; read-only, files 0444/0555 and folders 0555 owned by the worker's user, never
    by the sandbox's), so a playing bot can neither change it nor lock a file in it to signal;
    nothing is ever built here (a version is built once, at intake).

    Not held: the cache may remove it once it needs the room. A bot started from it is started
    with `version_launch` or `version_start`, which hold it until the bot stops."""
    held = _version_held(version)
    held.release()
    return held.folder


def version_launch(version: BotVersion, *, sandbox: Sandbox | None) -> RunningBot:
    """`launch_bot` of the version's folder, held in this process's cache until the bot stops:
    every seat of the version in this process plays from one unpacked copy."""
    held = _version_held(version)
    try:
        bot = launch_bot(held.folder, sandbox=sandbox)
    except BaseException:
        held.release()
        raise
    bot.when_stopped(held.release)
    return bot


def version_start(version: BotVersion, *, sandbox: Sandbox | None) -> RunningBot:
    """`version_launch`, then waits until the bot serves (BotFolderError, the bot stopped, if not)."""
    bot = version_launch(version, sandbox=sandbox)
    bot.wait_until_healthy()
    return bot


def unpacked_folders() -> UnpackedFolders:
    """This worker process's cache of unpacked versions (SEPTET_UNPACKED_DIR, at most
    SEPTET_UNPACKED_CACHE_BYTES beyond the folders running bots hold)."""
    return process_folders(Path(settings.SEPTET_UNPACKED_DIR), int(settings.SEPTET_UNPACKED_CACHE_BYTES))


def _version_held(version: BotVersion) -> Held:
    """The version's folder (its manifest's folder inside the unpacked archive), held."""
    archive, digest, size = _playable_archive(version)
    store = archive_store()
    held = unpacked_folders().hold(
        archive=archive, digest=digest, read=lambda: read_checked(store, archive, size=size, sha256=digest)
    )
    try:
        held.folder = _manifest_root(held.folder)
        if version.manifest.get("build"):
            from referee.tools.botfolder import load_manifest, mark_built

            with contextlib.suppress(OSError):  # a worker without a writable home still plays
                mark_built(load_manifest(held.folder))  # a local, unsandboxed start must not build
    except BaseException:
        held.release()
        raise
    return held


def _playable_archive(version: BotVersion) -> tuple[str, str, int]:
    """The archive a version plays (its name in the archive store), its SHA-256 and size: the
    built one; the upload for a version with no build step. A version with a build that is not
    BUILT, or whose archives were pruned for its owner's storage quota (`bots.quota`), cannot play
    (BotFolderError)."""
    if version.archive_pruned is not None:
        raise BotFolderError(
            f"{version.bot.name} v{version.number}: archive pruned (its owner's storage quota), "
            "it plays no more"
        )
    if version.build_status == BotVersion.Build.BUILT and version.built_archive:
        return version.built_archive, version.built_sha256, version.built_bytes
    if version.manifest.get("build"):
        raise BotFolderError(f"{version.bot.name} v{version.number} is not built ({version.build_status})")
    return version.archive, version.archive_sha256, version.archive_bytes


def _manifest_root(target: Path) -> Path:
    if (target / "septet-bot.toml").is_file():
        return target
    return next(path.parent for path in target.glob("*/septet-bot.toml"))


def match_play(*, match_id: int, worker: str) -> Played:
    """Claims, plays and records one match (see the module docstring for the guarantees). Takes
    nothing while replays cannot be written ("storage unavailable")."""
    if not storage.replays_writable().ok:
        log.warning("not taking a match: replays cannot be written", extra={"match_id": match_id})
        return Played(match_id, "storage unavailable")
    try:
        match = _claimed(match_id=match_id, worker=worker)
    except _SetPlaying:
        log.info("match left waiting: another rotation of its set is playing", extra={"match_id": match_id})
        return Played(match_id, SET_PLAYING)
    if match is None:
        log.info("match not claimed", extra={"match_id": match_id, "worker": worker})
        _ratings_catch_up(match_id)
        return Played(match_id, "not claimed")
    attempt = match.attempt
    context = {"match_id": match_id, "attempt": attempt, "worker": worker, "game": match.ladder.game}
    log.info("match claimed", extra=context)
    started = time.monotonic()
    seats = list(
        Seat.objects.filter(match=match).select_related("bot_version__bot", "player").order_by("seat")
    )
    bot_seats = [seat for seat in seats if not seat.is_person]
    running: dict[int, RunningBot] = {}
    warm: dict[int, WarmBot] = {}
    clean: set[int] = set()
    players: list[Player] = []
    sandbox: Sandbox | None = None
    log_starts: dict[int, int] = {}
    logs: dict[int, CapturedLog] = {}
    start_errors: dict[int, str] = {}
    publisher: LivePublisher | None = None
    try:
        with _LeaseKeeper(match_id, attempt):
            game = get_game(match.ladder.game)
            time_control = _time_control(match)
            publisher = _live_publisher(match, seats, game, time_control)
            sandbox = bot_sandbox()
            bots = _players(
                bot_seats, running, sandbox, seed=match.seed, warm=warm, start_errors=start_errors
            )
            players.extend(_seated(seats, bots, publisher))
            log_starts = {number: log_size(running[number].log_path) for number in warm}
            publisher.begin()
            outcome = play_match(
                game,
                players,
                seed=match.seed,
                time_control=time_control,
                seat_time_controls=_seat_time_controls(seats),
                match_id=new_match_id(),
                observer=publisher,
            )
        clean = {seat.seat for seat in seats} - {forfeit.seat for forfeit in outcome.forfeits}
    except Exception:
        log.exception("match voided by an infrastructure failure", extra=context)
        _void(match, attempt, publisher=publisher)
        return Played(match_id, "voided", attempt)
    finally:
        logs = _seat_logs(running, log_starts)  # before the bots stop: their scratch goes with them
        logs |= {number: captured_text(error) for number, error in start_errors.items()}
        seated = dict(zip([seat.seat for seat in seats], players, strict=False))  # empty if none started
        bot_players = [seated[seat.seat] for seat in bot_seats if seat.seat in seated]
        _bots_done(bot_seats, running, warm, sandbox, seed=match.seed, clean=clean, players=bot_players)
    try:
        recorded = match_record(match_id=match_id, attempt=attempt, outcome=outcome, logs=logs, seats=seats)
    except OSError as error:
        health = storage.storage_failed(error)
        log.error("match voided: its replay could not be written", extra={**context, "reason": health.reason})
        _void(match, attempt, publisher=publisher)
        return Played(match_id, "storage failed", attempt)
    assert publisher is not None  # made before the match could be played
    if not recorded:
        log.warning("match lost its claim before recording", extra=context)
        publisher.end(live_end(status="voided", reason="another worker took this match over"))
        return Played(match_id, "lost its claim", attempt)
    match.status = Match.Status.ABORTED if outcome.result.ranks is None else Match.Status.FINISHED
    publisher.end(
        live_end(status=match.status, reason=outcome.result.reason, replay=match_is_published(match))
    )
    if match.rated:
        ratings_apply(match=match)  # idempotent; one writer per ladder (it reads the match itself)
    forfeits = [f"seat {forfeit.seat}: {forfeit.status.name}" for forfeit in outcome.forfeits]
    log.info(
        "match recorded",
        extra={**context, "seconds": round(time.monotonic() - started, 3), "forfeits": forfeits},
    )
    return Played(match_id, "recorded", attempt)


def match_play_set(*, match_id: int, worker: str) -> list[Played]:
    """Plays `match_id` (`match_play`), then, as long as each is recorded, its duplicate set's
    next rotations, one after another: the deal is this worker's until the set is over. A
    rotation not recorded (voided, its claim lost) ends the run; its task, or the reaper, takes
    the set on from there."""
    played = [match_play(match_id=match_id, worker=worker)]
    while played[-1].outcome == "recorded":
        next_rotation = duplicate_set_next(match_id=played[-1].match_id)
        if next_rotation is None:
            break
        played.append(match_play(match_id=next_rotation, worker=worker))
    return played


VOIDED_TABLE_REASON = (
    "the game was stopped by a failure of the platform, not of any player; start a new table"
)
"""Why a table with a person at it ends when its attempt is voided: it is not played again from the
start, since the person has seen the deal."""


def _void(match: Match, attempt: int, *, publisher: LivePublisher | None = None) -> None:
    """Puts the match back to SCHEDULED if `attempt` still holds it: nothing recorded, nothing
    scored (a failure of ours, not a bot's). A table with a person at it is cancelled instead,
    saying why, rather than dealt again to someone who has seen the cards. Its viewers are told."""
    person = Seat.objects.filter(match=match, player__isnull=False).exists()
    if person:
        Match.objects.filter(pk=match.pk, status=Match.Status.RUNNING, attempt=attempt).update(
            status=Match.Status.CANCELLED,
            worker="",
            lease_until=None,
            finished=timezone.now(),
            end_reason=VOIDED_TABLE_REASON,
        )
    else:
        Match.objects.filter(pk=match.pk, status=Match.Status.RUNNING, attempt=attempt).update(
            status=Match.Status.SCHEDULED, worker="", lease_until=None
        )
    if publisher is not None:
        reason = VOIDED_TABLE_REASON if person else "the game is played again from the start"
        publisher.end(live_end(status="voided", reason=reason))


class _LeaseKeeper:
    """Renews a claim's lease every third of LEASE while the match plays, so the reaper takes
    back only the matches of dead workers, however long a match takes (a context manager)."""

    def __init__(self, match_id: int, attempt: int) -> None:
        self.match_id = match_id
        self.attempt = attempt
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease-{match_id}", daemon=True)
        self.renewals = 0

    def __enter__(self) -> _LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stop.wait(LEASE.total_seconds() / 3):
                if not self._renew():
                    return  # the claim is gone (reaped or recorded): nothing left to hold
        finally:
            connection.close()  # this thread's own connection

    def _renew(self) -> bool:
        try:
            renewed = Match.objects.filter(
                pk=self.match_id, status=Match.Status.RUNNING, attempt=self.attempt
            ).update(lease_until=timezone.now() + LEASE)
        except Exception:  # a database blip: try again at the next beat, the lease has slack
            log.warning("could not renew a match's lease", extra={"match_id": self.match_id}, exc_info=True)
            return True
        self.renewals += renewed
        return bool(renewed)


def _live_publisher(match: Match, seats: list[Seat], game: Game, time_control: TimeControl) -> LivePublisher:
    """The match's live streams for this attempt: the public one, and each person's seat's own."""
    controls = _seat_time_controls(seats)
    header = {
        "format": REPLAY_FORMAT,
        "engine": f"septet {referee.__version__}",
        "game": game.id,
        "options": game.check_options({}),
        "seats": [
            {"seat": seat.seat, "name": seat_name(seat)}
            | ({"time_control": controls[seat.seat].to_json()} if seat.seat in controls else {})
            for seat in seats
        ],
        "time_control": time_control.to_json(),
    }
    return LivePublisher(
        match_id=match.pk,
        attempt=match.attempt,
        game=game,
        num_players=len(seats),
        header=header,
        seats=[seat.seat for seat in seats if seat.is_person],
    )


def seat_name(seat: Seat) -> str:
    """How a seat is named in replays and live streams: `bot vN`, or a person's user name."""
    if seat.player is not None:
        return seat.player.get_username()
    version = seat.bot_version
    assert version is not None
    return f"{version.bot.name} v{version.number}"


def _seat_time_controls(seats: list[Seat]) -> dict[int, TimeControl]:
    """Each person's seat's own time control (a generous one: docs/live.md)."""
    controls = {}
    for seat in seats:
        if seat.is_person:
            decision, bank = seat.decision_seconds or PERSON_DECISION_SECONDS, seat.bank_seconds or 0.0
            budget = bank + PERSON_MATCH_DECISIONS * decision
            controls[seat.seat] = TimeControl(decision, bank, match_seconds=budget)
    return controls


def _seated(seats: list[Seat], bots: dict[int, Player], publisher: LivePublisher) -> list[Player]:
    """Every seat's player in seat order: the bots', and a remote seat for each person."""
    players: list[Player] = []
    for seat in seats:
        if seat.is_person:
            players.append(
                RemoteSeatPlayer(
                    seat_name(seat),
                    match_id=seat.match_id,
                    seat=seat.seat,
                    stream_key=publisher.key(seat.seat),
                    prompt=publisher.seat_message,
                )
            )
        else:
            players.append(bots[seat.seat])
    return players


def _time_control(match: Match) -> TimeControl:
    """A tournament's own time control for its matches; the ladder's for every other match."""
    rules = match.tournament if match.tournament is not None else match.ladder
    return TimeControl(rules.decision_seconds, rules.bank_seconds)


def _ratings_catch_up(match_id: int) -> None:
    """Applies the ratings of a match recorded by a delivery that failed before it could (the
    database went away between the two): the retry finds the match FINISHED and finishes the job."""
    unrated = Match.objects.filter(
        pk=match_id, status=Match.Status.FINISHED, rated=True, ratings_applied=False
    ).first()
    if unrated is not None:
        ratings_apply(match=unrated)


def _players(
    seats: list[Seat],
    running: dict[int, RunningBot],
    sandbox: Sandbox | None,
    *,
    seed: int,
    warm: dict[int, WarmBot],
    start_errors: dict[int, str] | None = None,
) -> dict[int, Player]:
    """One gRPC player per bot seat (by seat number), each its own process (in `sandbox`), even
    for a version seated twice: one process serving two seats would see both hands. A failed start
    forfeits its seat; a sandbox that cannot be made raises SandboxError (voids the attempt). A
    house bot's seat takes a warm process of an earlier match when one has not played `seed`
    (`warm.py`).

    `running` and `warm` are filled by seat number, and `start_errors` with the whole error of a
    seat that did not start (its output's tail included; its forfeit reason is the first line).
    The processes are launched one after another on this thread (a sandboxed bot dies with the
    thread that launched it) and then waited for together, since a start is mostly waiting for the
    bot to serve. Every launched bot is in `running` before anything can raise, so the caller
    stops it whatever happens. A warm process comes with the referee's channel to it, opened when
    it first played (`WarmBot.player`): one connection per process, not one per match."""
    failed: dict[int, str] = {}
    launched: list[int] = []
    for seat in seats:
        version = seat.bot_version
        if version.bot.self_hosted:
            continue  # played from its owner's machine, over the Arena's Connect stream
        reused = WARM_HOUSE_BOTS.take(version.pk, seed) if _keeps_warm(version, sandbox) else None
        if reused is not None:
            running[seat.seat], warm[seat.seat] = reused.bot, reused
            continue
        try:
            running[seat.seat] = version_launch(version, sandbox=sandbox)
            launched.append(seat.seat)
        except BotFolderError as error:
            failed[seat.seat] = str(error)
    with ThreadPoolExecutor(max_workers=max(len(launched), 1)) as pool:
        waits = {number: pool.submit(running[number].wait_until_healthy) for number in launched}
    for number, wait in waits.items():
        try:
            wait.result()
        except BotFolderError as error:
            failed[number] = str(error)
    if start_errors is not None:
        start_errors.update(failed)
    players: dict[int, Player] = {}
    for seat in seats:
        name = seat_name(seat)
        kept = warm.get(seat.seat)
        if seat.bot_version.bot.self_hosted:
            players[seat.seat] = RelayedBotPlayer(seat.bot_version.bot_id, name)
        elif seat.seat in failed:
            players[seat.seat] = _NotStarted(name, failed[seat.seat].splitlines()[0])
        elif kept is not None and kept.player is not None:
            players[seat.seat] = kept.player
        else:
            # A bot that dies mid-game is reported with its exit code or signal (not its output:
            # the forfeit reason is published in the replay).
            started = running[seat.seat]
            players[seat.seat] = GrpcPlayer(started.address, name, exited=started.exit_status)
    return players


def _seat_logs(running: dict[int, RunningBot], log_starts: dict[int, int]) -> dict[int, CapturedLog]:
    """Each seat's output during this match (a capped tail of whole lines, see `referee.tools.bot_logs`),
    read before its process is stopped; a warm process's only from where this match took it."""
    return {
        number: read_log_tail(bot.log_path, offset=log_starts.get(number, 0))
        for number, bot in running.items()
    }


def _keeps_warm(version: BotVersion, sandbox: Sandbox | None) -> bool:
    """Only house bots, only inside the sandbox (which kills them with the worker), if enabled."""
    return bool(version.bot.is_house and sandbox is not None and settings.SEPTET_WARM_HOUSE_BOTS)


def _bots_done(
    seats: list[Seat],
    running: dict[int, RunningBot],
    warm: dict[int, WarmBot],
    sandbox: Sandbox | None,
    *,
    seed: int,
    clean: set[int],
    players: list[Player] | None = None,
) -> None:
    """After a match: house bots' processes whose seat played it in good order (`clean`: seat
    numbers with no forfeit) go back to the warm pool with the referee's channel to them
    (`players`, in seat order), having played `seed`; every other process is stopped and its
    channel closed."""
    versions = {seat.seat: seat.bot_version for seat in seats}
    for player in players or []:
        if isinstance(player, RelayedBotPlayer):
            player.close()  # forgets its relayed seats; the bot's own machine runs on
    clients = {
        seat.seat: player
        for seat, player in zip(seats, players or [], strict=False)
        if isinstance(player, GrpcPlayer)
    }
    for number, bot in running.items():
        version = versions[number]
        client = clients.get(number)
        if number in clean and _keeps_warm(version, sandbox):
            kept = warm.get(number) or WarmBot(bot)
            kept.player = client
            kept.seeds.add(seed)
            WARM_HOUSE_BOTS.give_back(version.pk, kept)
        else:
            held = warm.get(number)
            for player in (client, held.player if held is not None else None):
                if player is not None:
                    player.close()  # closing twice (the warm process's own client) is harmless
            bot.stop()


def match_record(
    *,
    match_id: int,
    attempt: int,
    outcome: MatchResult,
    logs: dict[int, CapturedLog] | None = None,
    seats: list[Seat] | None = None,
) -> bool:
    """Stores the replay, durably, then the result with the replay's size and checksum, and each
    seat's captured output (`logs`, by seat number) with the event of its forfeit, if this
    attempt still holds the match; False otherwise. OSError when the replay cannot be written
    (nothing is recorded then, and no partial file is left).

    Three statements in one transaction whatever the number of seats: the match's row, updated
    only while `attempt` holds it (the UPDATE's row lock stands in for a SELECT ... FOR UPDATE),
    every seat's result in one UPDATE, every seat log in one INSERT (the match's `seats` as read
    when it was claimed, or a fourth statement reads them)."""
    replay_name = f"{match_id}-a{attempt}.json.gz"
    data = replays.encode(outcome.replay, replay_name)
    store = replay_store()
    store.write_durably(replay_name, data)  # safe before the row naming it commits, or OSError
    result = outcome.result
    forfeits = {forfeit.seat: forfeit for forfeit in outcome.forfeits}
    with transaction.atomic():
        recorded = Match.objects.filter(pk=match_id, status=Match.Status.RUNNING, attempt=attempt).update(
            status=Match.Status.ABORTED if result.ranks is None else Match.Status.FINISHED,
            finished=timezone.now(),
            lease_until=None,
            result=outcome.replay["result"],
            replay=replay_name,
            replay_size=len(data),
            replay_sha256=hashlib.sha256(data).hexdigest(),
            replay_match_id=str(outcome.replay.get("match_id") or ""),
        )
        if not recorded:
            store.discard(replay_name)
            return False
        played = list(Seat.objects.filter(match_id=match_id)) if seats is None else seats
        for seat in played:
            seat.score = result.scores[seat.seat]
            seat.rank = None if result.ranks is None else result.ranks[seat.seat]
            forfeit = forfeits.get(seat.seat)
            seat.forfeit_status = str(forfeit.status) if forfeit else ""
            seat.forfeit_reason = forfeit.reason if forfeit else ""
        _seat_results_store(match_id, played)
        _seat_logs_store(played, logs or {}, forfeits)
    return True


SEAT_RESULT_FIELDS = ("score", "rank", "forfeit_status", "forfeit_reason")


def _seat_results_store(match_id: int, seats: list[Seat]) -> None:
    """Every seat's result (SEAT_RESULT_FIELDS, as set on `seats`) in one UPDATE of the match's
    seats, each column a CASE over the seat number (a seat not in `seats` keeps its values).

    Written out rather than `bulk_update`, which builds the same kind of statement through the
    ORM's expressions at about ten times the CPU (3 ms for four seats, more than four single-row
    saves), once per match. Integers (a NULL rank too) are cast, so the statement is typed alike
    with client- and server-side parameters, on PostgreSQL and SQLite."""
    if not seats:
        return
    quote = connection.ops.quote_name
    meta = Seat._meta
    assignments: list[str] = []
    params: list[Any] = []
    for name in SEAT_RESULT_FIELDS:
        field = meta.get_field(name)
        values = [(seat.seat, getattr(seat, name)) for seat in seats]
        cast = field.db_type(connection) if isinstance(field, models.IntegerField) else None
        then = f"CAST(%s AS {cast})" if cast else "%s"
        whens = " ".join(f"WHEN %s THEN {then}" for _ in values)
        column = quote(field.column)
        assignments.append(
            f"{column} = CASE {quote(meta.get_field('seat').column)} {whens} ELSE {column} END"
        )
        params += [item for pair in values for item in pair]
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {quote(meta.db_table)} SET {', '.join(assignments)} "
            f"WHERE {quote(meta.get_field('match').column)} = %s",
            [*params, match_id],
        )


def _seat_logs_store(seats: list[Seat], logs: dict[int, CapturedLog], forfeits: dict[int, Forfeit]) -> None:
    """Keeps each seat's output and its forfeit's event for its owner (nothing for a seat with
    neither), in one INSERT (a log already there is replaced)."""
    rows = []
    for seat in seats:
        captured, forfeit = logs.get(seat.seat), forfeits.get(seat.seat)
        if captured is None and forfeit is None:
            continue
        rows.append(
            SeatLog(
                seat=seat,
                text=captured.text if captured else "",
                truncated=captured.truncated if captured else False,
                forfeit_event=forfeit.event_index if forfeit else None,
            )
        )
    if rows:
        SeatLog.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["seat"],
            update_fields=["text", "truncated", "forfeit_event"],
        )


def matches_requeue_stale(*, now: datetime | None = None, tournaments: bool = False) -> list[int]:
    """Ids of SCHEDULED matches whose task is lost: waiting longer than LOST_GRACE (since they
    were made or last put back) while no message for them is in the broker's queues or held by a
    live worker (`lost.py`). The caller queues them again (a duplicate delivery is harmless: only
    one claim succeeds), and the next sweep then finds the new message, so a match is re-sent at
    most once per sweep while it is really missing. Matches outside tournaments by default;
    `tournaments=True` for tournament matches only (the tournaments tick queues those, on their
    own queue, and not while their event is paused)."""
    now = now or timezone.now()
    cutoff = now - lost.LOST_GRACE
    waiting = set(
        Match.objects.filter(status=Match.Status.SCHEDULED, created__lt=cutoff)
        .filter(tournament__isnull=not tournaments)
        .filter(models.Q(started__isnull=True) | models.Q(started__lt=cutoff))
        .values_list("pk", flat=True)
    )
    if not waiting:
        return []
    in_broker = lost.match_ids_in_broker(now=now)
    if in_broker is None:  # a broker we cannot read: fall back to waiting time
        return sorted(_waiting_since(waiting, now - lost.FALLBACK_STALE))
    return sorted(waiting - in_broker)


def _waiting_since(match_ids: set[int], cutoff: datetime) -> set[int]:
    return set(
        Match.objects.filter(pk__in=match_ids, created__lt=cutoff)
        .filter(models.Q(started__isnull=True) | models.Q(started__lt=cutoff))
        .values_list("pk", flat=True)
    )


def matches_rate_unrated(*, now: datetime | None = None) -> list[int]:
    """Rates the matches recorded but not rated (their worker died between the two, or the
    database went away): ids of those it rated. Idempotent, one writer per ladder."""
    now = now or timezone.now()
    unrated = list(
        Match.objects.filter(
            status=Match.Status.FINISHED, rated=True, ratings_applied=False, finished__lt=now - UNRATED_GRACE
        ).values_list("pk", flat=True)
    )
    rated = []
    for match_id in unrated:
        try:
            if ratings_apply(match=Match.objects.get(pk=match_id)):
                rated.append(match_id)
        except RatingError:  # a match that cannot be rated must not stop the others'
            log.exception("a finished match cannot be rated", extra={"match_id": match_id})
    return rated


def matches_reap(*, now: datetime | None = None) -> list[int]:
    """Puts RUNNING matches whose lease ran out (a dead worker) back to SCHEDULED; their ids. A
    table with a person at it is cancelled instead, saying why (see `_void`), and its viewers told."""
    now = now or timezone.now()
    with transaction.atomic():
        expired = list(
            Match.objects.select_for_update()
            .filter(status=Match.Status.RUNNING, lease_until__lt=now)
            .values_list("pk", "attempt")
        )
        with_person = dict(
            Seat.objects.filter(match_id__in=[pk for pk, _ in expired], player__isnull=False)
            .values_list("match_id", "match__attempt")
            .distinct()
        )
        again = [pk for pk, _ in expired if pk not in with_person]
        Match.objects.filter(pk__in=again).update(status=Match.Status.SCHEDULED, worker="", lease_until=None)
        Match.objects.filter(pk__in=list(with_person)).update(
            status=Match.Status.CANCELLED,
            worker="",
            lease_until=None,
            finished=now,
            end_reason=VOIDED_TABLE_REASON,
        )
    for match_id, attempt in expired:
        reason = VOIDED_TABLE_REASON if match_id in with_person else "the game is played again from the start"
        people = Seat.objects.filter(match_id=match_id, player__isnull=False).values_list("seat", flat=True)
        audiences = [None, *people]
        stream_end(match_id, attempt, audiences, live_end(status="voided", reason=reason))
    return again
