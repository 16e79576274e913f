"""Search for bots: sample the worlds a seat cannot rule out, step them, play them out.

    from referee.botkit.search import Budget, rollout, search, worlds

    possible = worlds(info)                 # every game id; info is what `decide` gets
    world = possible.sample(rng)            # a full engine state the seat cannot tell from the real one
    game = possible.game
    after = game.apply(world, info.seat, legal[0])   # a new state: `world` itself is unchanged
    scores = rollout(game, after, rng=rng)  # greedy for every seat to the end of the round

    choice = search(info, legal, rng, Budget(seconds=0.1)).chosen   # all of it, within a budget

1. **Worlds** (`worlds(info)` -> `Worlds`): every hidden card placed where the public history
   allows. The seat's own hand is exact; every card it has seen (played, the trump card, bet
   cards, the Dummy's face-up cards, Black Sevens' last cards on the table) is where it was seen;
   each other hand has its size; a seat that did not follow suit holds none of that suit; a Black
   Sevens lay-low rules out the hands that could have beaten. The seat's information state in a
   world equals `info`. `Worlds.admits(hands)` tells whether given hands could be the real ones,
   `Worlds.constraints` lists what is unseen and who may hold it, `sample_placement` and `build`
   split sampling from building. Everything random comes from the RNG passed in.
2. **States**: a world is an engine state, at the seat's decision. Engine states are values:
   `game.apply(state, seat, action)` returns a new one and never changes its argument, so a world
   is cloned for free (keep the reference) and stepped with the game's own verbs
   (`to_move`, `legal_actions`, `apply`, `information_state`).
3. **Rollouts** (`rollout`): a policy for every seat (`greedy_policy`, `random_policy`, or your
   own `(state, seat, legal, rng) -> action`) to the end of the round (`Horizon.ROUND`) or the
   game (`Horizon.GAME`, chance drawn from the RNG); returns every seat's score there.
4. **Search** (`search`): determinized Monte-Carlo over sampled worlds, within a time budget
   (see its docstring). The montecarlo example bot is this function and a budget.

`beliefs.bid_belief(info)` weighs worlds by how well each other player's bid fits its hand (a
model, not a rule); pass it to `sample_placement` or `search`.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from referee.botkit.worlds import Belief, Constraints, NoWorld, Placement, Worlds, worlds
from referee.botkit.worlds.beliefs import bid_belief
from referee.engine.games.base import CHANCE, Action, Game
from referee.engine.playout import Policy, random_policy

__all__ = [
    "Belief",
    "Budget",
    "Constraints",
    "GreedyPolicy",
    "Horizon",
    "NoWorld",
    "Placement",
    "Policy",
    "SearchReport",
    "Value",
    "Worlds",
    "bid_belief",
    "greedy_policy",
    "info_round",
    "points_value",
    "random_policy",
    "relative_points",
    "rollout",
    "round_number",
    "sample_world",
    "scores_of",
    "search",
    "standing_value",
    "worlds",
]


def sample_world(info: Any, rng: random.Random) -> Any:
    """One world of a seat's information state: `worlds(info).sample(rng)`."""
    return worlds(info).sample(rng)


# Rollouts


class Horizon(StrEnum):
    """How far a rollout plays: to the end of the round being played, or of the game."""

    ROUND = "round"
    GAME = "game"


class GreedyPolicy:
    """The game's greedy policy, as it plays for the seat to move (from its information state).

    A rollout recognises it and calls the game's greedy directly (a Python call less a step)."""

    def __init__(self, game: Game) -> None:
        self.information_state, self.greedy = game.information_state, game.greedy

    def __call__(self, state: Any, seat: int, legal: tuple[Action, ...], rng: random.Random) -> Action:
        return self.greedy(self.information_state(state, seat), legal)


def greedy_policy(game: Game) -> Policy:
    """The game's greedy policy for every seat (`GreedyPolicy`)."""
    return GreedyPolicy(game)


def round_number(game: Game, state: Any) -> int:
    """The index of the round a state is in (or about to deal), from its public facts."""
    return info_round(game.information_state(state, 0))


def info_round(info: Any) -> int:
    """The index of the round of an information state (`round`, Black Sevens' `round_index`)."""
    number = getattr(info, "round", None)
    return int(info.round_index if number is None else number)


def play_out(
    game: Game,
    state: Any,
    policy: Policy | None = None,
    rng: random.Random | None = None,
    horizon: Horizon = Horizon.ROUND,
    round_index: int | None = None,
) -> Any:
    """The state where a rollout from `state` stops (see `rollout`)."""
    policy = policy or GreedyPolicy(game)
    rng = rng or random.Random(0)
    to_move, legal_actions, apply = game.to_move, game.legal_actions, game.apply
    start_round = -1
    if horizon is Horizon.ROUND:
        start_round = round_number(game, state) if round_index is None else round_index
    greedy = policy.greedy if isinstance(policy, GreedyPolicy) else None
    information_state = game.information_state
    while (decision := to_move(state)) is not None:
        seats = decision.seats
        if not seats:  # chance: a deal (the round is over) or an Oh 7? redeal (it goes on)
            if horizon is Horizon.ROUND and round_number(game, state) != start_round:
                break
            state = apply(state, CHANCE, game.sample_chance(state, rng))
            continue
        for seat in seats:
            legal = legal_actions(state, seat)
            if len(legal) == 1:
                state = apply(state, seat, legal[0])
            elif greedy is not None:
                state = apply(state, seat, greedy(information_state(state, seat), legal))
            else:
                state = apply(state, seat, policy(state, seat, legal, rng))
    return state


def rollout(
    game: Game,
    state: Any,
    policy: Policy | None = None,
    rng: random.Random | None = None,
    horizon: Horizon = Horizon.ROUND,
    round_index: int | None = None,
) -> tuple[int, ...]:
    """Every player's score after playing `policy` for every seat from `state` (default: greedy).

    `Horizon.ROUND` stops when the round in play is scored (at the next deal) or the game ends;
    `Horizon.GAME` plays to the end, drawing chance (deals) from `rng`. The scores are totals, as
    in the information states; subtract the start's to get the round's points (`relative_points`).
    `round_index`, the round `state` is in (`round_number`), saves reading it when known.
    """
    return scores_of(game, play_out(game, state, policy, rng, horizon, round_index))


def scores_of(game: Game, state: Any) -> tuple[int, ...]:
    """Every player's total score in a state (the result's once the game is over)."""
    result = game.result(state)
    return tuple(result.scores) if result is not None else tuple(game.information_state(state, 0).scores)


def relative_points(game: Game, before: Sequence[int], after: Sequence[int], seat: int) -> float:
    """The seat's points between two score lines minus the others' mean, higher better in every
    game (Black Sevens' lower points are negated)."""
    gains = [now - then for now, then in zip(after, before, strict=True)]
    others = [gain for index, gain in enumerate(gains) if index != seat]
    value = gains[seat] - (sum(others) / len(others) if others else 0.0)
    return value if game.higher_is_better else -value


Value = Callable[[Game, Sequence[int], Any, int], float]
"""(game, scores at the decision, state where a rollout stopped, seat) -> how good that is for the seat."""


def points_value(game: Game, before: Sequence[int], end: Any, seat: int) -> float:
    """The seat's points since the decision minus the others' mean (`relative_points`)."""
    return relative_points(game, before, scores_of(game, end), seat)


RANK_WEIGHT = 100.0
"""Points a place of rank is worth to `standing_value` when a rollout ends the game."""


def standing_value(game: Game, before: Sequence[int], end: Any, seat: int) -> float:
    """`points_value`, plus `RANK_WEIGHT` per place the seat finishes ahead of the others' mean
    rank when the rollout ends the game: at the end only the ranks count, so a last round is
    played for the place (a big lead kept safe, a deficit chased), not for the points."""
    value = points_value(game, before, end, seat)
    result = game.result(end)
    if result is None or result.ranks is None:
        return value
    ranks = result.ranks
    others = [rank for index, rank in enumerate(ranks) if index != seat]
    return value + RANK_WEIGHT * (sum(others) / len(others) - ranks[seat]) if others else value


# Search


@dataclass(frozen=True)
class Budget:
    """How long one decision may search, at most how many worlds it samples and, optionally, at
    most how many rollouts it plays (a cap that, unlike time, gives the same search on any machine)."""

    seconds: float = 0.2
    max_worlds: int = 200
    max_rollouts: int | None = None


@dataclass
class SearchReport:
    """What one search did: worlds sampled, rollouts played, each action's mean value (over the
    worlds it was tried in), the actions still in the race at the end, the chosen action."""

    worlds: int
    rollouts: int
    means: dict[Any, float]
    chosen: Action
    seconds: float
    contenders: tuple[Action, ...] = ()


GREEDY_TIE_BONUS = 1e-6
"""Added to greedy's choice so equal means keep greedy's (tested, sensible) action."""
RACE_AFTER = 10
"""Worlds every action is played in before any may drop out of the race."""
RACE_Z = 3.0
"""An action drops out once its paired deficit to the best is this many standard errors above 0:
the test is repeated after every world, so a lower bar drops good actions by chance (at 2
standard errors after 6 worlds, one decision in twenty ended further from the converged choice)."""
BELIEF_TRIES = 8
"""Placements drawn per world when a belief weighs them (see `Worlds.sample_placement`)."""


def search(
    info: Any,
    legal: tuple[Action, ...],
    rng: random.Random,
    budget: Budget = Budget(),
    *,
    policy: Policy | None = None,
    belief: Belief | None = None,
    horizon: Horizon = Horizon.ROUND,
    race: bool = True,
    value: Value = points_value,
) -> SearchReport:
    """The action with the best mean rollout value over worlds of `info` (determinized Monte-Carlo).

    Each world is sampled (with a `belief`, such as `bid_belief(info)`, up to `BELIEF_TRIES`
    placements are drawn and each kept with the probability the belief gives it, else the
    likeliest), every action still in the race is applied in it and played out with `policy`
    (default greedy, for every seat) to the `horizon`, and valued by `value` (default: the seat's
    points minus the others' mean, `points_value`). All actions are tried on the same worlds, so
    their comparison is paired and not blurred by the luck of the deal. With `race`, after
    `RACE_AFTER` worlds an action whose paired deficit to the best is clearly (`RACE_Z` standard
    errors) above zero stops being tried: the time goes to the close calls, and when one action is
    left the search ends.

    It stops at the budget's time, world or rollout cap, and never starts a world the time left
    cannot cover (judged by the last world), except the first. Equal means keep the game's greedy
    choice.
    """
    started = time.perf_counter()
    deadline = started + budget.seconds
    possible = worlds(info)
    game, seat = possible.game, info.seat
    greedy_choice = game.greedy(info, legal)
    if len(legal) == 1:
        return SearchReport(0, 0, {legal[0]: 0.0}, legal[0], time.perf_counter() - started, legal)
    policy = policy or GreedyPolicy(game)
    before = tuple(info.scores)
    start_round = info_round(info)
    values: list[list[float]] = [[] for _ in legal]
    live = list(range(len(legal)))
    worlds_done = rollouts = 0
    last = 0.0
    max_rollouts = budget.max_rollouts
    while worlds_done < budget.max_worlds and len(live) > 1:
        begun = time.perf_counter()
        if worlds_done and (
            begun + last > deadline or (max_rollouts and rollouts + len(live) > max_rollouts)
        ):
            break
        world = possible.build(possible.sample_placement(rng, belief, BELIEF_TRIES))
        for index in live:
            end = play_out(game, game.apply(world, seat, legal[index]), policy, rng, horizon, start_round)
            values[index].append(value(game, before, end, seat))
        rollouts += len(live)
        worlds_done += 1
        if race and worlds_done >= RACE_AFTER:
            live = _race(values, live, greedy_choice, legal)
        last = time.perf_counter() - begun
    means = {
        legal[index]: sum(values[index]) / len(values[index]) for index in range(len(legal)) if values[index]
    }
    best = max(
        live,
        key=lambda index: means[legal[index]] + (GREEDY_TIE_BONUS if legal[index] == greedy_choice else 0.0),
    )
    return SearchReport(
        worlds_done,
        rollouts,
        means,
        legal[best],
        time.perf_counter() - started,
        tuple(legal[index] for index in live),
    )


def _race(
    values: list[list[float]], live: list[int], greedy_choice: Action, legal: tuple[Action, ...]
) -> list[int]:
    """The actions still in the race: those whose paired deficit to the leader is not clear (the
    live actions were all tried in every world so far)."""
    count = len(values[live[0]])
    leader = max(
        live,
        key=lambda index: sum(values[index]) + (GREEDY_TIE_BONUS if legal[index] == greedy_choice else 0.0),
    )
    best = values[leader]
    kept = []
    for index in live:
        if index == leader:
            kept.append(index)
            continue
        gaps = [high - low for high, low in zip(best, values[index], strict=True)]
        mean = sum(gaps) / count
        variance = sum((gap - mean) ** 2 for gap in gaps) / (count - 1)
        clearly_worse = mean > 0 and mean * math.sqrt(count) > RACE_Z * math.sqrt(variance)
        if not clearly_worse:
            kept.append(index)
    return kept
