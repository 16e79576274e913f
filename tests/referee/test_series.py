"""Series statistics: seating schedules, duplicate sets, and mean-rank intervals."""

from __future__ import annotations

import math

import pytest

from referee.engine.games import get_game
from referee.engine.games.base import GameError
from referee.tools.series import BotRecord, schedule, seats_for


def test_duplicate_schedule_plays_every_rotation_of_each_seed() -> None:
    tables = schedule(3, 2, games=2, seed=10, duplicate=True)
    assert [(t.seed, t.seating, t.unit) for t in tables] == [
        (10, (0, 1, 0), 0), (10, (0, 0, 1), 0), (10, (1, 0, 0), 0),
        (11, (0, 1, 0), 1), (11, (0, 0, 1), 1), (11, (1, 0, 0), 1),
    ]  # fmt: skip


def test_plain_schedule_rotates_the_seating_one_place_per_game() -> None:
    tables = schedule(4, 4, games=5, seed=0, duplicate=False)
    assert [t.seating[0] for t in tables] == [0, 3, 2, 1, 0]
    assert len({t.unit for t in tables}) == 5


def test_rank_interval_counts_a_duplicate_set_as_one_sample_and_stays_within_the_ranks() -> None:
    record = BotRecord("bot", max_rank=3)
    record.unit_ranks = {0: [1, 1, 1], 1: [3, 3, 3]}
    record.ranks = [1, 1, 1, 3, 3, 3]
    interval = record.rank_interval()
    assert interval.mean == 2.0 and interval.n == 6
    assert (interval.low, interval.high) == (1.0, 3.0), "two units: a wide t-interval, clipped to the ranks"
    record.unit_ranks = {unit: [1 + unit % 2] for unit in range(40)}
    narrow = record.rank_interval()
    assert 1.0 < narrow.low < 1.5 < narrow.high < 2.0
    assert math.isclose(narrow.half_width, 2.023 * 0.5064 / math.sqrt(40), rel_tol=0.02)


@pytest.mark.parametrize(
    ("bots", "players", "message"),
    [(0, None, "at least one bot"), (5, 4, "5 bots cannot sit"), (1, 3, "black-sevens is played by 4")],
)
def test_bad_series_shapes_are_refused(bots: int, players: int | None, message: str) -> None:
    with pytest.raises(GameError, match=message):
        seats_for(get_game("black-sevens"), bots, players)
