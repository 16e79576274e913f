"""Tables: a signed-in person sits at one seat of a game against bots, as a kind of challenge.

A table is one unrated match (kind TABLE, a random seed of its own, no duplicate set: a person who
has seen a deal cannot play it again from another seat) whose other seats hold bot versions the
person may challenge: house bots (any number of seats), their own bots, and other owners' bots
that accept challenges (one seat each). The match runs on a worker like any other, the bots in
their sandboxes, on the `tables` queue and pool (settings.SEPTET_TABLE_QUEUE), never a ladder
worker's; the person's decisions come from their browser through the live relay, under a
person's time control (`CLOCKS`). Tables count against per-user limits like challenges: a few
open at once and so many per hour, and other owners' bots count them as challenges.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from septet_platform.accounts.limits import Limit
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.challenges.services import (
    SEED_BITS,
    ChallengeInvalid,
    ChallengesExhausted,
    _active_version,
    _seat_count_problem,
    bot_challenges_check,
    challenges_accepted_check,
    challenges_of_bot,
    lock_counters,
    other_owners_bots,
    self_hosted_daily_check,
)
from septet_platform.ladders.models import Ladder
from septet_platform.ladders.selectors import game_ladder, unknown_game_message
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.tasks import TABLE_QUEUE, match_run_task

TABLE_WINDOW = timedelta(hours=1)
YOU = "you"
"""The seat choice that seats the person starting the table."""


@dataclass(frozen=True)
class Clock:
    """A person's time control at a table: seconds per decision, plus a bank for the game."""

    name: str
    label: str
    decision_seconds: float
    bank_seconds: float


CLOCKS = (
    Clock("standard", "30 s a decision, plus 2 min in the bank", 30.0, 120.0),
    Clock("relaxed", "60 s a decision, plus 5 min in the bank", 60.0, 300.0),
    Clock("quick", "15 s a decision, plus 1 min in the bank", 15.0, 60.0),
)
DEFAULT_CLOCK = CLOCKS[0].name


class TableInvalid(ChallengeInvalid):
    """A table that cannot be played as asked; the message says why."""


def tables_by_user() -> Limit:
    """Tables one user may start per hour (settings.SEPTET_TABLES_PER_HOUR)."""
    return Limit("table:user", settings.SEPTET_TABLES_PER_HOUR, TABLE_WINDOW)


def table_start(
    *, requester: AbstractBaseUser, game: str, seats: Sequence[str], clock: str = DEFAULT_CLOCK
) -> Match:
    """Seats `requester` at a new table of `game`: `seats` names each seat in order, `YOU` once
    (the person's own seat) and a bot's name in every other; returns the scheduled match, queued
    on the tables pool once it is stored.

    Ladder.DoesNotExist or Bot.DoesNotExist for an unknown game or bot; TableInvalid for a seating
    that cannot be played (table size, no or two `you` seats, a bot that does not play the game or
    has no active version, another owner's bot in two seats, an unknown clock); ChallengeRefused
    for a bot whose owner turned challenges off; ChallengesExhausted past the requester's open or
    hourly tables, or a bot's challenges. A refused table creates, queues and counts nothing."""
    ladder = game_ladder(game)
    if ladder is None:
        raise Ladder.DoesNotExist(unknown_game_message(game))
    if not ladder.min_players <= len(seats) <= ladder.max_players:
        raise TableInvalid(_seat_count_problem(ladder, len(seats)).replace("each bot named", "each seat"))
    if list(seats).count(YOU) != 1:
        raise TableInvalid("name yourself (`you`) in exactly one seat: the one you will play")
    chosen = next((each for each in CLOCKS if each.name == clock), None)
    if chosen is None:
        raise TableInvalid(f"unknown clock {clock!r}: choose {', '.join(each.name for each in CLOCKS)}")
    versions = {
        number: _active_version(name=name, number=0, game=game)
        for number, name in enumerate(seats)
        if name != YOU
    }
    targets = other_owners_bots(
        requester, [version.bot for version in versions.values()], house_bots_count=False
    )
    challenges_accepted_check(targets)
    with transaction.atomic():
        lock_counters(requester, targets)
        _limits_check(requester, targets)
        self_hosted_daily_check([version.bot for version in versions.values()], 1)
        match = Match.objects.create(
            ladder=ladder, kind=Match.Kind.TABLE, rated=False, seed=secrets.randbits(SEED_BITS) or 1
        )
        Seat.objects.bulk_create(
            Seat(match=match, seat=number, bot_version=versions[number])
            if name != YOU
            else Seat(
                match=match,
                seat=number,
                player=requester,
                decision_seconds=chosen.decision_seconds,
                bank_seconds=chosen.bank_seconds,
            )
            for number, name in enumerate(seats)
        )
        tables_by_user().record(str(requester.pk))
        for bot in targets:
            challenges_of_bot().record(str(bot.pk))
        transaction.on_commit(functools.partial(table_enqueue, match.pk))
    return match


def table_enqueue(match_id: int) -> None:
    """Sends a table to the tables pool (kept on its queue when queued again)."""
    match_run_task.apply_async((match_id,), queue=TABLE_QUEUE)


def open_tables(user: AbstractBaseUser) -> int:
    """How many of the user's tables are not over yet (scheduled or being played)."""
    return len(open_table_matches(user))


def _limits_check(requester: AbstractBaseUser, targets: Sequence[Bot]) -> None:
    most = settings.SEPTET_OPEN_TABLES_PER_USER
    if open_tables(requester) >= most:
        raise ChallengesExhausted(
            f"you have {most} tables open, the most one person may: finish or leave one first"
        )
    hourly = tables_by_user()
    if hourly.exhausted(str(requester.pk)):
        raise ChallengesExhausted(
            f"table limit reached: {hourly.count} per hour per user; "
            f"try again in {hourly.wait_minutes(str(requester.pk))} min"
        )
    for bot in targets:
        bot_challenges_check(bot)


def table_choices(*, user: AbstractBaseUser) -> dict[str, list[str]]:
    """The bots `user` may seat at a table, by group: house bots, their own, and other owners'
    that accept challenges, each with an active version (whether it plays the chosen game is
    checked when the table starts, saying which bot does not)."""
    bots = (
        Bot.objects.filter(versions__status=BotVersion.Status.ACTIVE)
        .distinct()
        .order_by("name")
        .values_list("name", "is_house", "owner_id", "accepts_challenges")
    )
    groups: dict[str, list[str]] = {"house": [], "yours": [], "others": []}
    for name, is_house, owner_id, accepts in bots:
        if is_house:
            groups["house"].append(name)
        elif owner_id == user.pk:
            groups["yours"].append(name)
        elif accepts:
            groups["others"].append(name)
    return groups


def open_table_matches(user: AbstractBaseUser) -> list[Match]:
    """The user's tables not over yet, newest first, with their ladders."""
    return list(
        Match.objects.filter(
            kind=Match.Kind.TABLE,
            status__in=(Match.Status.SCHEDULED, Match.Status.RUNNING),
            seats__player_id=user.pk,
        )
        .select_related("ladder")
        .distinct()
        .order_by("-pk")
    )
