"""The API contract every game keeps (referee.engine.games.base), checked over all game ids at once.

Each game's own test module checks its rules; this one checks the shape OpenSpiel's
`random_sim_test` checks for its games: random legal play ends, `apply` never mutates, the
information states hold only immutable data a bot cannot use to reach into the referee, chance
is drawn only from the RNG passed in, and decisions and results are well formed.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.games import GAMES
from referee.engine.games.base import CHANCE, Decision, DecisionKind, Result
from referee.engine.playout import playout

IMMUTABLE = (int, str, bool, float, type(None))


def _is_immutable(value: Any) -> bool:
    if isinstance(value, IMMUTABLE):
        return True
    if isinstance(value, (tuple, frozenset)):
        return all(_is_immutable(item) for item in value)
    return False


def _player_counts(game_id: str) -> list[int]:
    return list(GAMES[game_id].players)


@pytest.mark.parametrize("game_id", list(GAMES))
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_random_play_keeps_the_game_contract(game_id: str, seed: int, data: st.DataObject) -> None:
    game = GAMES[game_id]
    players = data.draw(st.sampled_from(_player_counts(game_id)), label="players")
    state = game.start(players)
    rng = random.Random(seed)
    steps = 0
    while (decision := game.to_move(state)) is not None:
        assert isinstance(decision, Decision)
        steps += 1
        assert steps < 20_000, "the game must end"
        if decision.is_chance:
            assert decision.kind is DecisionKind.DEAL
            before = copy.deepcopy(state)
            outcome = game.sample_chance(state, rng)
            json.dumps(outcome)  # chance outcomes are plain JSON for the replay
            state = game.apply(state, CHANCE, outcome)
            assert before == copy.deepcopy(before)
            continue
        assert all(0 <= seat < players for seat in decision.seats), "the Dummy is never asked"
        for seat in decision.seats:
            legal = game.legal_actions(state, seat)
            assert legal and len(set(legal)) == len(legal), "legal actions: some, no duplicates"
            info = game.information_state(state, seat)
            assert dataclasses.is_dataclass(info)
            fields = {f.name: getattr(info, f.name) for f in dataclasses.fields(info)}
            mutable = [name for name, value in fields.items() if not _is_immutable(value)]
            assert mutable == [], "an information state holds only immutable values"
            action = legal[rng.randrange(len(legal))]
            snapshot = copy.deepcopy(state)
            new_state = game.apply(state, seat, action)
            assert state == snapshot, "apply must not mutate the state it was given"
            json.dumps(list(new_state.events))
            state = new_state
    result = game.result(state)
    assert isinstance(result, Result)
    assert len(result.scores) == players
    if result.ranks is not None:
        assert len(result.ranks) == players and min(result.ranks) == 1
        assert all(1 <= rank <= players for rank in result.ranks)
    else:
        assert result.aborted


@pytest.mark.parametrize("game_id", list(GAMES))
def test_chance_comes_only_from_the_rng_passed_in(game_id: str) -> None:
    game = GAMES[game_id]
    players = game.players.start

    def events(seed: int) -> list[Any]:
        return [step.state.events for step in playout(game, game.start(players), random.Random(seed))]

    random.seed(1)
    first = events(5)
    random.seed(2)  # changing the global RNG must change nothing
    assert events(5) == first
    assert events(6) != first


@pytest.mark.parametrize("game_id", list(GAMES))
def test_greedy_policy_is_legal_and_deterministic(game_id: str) -> None:
    game = GAMES[game_id]
    for players in (game.players.start, game.players.stop - 1):
        rng = random.Random(players)

        def greedy_everywhere(state: Any, seat: int, legal: Any, rng: random.Random) -> Any:
            info = game.information_state(state, seat)
            action = game.greedy(info, legal)
            assert action in legal and game.greedy(info, legal) == action
            return action

        for _ in playout(game, game.start(players), rng, greedy_everywhere):
            pass
