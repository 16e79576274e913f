"""Recording a played match: one transaction of the same few statements whatever the number of
seats (the match row, every seat's result, every seat's log), and exactly what was played in it."""

from __future__ import annotations

import dataclasses
import random
import uuid
from typing import Any

import pytest
from bot_versions import version_row
from django.db import connection
from django.test.utils import CaptureQueriesContext
from platform_support import match_with

from referee.engine.match import MatchResult, play_match
from referee.engine.players import Player, RandomPlayer
from referee.tools.bot_logs import CapturedLog
from septet_platform.matches import services
from septet_platform.matches.models import Match, Seat, SeatLog

pytestmark = pytest.mark.django_db(transaction=True)


def _played(seats: int, *, forfeiting_seat: int | None = None) -> tuple[Match, int, MatchResult]:
    """A claimed oh-hell match of `seats` seats and a game played for it in this process (the seat
    `forfeiting_seat` forfeits at its first decision, as a bot that did not start)."""
    table = uuid.uuid4().hex[:8]
    versions = [version_row("house", f"bot-{table}-{seat}", is_house=True) for seat in range(seats)]
    match = match_with("oh-hell", versions, seed=11)
    attempt = services.match_claim(match_id=match.pk, worker="record-tests")
    assert attempt == 1
    players: list[Player] = [RandomPlayer(random.Random(seat)) for seat in range(seats)]
    if forfeiting_seat is not None:
        players[forfeiting_seat] = services._NotStarted("bot", "it exited at once")  # type: ignore[assignment]
    return match, attempt, play_match("oh-hell", players, seed=match.seed, match_id="m-record")


def _logs(seats: int) -> dict[int, CapturedLog]:
    return {seat: CapturedLog(f"seat {seat} says hello\n", truncated=seat == 0) for seat in range(seats)}


def _recorded_in(seats: int, **record: Any) -> int:
    match, attempt, outcome = _played(seats)
    with CaptureQueriesContext(connection) as queries:
        assert services.match_record(
            match_id=match.pk, attempt=attempt, outcome=outcome, logs=_logs(seats), **record
        )
    return _statements(queries)


def _statements(queries: CaptureQueriesContext) -> int:
    """Statements run, the transaction's own (BEGIN, COMMIT, savepoints) left out."""
    control = ("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE SAVEPOINT")
    return sum(1 for query in queries.captured_queries if not query["sql"].startswith(control))


def test_a_match_is_recorded_in_the_same_few_statements_whatever_its_number_of_seats() -> None:
    assert _recorded_in(3) == _recorded_in(7) == 4  # the match, the seats read, their results, their logs
    match, attempt, outcome = _played(5)
    seats = list(Seat.objects.filter(match=match))
    with CaptureQueriesContext(connection) as queries:
        services.match_record(match_id=match.pk, attempt=attempt, outcome=outcome, logs=_logs(5), seats=seats)
    assert _statements(queries) == 3, "the seats read at the claim are not read again"


def test_every_seat_gets_its_score_rank_forfeit_and_log() -> None:
    match, attempt, outcome = _played(4, forfeiting_seat=2)
    logs = _logs(4)
    del logs[1]  # a seat that wrote nothing and did not forfeit keeps no log

    assert services.match_record(match_id=match.pk, attempt=attempt, outcome=outcome, logs=logs)

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.lease_until is None and match.replay
    assert match.replay_match_id == "m-record" and match.result == outcome.replay["result"]
    seats = list(Seat.objects.filter(match=match).order_by("seat"))
    assert [seat.score for seat in seats] == list(outcome.result.scores)
    assert [seat.rank for seat in seats] == list(outcome.result.ranks or [])
    assert [seat.forfeit_status for seat in seats] == ["", "", "ERROR", ""]
    assert "did not start: it exited at once" in seats[2].forfeit_reason
    assert [seat.forfeit_reason for seat in seats if seat.seat != 2] == ["", "", ""]
    stored = {log.seat.seat: log for log in SeatLog.objects.filter(seat__match=match).select_related("seat")}
    assert sorted(stored) == [0, 2, 3]
    assert stored[0].text == "seat 0 says hello\n" and stored[0].truncated and stored[0].forfeit_event is None
    assert stored[2].forfeit_event == outcome.forfeits[0].event_index and not stored[2].truncated


def test_an_aborted_game_is_recorded_without_ranks_and_a_stale_attempt_changes_nothing() -> None:
    match, attempt, outcome = _played(3)
    aborted = dataclasses.replace(outcome, result=dataclasses.replace(outcome.result, ranks=None))
    assert not services.match_record(match_id=match.pk, attempt=attempt + 1, outcome=aborted, logs=_logs(3))
    assert all(seat.score is None for seat in Seat.objects.filter(match=match))
    assert not SeatLog.objects.filter(seat__match=match).exists()

    assert services.match_record(match_id=match.pk, attempt=attempt, outcome=aborted)

    match.refresh_from_db()
    assert match.status == Match.Status.ABORTED
    seats = list(Seat.objects.filter(match=match).order_by("seat"))
    assert [seat.rank for seat in seats] == [None, None, None]
    assert [seat.score for seat in seats] == list(outcome.result.scores)
