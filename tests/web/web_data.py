"""Real data for the web tests: users, bots, versions, ladders and played matches with replays.

Matches are played by the referee with in-process players named after the seated bots and
recorded by the platform's own services (claim, record, rate), so pages show what a worker
would have stored.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot_versions import version_row
from django.contrib.auth.models import User

from referee.engine.games import get_game
from referee.engine.match import play_match
from referee.engine.players import PolicyPlayer, RandomPlayer
from septet_platform.bots.models import BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.ladders.services import ratings_apply
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.services import match_claim, match_record

SCRIPT_NAME = "<script>alert(1)</script>"
"""A bot name made to break a page that does not escape it (created by the ORM: intake refuses it)."""

ALL_GAMES = ["oh7", "oh7-advanced", "oh7-duel", "oh-hell", "black-sevens", "seven-up-seven-down"]


def version_make(
    owner: User, name: str, *, number: int = 1, status: str = BotVersion.Status.ACTIVE, error_log: str = ""
) -> BotVersion:
    """A version of `owner`'s bot `name` (the bot created on first use) playing every game."""
    return version_row(owner, name, number=number, status=status, error_log=error_log)


def _illegal(info: Any, legal: tuple[Any, ...]) -> Any:
    return "not-an-action"


def match_play_recorded(
    ladder: Ladder, versions: Sequence[BotVersion], *, seed: int, forfeit_seat: int | None = None
) -> Match:
    """A match seating `versions`, played by the referee and recorded (and rated) by the platform;
    the seat `forfeit_seat`, if any, answers an illegal action and forfeits."""
    match = Match.objects.create(ladder=ladder, seed=seed)
    Seat.objects.bulk_create(Seat(match=match, seat=i, bot_version=v) for i, v in enumerate(versions))
    attempt = match_claim(match_id=match.pk, worker="web-tests")
    assert attempt is not None
    players: list[Any] = [
        RandomPlayer(random.Random(f"{seed}/{seat}"), name=f"{version.bot.name} v{version.number}")
        for seat, version in enumerate(versions)
    ]
    if forfeit_seat is not None:
        players[forfeit_seat] = PolicyPlayer(_illegal, players[forfeit_seat].name)
    outcome = play_match(get_game(ladder.game), players, seed=seed, match_id=str(match.pk))
    assert match_record(match_id=match.pk, attempt=attempt, outcome=outcome)
    match.refresh_from_db()
    ratings_apply(match=match)
    return match


class Queued:
    """Stands in for the Celery qualification task: records what `.delay` was called with."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def delay(self, object_id: int) -> None:
        self.calls.append(object_id)


@dataclass
class Site:
    """The data a page test looks at."""

    alice: User
    bob: User
    ladder: Ladder
    alpha: BotVersion
    beta: BotVersion
    scripted: BotVersion
    failed: BotVersion
    match: Match
    forfeited: Match
    running: Match


def site_build() -> Site:
    """Two users, four bots (one named like a script), an oh-hell ladder and played matches."""
    alice = User.objects.create_user("alice", password="alice-secret-pw")
    bob = User.objects.create_user("bob", password="bob-secret-pw")
    ladder = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    alpha = version_make(alice, "alpha")
    failed = version_make(
        alice,
        "alpha",
        number=2,
        status=BotVersion.Status.FAILED,
        error_log="qualification: alpha v2 crashed: ImportError: no module named numpy",
    )
    beta = version_make(bob, "beta")
    scripted = version_make(bob, SCRIPT_NAME)
    match = match_play_recorded(ladder, [alpha, beta, scripted], seed=11)
    forfeited = match_play_recorded(ladder, [beta, alpha, scripted], seed=12, forfeit_seat=1)
    running = Match.objects.create(ladder=ladder, seed=13)
    Seat.objects.bulk_create(
        Seat(match=running, seat=i, bot_version=v) for i, v in enumerate([alpha, beta, scripted])
    )
    match_claim(match_id=running.pk, worker="web-tests")
    running.refresh_from_db()
    return Site(alice, bob, ladder, alpha, beta, scripted, failed, match, forfeited, running)
