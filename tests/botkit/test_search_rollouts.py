"""The search API's rollouts and search (referee.botkit.search): rollouts play legal actions to a
legal end, leave the world they start from unchanged, and the search decides from the seat's view
alone, within its budget."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from search_positions import positions, some_positions

from referee.botkit.search import (
    BELIEF_TRIES,
    Budget,
    Horizon,
    Placement,
    bid_belief,
    greedy_policy,
    info_round,
    play_out,
    random_policy,
    relative_points,
    rollout,
    round_number,
    search,
    worlds,
)
from referee.engine.games import GAMES, get_game
from referee.engine.games.base import CHANCE, Action, Game
from referee.engine.playout import Policy


def checked(game: Game, policy: Policy, seen: list[int]) -> Policy:
    """The policy, asserting every action it is asked for is chosen among the legal ones."""

    def play(state: Any, seat: int, legal: tuple[Action, ...], rng: random.Random) -> Action:
        assert legal == game.legal_actions(state, seat) and len(legal) > 1
        action = policy(state, seat, legal, rng)
        assert action in legal
        seen.append(seat)
        return action

    return play


@pytest.mark.parametrize("game_id", list(GAMES))
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), stop=st.integers(0, 300), greedy=st.booleans())
def test_rollouts_end_in_legal_terminal_states(game_id: str, seed: int, stop: int, greedy: bool) -> None:
    """From a world of a random position: a round rollout stops at the next deal (a new round) or
    the game's end, a game rollout at the game's end with a result; the world is left unchanged."""
    game = get_game(game_id)
    players = game.players.start + seed % len(game.players)
    chosen = None
    for index, position in enumerate(positions(game, players, seed)):
        chosen = position
        if index == stop:
            break
    assert chosen is not None
    state, seat = chosen
    rng = random.Random(seed)
    world = worlds(game.information_state(state, seat)).sample(rng)
    pristine = copy.deepcopy(world)
    base = greedy_policy(game) if greedy else random_policy
    moved: list[int] = []

    end = play_out(game, world, checked(game, base, moved), rng, Horizon.ROUND)
    decision = game.to_move(end)
    if decision is None:
        assert game.result(end) is not None
    else:
        assert decision.is_chance, "a round rollout stops only at a deal"
        assert round_number(game, end) == round_number(game, world) + 1
    assert world == pristine, "a rollout never changes the world it starts from"

    final = play_out(game, world, checked(game, base, moved), random.Random(seed + 1), Horizon.GAME)
    result = game.result(final)
    assert game.to_move(final) is None and result is not None
    assert rollout(game, world, base, random.Random(seed + 1), Horizon.GAME) == tuple(result.scores)
    assert world == pristine
    assert moved, "some decision had a choice"


def test_a_round_rollout_returns_the_scores_after_the_round() -> None:
    """Oh Hell!: the round's points are 10 x bid for a made bid, else -10 per trick missed; every
    seat's gain is one of those."""
    game = get_game("oh-hell")
    state, seat = some_positions(game, 3, 6, count=3)[1]
    info = game.information_state(state, seat)
    world = worlds(info).sample(random.Random(1))
    scores = rollout(game, world)
    gains = [after - before for after, before in zip(scores, info.scores, strict=True)]
    assert all(gain % 10 == 0 and gain != 0 for gain in gains)
    assert scores == rollout(game, world, greedy_policy(game)), "greedy is the default and deterministic"
    assert relative_points(game, info.scores, scores, 0) == gains[0] - (gains[1] + gains[2]) / 2


def test_relative_points_are_negated_where_lower_is_better() -> None:
    assert relative_points(get_game("black-sevens"), (0, 0, 0, 0), (5, 9, 9, 9), 0) == 4.0
    assert relative_points(get_game("oh-hell"), (0, 0, 0), (30, 10, -10), 0) == 30.0


def test_the_round_of_an_information_state_is_read_in_every_game() -> None:
    for game_id, game in GAMES.items():
        state = game.start(game.players.start, round_index=2)
        assert round_number(game, state) == 2, game_id
        assert info_round(game.information_state(state, 0)) == 2


def test_the_search_stops_at_its_world_cap_or_its_time_budget() -> None:
    game = get_game("oh-hell")
    state, seat = next(positions(game, 4, seed=1))
    info, legal = game.information_state(state, seat), game.legal_actions(state, seat)
    capped = search(info, legal, random.Random(1), Budget(seconds=60.0, max_worlds=5), race=False)
    assert capped.worlds == 5 and capped.rollouts == 5 * len(legal), "plenty of time: the world cap stops it"
    timed = search(info, legal, random.Random(1), Budget(seconds=0.05, max_worlds=10**6))
    assert 1 <= timed.worlds < 10**6, "the time budget stops it long before the cap"
    assert timed.seconds < 1.0, "well inside the referee's one second per decision"
    assert timed.chosen in legal


def test_the_race_drops_clearly_worse_actions_and_chooses_near_the_best() -> None:
    """Bidding with a 10-card hand: most bids are clearly wrong after a few worlds; the race stops
    trying them, and its choice is one the full search ranks near the top (within one trick's
    10 points of its best: the race spends fewer worlds, so it may settle on a close second)."""
    game = get_game("oh-hell")
    state, seat = next(positions(game, 3, seed=4))
    info, legal = game.information_state(state, seat), game.legal_actions(state, seat)
    assert len(legal) >= 10
    raced = search(info, legal, random.Random(2), Budget(seconds=60.0, max_worlds=40))
    full = search(info, legal, random.Random(2), Budget(seconds=60.0, max_worlds=40), race=False)
    assert len(raced.contenders) < len(legal)
    assert raced.rollouts < full.rollouts
    assert full.means[raced.chosen] >= max(full.means.values()) - 10
    assert raced.chosen in raced.contenders


def test_one_legal_action_is_answered_without_searching() -> None:
    game = get_game("black-sevens")
    for state, seat in positions(game, 4, 2):
        info = game.information_state(state, seat)
        report = search(info, (game.legal_actions(state, seat)[0],), random.Random(1), Budget(60.0, 50))
        assert report.worlds == 0 and report.chosen == game.legal_actions(state, seat)[0]
        return


@pytest.mark.parametrize("game_id", ["oh-hell", "oh7", "black-sevens"])
def test_the_decision_depends_only_on_the_seat_view_not_on_the_hidden_cards(game_id: str) -> None:
    """Two deals that differ only in cards the seat cannot see (two opponents swap hands before
    the first play) give the same information state, the same worlds and the same choice."""
    game = get_game(game_id)
    rng = random.Random(3)
    deal = game.sample_chance(game.start(4), rng)
    state = game.apply(game.start(4), CHANCE, deal)
    decision = game.to_move(state)
    assert decision is not None
    seat = decision.seats[0]
    others = [other for other in range(4) if other != seat][:2]
    hands = [list(hand) for hand in deal["hands"]]
    hands[others[0]], hands[others[1]] = hands[others[1]], hands[others[0]]
    swapped = game.apply(game.start(4), CHANCE, {**deal, "hands": hands})
    assert game.information_state(swapped, others[0]).hand == game.information_state(state, others[1]).hand
    budget = Budget(seconds=60.0, max_worlds=12)
    reports = []
    for real in (state, swapped):
        info = game.information_state(real, seat)
        legal = game.legal_actions(real, seat)
        reports.append(search(info, legal, random.Random(9), budget, belief=bid_belief(info)))
    assert reports[0].means == reports[1].means
    assert reports[0].chosen == reports[1].chosen


def test_bids_make_the_real_hands_likelier_than_other_worlds() -> None:
    """Over positions of greedy play (the field the belief models), the others' real hands fit
    their bids better than the average world does."""
    game = get_game("oh-hell")
    rng = random.Random(4)
    real_weights, world_weights = [], []
    for seed in range(1, 4):
        for state, seat in some_positions(game, 4, seed, count=30):
            info = game.information_state(state, seat)
            belief = bid_belief(info)
            if belief is None:
                continue
            possible = worlds(info)
            real = possible.sample_placement(rng)
            real_weights.append(belief(Placement(tuple(_hands(game, state)), real.rest)))
            world_weights += [belief(possible.sample_placement(rng)) for _ in range(5)]
    assert len(real_weights) > 30
    assert sum(real_weights) / len(real_weights) > 1.5 * sum(world_weights) / len(world_weights)


def _hands(game: Game, state: Any) -> list[tuple[str, ...]]:
    return [tuple(game.information_state(state, seat).hand) for seat in range(4)]


def test_no_belief_in_games_or_rounds_without_bids() -> None:
    black_sevens = get_game("black-sevens")
    state, seat = next(positions(black_sevens, 4, 1))
    assert bid_belief(black_sevens.information_state(state, seat)) is None
    oh_hell = get_game("oh-hell")
    state = oh_hell.apply(oh_hell.start(3), CHANCE, oh_hell.sample_chance(oh_hell.start(3), random.Random(1)))
    first = oh_hell.to_move(state)
    assert first is not None
    assert bid_belief(oh_hell.information_state(state, first.seats[0])) is None, "nobody has bid yet"


def test_a_belief_chooses_the_worlds_searched() -> None:
    """With a belief, each world is drawn until the belief keeps one (at most BELIEF_TRIES
    placements): a belief that wants an opponent holding the ace of trumps gets such worlds, and
    the search's means are those of exactly these worlds."""
    game = get_game("oh-hell")
    state, seat = next(positions(game, 3, seed=4))
    info, legal = game.information_state(state, seat), game.legal_actions(state, seat)
    ace, other = "A" + info.trump, (seat + 1) % 3

    def holds_ace(placement: Placement) -> float:
        return 1.0 if ace in placement.hands[other] else 0.0

    possible = worlds(info)
    rng = random.Random(5)
    drawn = [possible.sample_placement(rng, holds_ace, tries=50) for _ in range(30)]
    assert all(ace in placement.hands[other] for placement in drawn)

    weighted = search(info, legal, random.Random(5), Budget(60.0, 30), race=False, belief=holds_ace)
    rng = random.Random(5)
    values: dict[Any, list[float]] = {action: [] for action in legal}
    for _ in range(30):
        world = possible.build(possible.sample_placement(rng, holds_ace, BELIEF_TRIES))
        for action in legal:
            end = rollout(game, game.apply(world, seat, action), rng=rng)
            values[action].append(relative_points(game, info.scores, end, seat))
    assert weighted.means == pytest.approx({action: sum(v) / len(v) for action, v in values.items()})
