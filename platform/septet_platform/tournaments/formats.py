"""The scheduling designs of tournaments, pure functions of entrant indices 0..n-1 and an rng.

Round robin: every combination of `size` entrants when there are few enough, otherwise a balanced
incomplete design: `tables` tables in which every entrant sits equally often (within one) and every
pair of entrants meets about equally often. Chosen automatically, it is the fewest tables (a
multiple that seats everyone equally) for which every pair meets as often as any other, within one.
Each design is built greedily (the least-seated entrants first, then those who have met the table
least) and improved by swapping entrants between tables while the sum of squared pair counts
falls; swaps keep each entrant's number of tables unchanged.

Swiss: each round sorts the entrants by their standing so far and seats neighbours together; when
`size` does not divide the field, the entrants who have sat out least (the lowest placed among
them) sit this round out.

Seat balance comes from the duplicate sets: every table is played once per cyclic rotation of its
seating, so each entrant holds every seat of every deal it plays (`rotations`).
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Sequence

Table = tuple[int, ...]

MAX_ALL_COMBINATIONS = 60
"""Round robin plays every combination up to this many tables; beyond, a balanced design."""
IMPROVEMENT_PASSES = 200
RESTARTS = 16
"""Greedy designs tried (each improved by swaps); the most even is kept."""


class FormatImpossible(ValueError):
    """A format that cannot be played with these entrants (more seats than entrants, ...)."""


def check_size(entrants: int, size: int) -> None:
    """Raises FormatImpossible unless `entrants` can fill tables of `size` (at least 2 seats)."""
    if size < 2:
        raise FormatImpossible(f"a table needs at least 2 seats, not {size}")
    if entrants < size:
        raise FormatImpossible(f"tables of {size} need at least {size} entrants, and there are {entrants}")


def combinations_count(entrants: int, size: int) -> int:
    return math.comb(entrants, size)


def automatic_tables(entrants: int, size: int) -> int:
    """How many tables a balanced design uses by default: enough for every pair to meet at least
    about once, rounded up so every entrant sits equally often (a multiple of n / gcd(n, size))."""
    pairs_per_table = math.comb(size, 2)
    needed = math.ceil(math.comb(entrants, 2) / pairs_per_table)
    step = entrants // math.gcd(entrants, size)
    return max(step, math.ceil(needed / step) * step)


def round_robin(entrants: int, size: int, rng: random.Random, tables: int = 0) -> list[Table]:
    """The tables of a round robin (see the module docstring); `tables=0` chooses: every
    combination when there are at most MAX_ALL_COMBINATIONS, else `automatic_tables`."""
    check_size(entrants, size)
    if tables < 0:
        raise FormatImpossible(f"the number of tables must be 0 (automatic) or more, not {tables}")
    total = combinations_count(entrants, size)
    if (tables == 0 and total <= MAX_ALL_COMBINATIONS) or tables == total:
        return [tuple(table) for table in itertools.combinations(range(entrants), size)]
    if tables > total:
        raise FormatImpossible(f"{tables} tables asked but only {total} different tables of {size} exist")
    if tables:
        return _balanced(entrants, size, tables, rng)
    # Automatic: the fewest tables (seating everyone equally) whose design is balanced to within one.
    step = entrants // math.gcd(entrants, size)
    count = automatic_tables(entrants, size)
    while True:
        design = _balanced(entrants, size, count, rng)
        if pair_spread(design, entrants) <= 1 or count + step > total:
            return design
        count += step


def _balanced(entrants: int, size: int, count: int, rng: random.Random) -> list[Table]:
    """The most even of RESTARTS greedy designs of `count` tables, each improved by swaps."""
    best: list[list[int]] | None = None
    for _ in range(RESTARTS):
        design = _greedy(entrants, size, count, rng)
        _improve(design, rng)
        if best is None or _quality(design, entrants) < _quality(best, entrants):
            best = design
    assert best is not None
    return [tuple(sorted(table)) for table in best]


def pair_spread(design: Sequence[Sequence[int]], entrants: int) -> int:
    """How much more often the most-met pair of entrants meets than the least-met pair."""
    pairs = _pair_counts(design)
    counts = [pairs[pair] for pair in itertools.combinations(range(entrants), 2)]
    return max(counts) - min(counts)


def _quality(design: list[list[int]], entrants: int) -> tuple[int, int]:
    return pair_spread(design, entrants), _cost(_pair_counts(design))


def _pair_counts(design: Sequence[Sequence[int]]) -> Counter[tuple[int, int]]:
    counts: Counter[tuple[int, int]] = Counter()
    for table in design:
        counts.update(itertools.combinations(sorted(table), 2))
    return counts


def _greedy(entrants: int, size: int, count: int, rng: random.Random) -> list[list[int]]:
    seated = [0] * entrants
    pairs: Counter[tuple[int, int]] = Counter()
    design: list[list[int]] = []
    for _ in range(count):
        table: list[int] = []
        while len(table) < size:
            fewest = min(seated[e] for e in range(entrants) if e not in table)
            pool = [e for e in range(entrants) if e not in table and seated[e] == fewest]
            rng.shuffle(pool)
            best = min(pool, key=lambda e: sum(pairs[_pair(e, other)] for other in table))
            table.append(best)
        for e in table:
            seated[e] += 1
        pairs.update(itertools.combinations(sorted(table), 2))
        design.append(table)
    return design


def _cost(pairs: Counter[tuple[int, int]]) -> int:
    return sum(n * n for n in pairs.values())


def _improve(design: list[list[int]], rng: random.Random) -> None:
    """Swaps one entrant of a table with one of another table whenever it lowers the sum of
    squared pair counts (each entrant's number of tables is unchanged); stops when no swap helps."""
    pairs = _pair_counts(design)
    for _ in range(IMPROVEMENT_PASSES):
        improved = False
        order = list(itertools.permutations(range(len(design)), 2))
        rng.shuffle(order)
        for i, j in order:
            for a, b in itertools.product(list(design[i]), list(design[j])):
                if b in design[i] or a in design[j]:
                    continue
                if _swap_gain(design, pairs, i, j, a, b) > 0:
                    _swap(design, pairs, i, j, a, b)
                    improved = True
        if not improved:
            return


def _swap_gain(
    design: list[list[int]], pairs: Counter[tuple[int, int]], i: int, j: int, a: int, b: int
) -> int:
    """How much the sum of squared pair counts falls if `a` (table i) and `b` (table j) swap."""
    change: Counter[tuple[int, int]] = Counter()
    for other in design[i]:
        if other != a:
            change[_pair(a, other)] -= 1
            change[_pair(b, other)] += 1
    for other in design[j]:
        if other != b:
            change[_pair(b, other)] -= 1
            change[_pair(a, other)] += 1
    return sum(pairs[key] ** 2 - (pairs[key] + delta) ** 2 for key, delta in change.items())


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def _swap(design: list[list[int]], pairs: Counter[tuple[int, int]], i: int, j: int, a: int, b: int) -> None:
    """Moves `a` from table i to table j and `b` from j to i, keeping `pairs` up to date."""
    for table in (design[i], design[j]):
        pairs.subtract(itertools.combinations(sorted(table), 2))
    design[i][design[i].index(a)] = b
    design[j][design[j].index(b)] = a
    for table in (design[i], design[j]):
        pairs.update(itertools.combinations(sorted(table), 2))


def swiss_round(order: Sequence[int], size: int, sat_out: Sequence[int]) -> list[Table]:
    """One Swiss round: `order` is the entrants best first; `sat_out[e]` how many rounds entrant e
    has sat out. Neighbours in the order share a table; the remainder (n mod size) sits out, chosen
    among those who sat out least, lowest placed first."""
    check_size(len(order), size)
    spare = len(order) % size
    resting: set[int] = set()
    if spare:
        by_rest = sorted(order[::-1], key=lambda e: sat_out[e])  # stable: lowest placed first
        resting = set(by_rest[:spare])
    playing = [e for e in order if e not in resting]
    return [tuple(playing[start : start + size]) for start in range(0, len(playing), size)]


def rotations(table: Table) -> list[Table]:
    """The seatings of a duplicate set: rotation r puts table[(seat + r) % n] in `seat`."""
    n = len(table)
    return [tuple(table[(seat + r) % n] for seat in range(n)) for r in range(n)]
