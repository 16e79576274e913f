"""The rotations of one duplicate set (one deal, the seats rotated) take turns: while one plays,
a delivery of another leaves it waiting, and the one that finishes hands the deal to the next.
Tried on the real claim (one UPDATE under the set's lock) and the real match task; under load,
with two workers, tests/platform/test_scale.py reads every set's start and finish times."""

from __future__ import annotations

import random
import uuid
from itertools import pairwise

import pytest
from bot_versions import version_row
from django.utils import timezone

from referee.engine.match import play_match
from referee.engine.players import Player, RandomPlayer
from septet_platform.bots.models import BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.matches import services
from septet_platform.matches.models import Match, Seat

pytestmark = pytest.mark.django_db(transaction=True)


def _duplicate_set(seats: int = 3, versions: list[BotVersion] | None = None) -> list[Match]:
    """An unrated set on oh-hell's ladder: one seed, a match per rotation of `versions` (house
    versions whose archives are not on disk, by default)."""
    table = uuid.uuid4().hex[:8]
    versions = versions or [
        version_row("house", f"turns-{table}-{seat}", is_house=True) for seat in range(seats)
    ]
    ladder, _ = Ladder.objects.get_or_create(
        game="oh-hell", pool=Ladder.Pool.SANDBOXED, defaults={"min_players": 3, "max_players": 7}
    )
    name = str(uuid.uuid4())
    matches = [
        Match.objects.create(ladder=ladder, seed=99, duplicate_set=name, rotation=rotation)
        for rotation in range(seats)
    ]
    for match in matches:
        for seat in range(seats):
            Seat.objects.create(match=match, seat=seat, bot_version=versions[(seat + match.rotation) % seats])
    return matches


def _finish(match: Match, attempt: int) -> None:
    players: list[Player] = [RandomPlayer(random.Random(seat)) for seat in range(3)]
    outcome = play_match("oh-hell", players, seed=match.seed, match_id=f"m-{match.pk}")
    assert services.match_record(match_id=match.pk, attempt=attempt, outcome=outcome, logs={})


def test_a_rotation_is_not_claimed_while_another_of_its_set_plays() -> None:
    first, second, third = _duplicate_set()
    assert services.match_claim(match_id=first.pk, worker="a") == 1

    assert services.match_claim(match_id=second.pk, worker="b") is None
    assert services.match_play(match_id=third.pk, worker="c").outcome == services.SET_PLAYING
    assert (
        list(Match.objects.filter(pk__in=[second.pk, third.pk]).values_list("status", flat=True))
        == [Match.Status.SCHEDULED] * 2
    ), "left waiting, not claimed, not voided"
    assert services.duplicate_set_next(match_id=second.pk) is None, "the deal is still in play"


def test_the_rotation_that_finishes_hands_the_deal_to_the_next() -> None:
    first, second, _ = _duplicate_set()
    attempt = services.match_claim(match_id=first.pk, worker="a")
    assert attempt is not None
    _finish(first, attempt)

    assert services.duplicate_set_next(match_id=first.pk) == second.pk
    assert services.match_claim(match_id=second.pk, worker="b") == 1
    assert services.duplicate_set_next(match_id=first.pk) is None, "second holds the deal now"


def test_matches_of_different_sets_and_matches_of_no_set_play_side_by_side() -> None:
    one, _, _ = _duplicate_set()
    other, _, _ = _duplicate_set()
    loose = Match.objects.create(ladder=one.ladder, seed=5)

    assert services.match_claim(match_id=one.pk, worker="a") == 1
    assert services.match_claim(match_id=other.pk, worker="b") == 1
    assert services.match_claim(match_id=loose.pk, worker="c") == 1
    assert services.duplicate_set_next(match_id=loose.pk) is None


def test_a_rotation_whose_worker_died_is_taken_back_and_then_frees_the_set() -> None:
    """Tried: the worker playing the first rotation stops renewing its lease (killed); the reaper
    puts it back, and from then a delivery of another rotation may take the deal."""
    first, second, _ = _duplicate_set()
    services.match_claim(match_id=first.pk, worker="dead", now=timezone.now() - services.LEASE * 3)
    assert services.match_claim(match_id=second.pk, worker="b") is None

    assert first.pk in services.matches_reap()
    assert services.match_claim(match_id=second.pk, worker="b") == 1


def test_the_worker_that_records_a_rotation_plays_the_sets_next_ones_at_once(
    played_versions: list[BotVersion],
) -> None:
    """Real bot processes: a delivery of the first rotation plays the whole set, one rotation
    after another, rather than sending each to the back of the queue; a delivery of another
    rotation meanwhile would have found the set playing."""
    matches = _duplicate_set(versions=played_versions)

    played = services.match_play_set(match_id=matches[0].pk, worker="w")

    assert [(each.match_id, each.outcome) for each in played] == [(match.pk, "recorded") for match in matches]
    rows = list(Match.objects.filter(pk__in=[match.pk for match in matches]).order_by("rotation"))
    assert all(row.worker == "w" and row.status == Match.Status.FINISHED for row in rows)
    assert all(earlier.finished <= later.started for earlier, later in pairwise(rows))
    assert services.match_play_set(match_id=matches[1].pk, worker="x")[0].outcome == "not claimed"
