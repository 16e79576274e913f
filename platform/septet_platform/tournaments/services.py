"""Tournament writes: create, enter, freeze at the deadline, schedule rounds, pause, resume, cancel.

Every write checks first and changes nothing when it refuses (TournamentError with a message a
person can act on). Freezing and scheduling happen in one transaction with the Tournament row
locked, so two beats (or a beat and a worker) never schedule a round twice; matches are queued
only once their rows commit. The deals and designs derive from the tournament's seed and round,
so the schedule does not depend on when or where it was made.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from referee.engine.games import all_games
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.ladders.selectors import game_ladder
from septet_platform.ladders.services import ladders_ensure
from septet_platform.matches.models import Match, Seat
from septet_platform.tournaments import formats
from septet_platform.tournaments.models import Entrant, Tournament

SEED_BITS = 53
OVER = (Match.Status.FINISHED, Match.Status.ABORTED, Match.Status.CANCELLED)
Enqueue = Callable[[int], None]
"""Queues one match to be played (the Celery task's `delay`, or a test's recorder)."""


class TournamentError(ValueError):
    """A request the tournament cannot take as it stands; nothing was changed."""


def tournament_create(
    *,
    organiser: AbstractBaseUser,
    name: str,
    title: str,
    game: str,
    table_size: int,
    entry_deadline: datetime,
    format: str = Tournament.Format.ROUND_ROBIN,
    duplicate_sets: int = 1,
    tables: int = 0,
    rounds: int = 3,
    decision_seconds: float = 1.0,
    bank_seconds: float = 10.0,
    entry: str = Tournament.Entry.OPEN,
    invited: Sequence[AbstractBaseUser] = (),
    published: bool = True,
    seed: int | None = None,
) -> Tournament:
    """A new OPEN tournament; TournamentError (see `tournament_check`) or for a name in use."""
    tournament_check(
        game=game,
        table_size=table_size,
        format=format,
        entry=entry,
        duplicate_sets=duplicate_sets,
        tables=tables,
        rounds=rounds,
        decision_seconds=decision_seconds,
        bank_seconds=bank_seconds,
    )
    if Tournament.objects.filter(name=name).exists():
        raise TournamentError(f"a tournament named {name!r} exists already")
    with transaction.atomic():
        tournament = Tournament.objects.create(
            organiser=organiser,
            name=name,
            title=title,
            game=game,
            format=format,
            table_size=table_size,
            duplicate_sets=duplicate_sets,
            tables=tables,
            rounds=rounds,
            decision_seconds=decision_seconds,
            bank_seconds=bank_seconds,
            entry_deadline=entry_deadline,
            entry=entry,
            published=published,
            seed=seed if seed is not None else random.getrandbits(SEED_BITS),
        )
        tournament.invited.set(invited)
    return tournament


def tournament_check(
    *,
    game: str,
    table_size: int,
    format: str,
    entry: str,
    duplicate_sets: int,
    tables: int,
    rounds: int,
    decision_seconds: float,
    bank_seconds: float,
) -> None:
    """TournamentError for an unknown game, a table size the game does not allow, a format or entry
    rule that does not exist, or counts and times that are not positive (the admin form checks
    with it too)."""
    games = all_games()
    if game not in games:
        raise TournamentError(f"unknown game {game!r}; the games are: {', '.join(games)}")
    players = games[game].players
    if table_size not in players:
        raise TournamentError(
            f"{game} is played by {players.start}-{players.stop - 1} players, not {table_size}"
        )
    if format not in Tournament.Format.values:
        raise TournamentError(f"unknown format {format!r}; use one of {', '.join(Tournament.Format.values)}")
    if entry not in Tournament.Entry.values:
        raise TournamentError(
            f"unknown entry rule {entry!r}; use one of {', '.join(Tournament.Entry.values)}"
        )
    if duplicate_sets < 1 or rounds < 1 or tables < 0:
        raise TournamentError("duplicate sets and rounds must be 1 or more, tables 0 or more")
    if decision_seconds <= 0 or bank_seconds < 0:
        raise TournamentError("the time control needs positive decision seconds and a bank of 0 or more")


def _plays(version: BotVersion, game: str) -> bool:
    games = version.manifest.get("games") if isinstance(version.manifest, dict) else None
    return not isinstance(games, list) or game in games


def playing_version(bot: Bot, game: str) -> BotVersion | None:
    """The bot's latest ACTIVE version, if it plays `game` (what entering and freezing take)."""
    latest = bot.versions.filter(status=BotVersion.Status.ACTIVE).order_by("-number").first()
    return latest if latest is not None and _plays(latest, game) else None


def entrant_add(
    *, tournament: Tournament, user: AbstractBaseUser, bot: Bot, now: datetime | None = None
) -> Entrant:
    """Enters `user`'s `bot`; TournamentError after the deadline (or once the event started), for
    another user's bot, an uninvited user of an invitation-only event, a bot already entered, or
    a bot whose latest active version does not play the event's game."""
    now = now or timezone.now()
    if tournament.status != Tournament.Status.OPEN or now >= tournament.entry_deadline:
        raise TournamentError(
            f"entries to {tournament.name} closed at {tournament.entry_deadline:%Y-%m-%d %H:%M} UTC"
        )
    if bot.owner_id != user.pk:
        raise TournamentError(f"{bot.name} is not your bot: enter only bots you own")
    if bot.self_hosted:
        raise TournamentError(
            f"{bot.name} is self-hosted: tournaments are played by sandboxed bots only (submit it "
            "with `septet submit` to enter)"
        )
    if tournament.entry == Tournament.Entry.INVITED and not tournament.invited.filter(pk=user.pk).exists():
        raise TournamentError(f"{tournament.name} is by invitation and {user.get_username()} is not invited")
    if playing_version(bot, tournament.game) is None:
        raise TournamentError(
            f"{bot.name} has no active version that plays {tournament.game}: submit one that declares it"
        )
    if Entrant.objects.filter(tournament=tournament, bot=bot).exists():
        raise TournamentError(f"{bot.name} is entered in {tournament.name} already")
    return Entrant.objects.create(tournament=tournament, bot=bot)


def tournament_start(*, tournament: Tournament, enqueue: Enqueue, now: datetime | None = None) -> bool:
    """At or after the deadline, freezes each entrant's version (its latest active version that
    plays the game; entrants without one are dropped, with the reason kept in `problem`) and
    schedules the first round. False, and nothing changed but `problem`, when too few entrants
    can play or it is not yet time; True once the event runs (a second call does nothing)."""
    now = now or timezone.now()
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament.pk)
        if tournament.status != Tournament.Status.OPEN or now < tournament.entry_deadline:
            return tournament.status != Tournament.Status.OPEN
        entrants = list(tournament.entrants.select_related("bot"))
        frozen = {entrant.pk: playing_version(entrant.bot, tournament.game) for entrant in entrants}
        playing = [entrant for entrant in entrants if frozen[entrant.pk] is not None]
        try:
            formats.check_size(len(playing), tournament.table_size)
        except formats.FormatImpossible as error:
            Tournament.objects.filter(pk=tournament.pk).update(problem=f"cannot start: {error}")
            return False
        dropped = [entrant.bot.name for entrant in entrants if frozen[entrant.pk] is None]
        for entrant in playing:
            entrant.version = frozen[entrant.pk]
            entrant.save(update_fields=["version"])
        Entrant.objects.filter(pk__in=[e.pk for e in entrants if frozen[e.pk] is None]).delete()
        tournament.status = Tournament.Status.RUNNING
        tournament.started = now
        tournament.problem = (
            f"dropped (no active version for the game): {', '.join(dropped)}" if dropped else ""
        )
        tournament.save()
        _schedule_round(tournament, 1, enqueue)
    return True


def frozen_entrants(tournament: Tournament) -> list[Entrant]:
    """The entrants playing the event, in a fixed order (by bot name): index i is entrant i of
    the designs."""
    return list(
        tournament.entrants.filter(version__isnull=False)
        .select_related("bot", "version")
        .order_by("bot__name")
    )


def _ladder(game: str) -> Ladder:
    ladder = game_ladder(game)
    return ladder if ladder is not None else next(each for each in ladders_ensure() if each.game == game)


def _schedule_round(tournament: Tournament, number: int, enqueue: Enqueue) -> list[Match]:
    """Creates round `number`'s matches (inside the caller's transaction) and queues each once
    the rows commit."""
    from septet_platform.tournaments.selectors import standings

    entrants = frozen_entrants(tournament)
    rng = random.Random(f"{tournament.seed}/{number}")
    if tournament.format == Tournament.Format.SWISS:
        if number == 1:
            order = list(range(len(entrants)))
            rng.shuffle(order)
        else:
            index = {entrant.pk: i for i, entrant in enumerate(entrants)}
            order = [index[row.entrant.pk] for row in standings(tournament)]
        sat_out = _rounds_sat_out(tournament, entrants)
        tables = formats.swiss_round(order, tournament.table_size, sat_out)
    else:
        tables = formats.round_robin(len(entrants), tournament.table_size, rng, tournament.tables)
    ladder = _ladder(tournament.game)
    matches: list[Match] = []
    for table in tables:
        seating = list(table)
        rng.shuffle(seating)
        for _ in range(tournament.duplicate_sets):
            seed = rng.getrandbits(SEED_BITS)
            duplicate_set = str(uuid.UUID(int=rng.getrandbits(128)))
            for rotation, seats in enumerate(formats.rotations(tuple(seating))):
                match = Match.objects.create(
                    ladder=ladder,
                    kind=Match.Kind.TOURNAMENT,
                    rated=False,
                    tournament=tournament,
                    tournament_round=number,
                    seed=seed,
                    duplicate_set=duplicate_set,
                    rotation=rotation,
                )
                Seat.objects.bulk_create(
                    Seat(match=match, seat=seat, bot_version=entrants[entrant].version)
                    for seat, entrant in enumerate(seats)
                )
                matches.append(match)
    tournament.current_round = number
    tournament.save(update_fields=["current_round"])
    for match in matches:
        transaction.on_commit(lambda match_id=match.pk: enqueue(match_id))
    return matches


def _rounds_sat_out(tournament: Tournament, entrants: list[Entrant]) -> list[int]:
    played = {
        (version, round_number)
        for version, round_number in Seat.objects.filter(match__tournament=tournament).values_list(
            "bot_version", "match__tournament_round"
        )
    }
    rounds = range(1, tournament.current_round + 1)
    return [sum((entrant.version_id, r) not in played for r in rounds) for entrant in entrants]


def tournament_advance(*, tournament: Tournament, enqueue: Enqueue, now: datetime | None = None) -> str:
    """Moves a running event on once its round is over: the next Swiss round, or FINISHED after the
    last. Returns the status afterwards. Idempotent: the row lock makes concurrent calls queue up,
    and a round already scheduled is not scheduled again."""
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament.pk)
        if tournament.status != Tournament.Status.RUNNING:
            return tournament.status
        pending = tournament.matches.filter(tournament_round=tournament.current_round).exclude(
            status__in=OVER
        )
        if pending.exists():
            return tournament.status
        if tournament.current_round < tournament.total_rounds:
            _schedule_round(tournament, tournament.current_round + 1, enqueue)
            return tournament.status
        tournament.status = Tournament.Status.FINISHED
        tournament.finished = now or timezone.now()
        tournament.save(update_fields=["status", "finished"])
        return tournament.status


def tournament_pause(*, tournament: Tournament) -> None:
    """No new match of the event starts (matches already running finish); TournamentError unless
    it is running."""
    if (
        Tournament.objects.filter(pk=tournament.pk, status=Tournament.Status.RUNNING).update(
            status=Tournament.Status.PAUSED
        )
        == 0
    ):
        raise TournamentError(f"{tournament.name} is {_status(tournament)}, not running: nothing to pause")


def tournament_resume(*, tournament: Tournament, enqueue: Enqueue) -> int:
    """Runs a paused event again, queueing its waiting matches; returns how many were queued."""
    with transaction.atomic():
        if (
            Tournament.objects.filter(pk=tournament.pk, status=Tournament.Status.PAUSED).update(
                status=Tournament.Status.RUNNING
            )
            == 0
        ):
            raise TournamentError(
                f"{tournament.name} is {_status(tournament)}, not paused: nothing to resume"
            )
        waiting = list(
            Match.objects.filter(tournament=tournament, status=Match.Status.SCHEDULED).values_list(
                "pk", flat=True
            )
        )
        for match_id in waiting:
            transaction.on_commit(lambda match_id=match_id: enqueue(match_id))
    return len(waiting)


def tournament_cancel(*, tournament: Tournament, now: datetime | None = None) -> int:
    """Ends the event: its waiting matches are cancelled (running ones finish and are kept);
    returns how many were cancelled. TournamentError when it is over already."""
    with transaction.atomic():
        locked = Tournament.objects.select_for_update().get(pk=tournament.pk)
        if locked.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
            raise TournamentError(f"{tournament.name} is {locked.status} already")
        cancelled = Match.objects.filter(tournament=locked, status=Match.Status.SCHEDULED).update(
            status=Match.Status.CANCELLED
        )
        locked.status = Tournament.Status.CANCELLED
        locked.finished = now or timezone.now()
        locked.save(update_fields=["status", "finished"])
    return cancelled


def _status(tournament: Tournament) -> str:
    return str(Tournament.objects.values_list("status", flat=True).get(pk=tournament.pk))
