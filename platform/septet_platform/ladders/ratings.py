"""Ratings as pure functions: openskill's Plackett-Luce model, and its Elo-like display.

No Django here: the services load and store beliefs, these functions compute them, so a sequence
of results replayed through `replay` gives exactly the ratings the ladder stored.

A belief is `(mu, sigma)`: the model's estimate of a bot version's skill and its uncertainty. A new
bot starts from the model's defaults (mu 25, sigma 25/3); a new version of a rated bot starts from
its predecessor's mu with the default (fresh) sigma.

The display scale (`display`): rating = 1500 + ELO_PER_MU * (mu - 25), shown with the interval
rating ± 2 sigma (about 95%) on the same scale, all rounded to whole points. ELO_PER_MU makes
rating differences read like Elo's: between two well-known bots (sigma small), the Plackett-Luce
likelihood the model is fitted with gives A the chance 1 / (1 + exp(-(mu_A - mu_B) / c)) to beat B,
with c = beta * sqrt(2) (openskill's `predict_win` uses a normal approximation instead); Elo's is
1 / (1 + 10 ** (-(R_A - R_B) / 400)); equal when ELO_PER_MU = 400 / (c * ln 10) ≈ 29.5. So a new
bot shows 1500 (interval about 1009..1991) and a 400-point gap means about 10:1 odds.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import NamedTuple

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
"""The one model every ladder uses, with openskill's defaults (mu 25, sigma 25/3, beta 25/6)."""

DEFAULT_MU: float = MODEL.mu
DEFAULT_SIGMA: float = MODEL.sigma
BETA: float = MODEL.beta

ELO_BASE = 1500
"""The displayed rating of the model's default mu: where a new bot starts."""

ELO_PER_MU = 400 / (BETA * math.sqrt(2) * math.log(10))
"""Display points per unit of mu (≈ 29.5): 400 points are 10:1 odds, as in Elo."""

PROVISIONAL_GAMES = 50
"""A version's place is provisional until it has played this many rated games: by then a bot a
third of a place better than another is ranked above it on 95% of simulated ladders
(docs/ratings.md)."""

INTERVAL_SIGMAS = 2
"""The displayed interval is mu ± this many sigma (about 95%)."""


class Belief(NamedTuple):
    """One version's rating: skill estimate `mu` and its uncertainty `sigma`."""

    mu: float
    sigma: float


class Shown(NamedTuple):
    """A rating as shown: the Elo-like number and its interval."""

    rating: int
    low: int
    high: int


def initial(predecessor_mu: float | None = None) -> Belief:
    """Where a version starts: its predecessor's mu (or the default) with fresh uncertainty."""
    return Belief(DEFAULT_MU if predecessor_mu is None else float(predecessor_mu), DEFAULT_SIGMA)


def rate(beliefs: Sequence[Belief], ranks: Sequence[int]) -> list[Belief]:
    """The beliefs after one game in which seat i held `beliefs[i]` and finished `ranks[i]`.

    Ranks are 1-based, lower is better, ties share a rank (1, 1, 3). Each seat is its own team.
    Ties follow Weng and Lin's rule (each of k tied seats wins 1/k of their stage), under which the
    seat just below a tie at the top can gain as much as the tied seats, never more.
    """
    if len(beliefs) != len(ranks):
        raise ValueError(f"{len(beliefs)} beliefs but {len(ranks)} ranks")
    if len(beliefs) < 2:
        raise ValueError(f"a rated game needs at least 2 seats, got {len(beliefs)}")
    if any(not isinstance(rank, int) or rank < 1 for rank in ranks):
        raise ValueError(f"ranks must be positive integers, got {list(ranks)}")
    teams = [[MODEL.rating(mu=belief.mu, sigma=belief.sigma)] for belief in beliefs]
    rated = MODEL.rate(teams, ranks=[float(rank) for rank in ranks])
    return [Belief(float(team[0].mu), float(team[0].sigma)) for team in rated]


def replay(
    games: Iterable[Sequence[tuple[Hashable, int]]], start: Mapping[Hashable, Belief] | None = None
) -> dict[Hashable, Belief]:
    """The beliefs after `games` in order, each a list of (player, rank); unknown players start
    from `start` or the defaults. What the ladder stores is this, game by game."""
    beliefs: dict[Hashable, Belief] = dict(start or {})
    for game in games:
        players = [player for player, _ in game]
        before = [beliefs.get(player) or initial() for player in players]
        for player, after in zip(players, rate(before, [rank for _, rank in game]), strict=True):
            beliefs[player] = after
    return beliefs


def display(mu: float, sigma: float) -> Shown:
    """(rating, low, high) on the Elo-like scale; see the module docstring for the mapping."""

    def points(value: float) -> int:
        return round(ELO_BASE + ELO_PER_MU * (value - DEFAULT_MU))

    return Shown(points(mu), points(mu - INTERVAL_SIGMAS * sigma), points(mu + INTERVAL_SIGMAS * sigma))
