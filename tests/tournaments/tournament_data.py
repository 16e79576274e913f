"""Helpers of the tournament tests: bot versions (database rows only), an enqueue recorder, and
matches played on paper (ranks written directly) for the standings and Swiss tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot_versions import version_row
from django.utils import timezone

from septet_platform.bots.models import BotVersion
from septet_platform.matches.models import Match
from septet_platform.tournaments.models import Tournament


class Recorder:
    """Stands in for the task's `delay`: records the match ids queued."""

    def __init__(self) -> None:
        self.queued: list[int] = []

    def __call__(self, match_id: int) -> None:
        self.queued.append(match_id)


def make_version(
    owner: str,
    name: str,
    *,
    number: int = 1,
    games: Sequence[str] = ("oh-hell",),
    status: str = BotVersion.Status.ACTIVE,
) -> BotVersion:
    return version_row(owner, name, number=number, games=games, status=status)


def play_on_paper(tournament: Tournament, strength: Callable[[str], float]) -> int:
    """Finishes every scheduled match of the event, ranking its seats by `strength(bot name)`
    (higher is better; equal strengths share a rank); returns how many matches it finished."""
    matches = list(Match.objects.filter(tournament=tournament, status=Match.Status.SCHEDULED))
    for match in matches:
        seats = list(match.seats.select_related("bot_version__bot"))
        values = [strength(seat.bot_version.bot.name) for seat in seats]
        for seat, value in zip(seats, values, strict=True):
            seat.rank = 1 + sum(other > value for other in values)
            seat.score = seat.rank
            seat.save()
        match.status = Match.Status.FINISHED
        match.finished = timezone.now()
        match.save()
    return len(matches)
