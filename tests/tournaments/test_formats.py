"""The scheduling designs: every combination when few, otherwise a balanced incomplete design in
which every entrant plays equally often and every pair meets about equally often; duplicate-set
rotations put each entrant in every seat; Swiss rounds seat neighbours and rotate who sits out."""

from __future__ import annotations

import itertools
import math
import random
import re
from collections import Counter

import pytest

from septet_platform.tournaments import formats


def test_few_entrants_play_every_combination_once() -> None:
    tables = formats.round_robin(6, 3, random.Random(1))

    assert len(tables) == math.comb(6, 3) == 20
    assert set(tables) == set(itertools.combinations(range(6), 3))


@pytest.mark.parametrize(("entrants", "size"), [(8, 3), (12, 4), (10, 3), (9, 7), (8, 5), (16, 5)])
def test_a_balanced_design_seats_everyone_equally_and_pairs_meet_within_one_of_each_other(
    entrants: int, size: int
) -> None:
    tables = formats.round_robin(entrants, size, random.Random(3), formats.automatic_tables(entrants, size))

    seated = Counter(entrant for table in tables for entrant in table)
    assert set(seated) == set(range(entrants))
    assert len(set(seated.values())) == 1, seated
    assert all(len(set(table)) == size for table in tables)
    assert formats.pair_spread(tables, entrants) <= 1
    pairs = Counter(pair for table in tables for pair in itertools.combinations(sorted(table), 2))
    assert min(pairs[pair] for pair in itertools.combinations(range(entrants), 2)) >= 1


def test_many_entrants_get_a_balanced_design_rather_than_every_combination() -> None:
    tables = formats.round_robin(12, 4, random.Random(5))

    assert math.comb(12, 4) > formats.MAX_ALL_COMBINATIONS
    assert len(tables) == formats.automatic_tables(12, 4) == 12
    assert formats.pair_spread(tables, 12) <= 1


def test_eight_entrants_at_tables_of_four_get_the_fewest_tables_where_every_pair_meets_evenly() -> None:
    tables = formats.round_robin(8, 4, random.Random(4))

    assert len(tables) == 10  # 6 tables (the first equal-seating count) cannot balance the 28 pairs
    assert formats.pair_spread(tables, 8) <= 1
    assert len(set(Counter(entrant for table in tables for entrant in table).values())) == 1


def test_a_design_depends_only_on_its_rng() -> None:
    assert formats.round_robin(10, 4, random.Random(9)) == formats.round_robin(10, 4, random.Random(9))


def test_duplicate_rotations_put_every_entrant_in_every_seat_once() -> None:
    tables = formats.round_robin(9, 4, random.Random(2))
    seats: Counter[tuple[int, int]] = Counter()
    for table in tables:
        for seating in formats.rotations(table):
            seats.update((entrant, seat) for seat, entrant in enumerate(seating))

    for entrant in range(9):
        assert len({seats[(entrant, seat)] for seat in range(4)}) == 1
    assert formats.rotations((4, 7, 1)) == [(4, 7, 1), (7, 1, 4), (1, 4, 7)]


@pytest.mark.parametrize(
    ("entrants", "size", "tables", "message"),
    [
        (3, 4, 0, "need at least 4 entrants"),
        (5, 1, 0, "at least 2 seats"),
        (5, 3, 11, "only 10 different tables"),
        (5, 3, -1, "0 (automatic) or more"),
    ],
)
def test_an_impossible_round_robin_is_refused(entrants: int, size: int, tables: int, message: str) -> None:
    with pytest.raises(formats.FormatImpossible, match=re.escape(message)):
        formats.round_robin(entrants, size, random.Random(1), tables)


def test_a_swiss_round_seats_neighbours_in_the_standings_together() -> None:
    order = [5, 2, 7, 0, 1, 3, 6, 4, 8]

    assert formats.swiss_round(order, 3, [0] * 9) == [(5, 2, 7), (0, 1, 3), (6, 4, 8)]


def test_a_swiss_round_rests_those_who_rested_least_lowest_placed_first() -> None:
    order = [0, 1, 2, 3, 4, 5, 6]
    first = formats.swiss_round(order, 3, [0] * 7)
    assert first == [(0, 1, 2), (3, 4, 5)]  # 6, the lowest placed, sits out

    second = formats.swiss_round(order, 3, [0, 0, 0, 0, 0, 0, 1])
    assert second == [(0, 1, 2), (3, 4, 6)]  # 5 rests now; 6 rested already


def test_a_swiss_round_with_more_seats_than_entrants_is_refused() -> None:
    with pytest.raises(formats.FormatImpossible, match="need at least 5 entrants"):
        formats.swiss_round([0, 1, 2], 5, [0, 0, 0])
