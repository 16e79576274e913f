"""referee.openspiel: OpenSpiel's own checks on every game id, serialization, chance, returns,
information states that hide what they must, cheap clones, and bad parameters refused.

OpenSpiel comes from the optional extra `openspiel`, imported at the top on purpose: without it
this module fails to collect (scripts/setup-env.sh installs it), it never skips.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pyspiel
import pytest
from open_spiel.python.observation import make_observation

from referee.engine.games import all_games, get_game
from referee.openspiel import GAME_NAMES, RETURNS, SeptetState, short_name
from referee.openspiel.observer import describe
from referee.pettingzoo.encoding import OH7_INDEX, encoding_for

NAMES = {game_id: short_name(game_id) for game_id in all_games()}
GAME_IDS = tuple(NAMES)


def play_to_decision(state: Any, rng: random.Random, decisions: int = 0) -> Any:
    """Chance drawn at random and `decisions` random player actions, then to the next decision."""
    while True:
        if state.is_chance_node():
            outcomes, chances = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(outcomes, chances)[0])
        elif decisions > 0:
            state.apply_action(rng.choice(state.legal_actions()))
            decisions -= 1
        else:
            return state


def test_every_game_id_is_registered_under_its_name() -> None:
    assert tuple(NAMES.values()) == GAME_NAMES
    assert NAMES["oh7-duel"] == "septet_oh7_duel"
    assert NAMES["seven-up-seven-down"] == "septet_seven_up_seven_down"
    assert set(GAME_NAMES) <= set(pyspiel.registered_names())
    loaded = pyspiel.load_game("septet_oh7", {"players": 4})
    assert str(loaded) == "septet_oh7(players=4,returns=ranks,target=35)"
    assert loaded.num_players() == 4


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_openspiels_random_simulation_test_passes(game_id: str) -> None:
    """OpenSpiel's own API check: legal actions and masks, chance probabilities, observation and
    information state tensors' shapes, returns within the utility bounds, and every state's
    serialization round trip."""
    pyspiel.random_sim_test(pyspiel.load_game(NAMES[game_id]), num_sims=1, serialize=True, verbose=False)


def test_random_simulation_test_passes_with_other_parameters() -> None:
    for name, parameters in [
        ("septet_oh7", {"players": 5, "target": 21, "returns": "scores"}),
        ("septet_oh7_advanced", {"players": 6}),
        ("septet_black_sevens", {"returns": "scores"}),
    ]:
        game = pyspiel.load_game(name, parameters)
        pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_serialized_state_comes_back_the_same_mid_game_and_mid_deal(game_id: str) -> None:
    game = pyspiel.load_game(NAMES[game_id])
    rng = random.Random(game_id)
    state = play_to_decision(game.new_initial_state(), rng, decisions=7)
    mid_deal = game.new_initial_state()
    for _ in range(5):
        mid_deal.apply_action(mid_deal.chance_outcomes()[0][0])
    for original in (state, mid_deal):
        again = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, original))[1]
        assert again.history() == original.history() and str(again) == str(original)
        assert again.current_player() == original.current_player()
        if again.is_chance_node():
            assert again.chance_outcomes() == original.chance_outcomes()
        else:
            assert again.legal_actions() == original.legal_actions()
            player = original.current_player()
            assert again.information_state_string(player) == original.information_state_string(player)


def test_a_deal_is_drawn_card_by_card_with_the_decks_multiplicities() -> None:
    """Oh Hell! draws its first dealer, then every card uniformly from the rest; Oh 7? advanced holds
    `N` twice, so its first card is `N` with twice the chance of any other."""
    state = pyspiel.load_game("septet_oh_hell", {"players": 4}).new_initial_state()
    assert state.chance_outcomes() == [(seat, 0.25) for seat in range(4)]
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 2) == "dealer 2"
    state.apply_action(2)
    assert len(state.chance_outcomes()) == 52
    state.apply_action(0)
    outcomes = dict(state.chance_outcomes())
    assert 0 not in outcomes and len(outcomes) == 51 and outcomes[1] == pytest.approx(1 / 51)
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 1) == "deal 3S to seat 1"
    advanced = pyspiel.load_game("septet_oh7_advanced", {"players": 3}).new_initial_state()
    first = dict(advanced.chance_outcomes())
    deck = 2 * 8 + 7
    assert first[OH7_INDEX["N"]] == pytest.approx(2 / deck)
    assert first[OH7_INDEX["?"]] == pytest.approx(1 / deck)
    assert sum(first.values()) == pytest.approx(1.0)


def test_the_same_chance_outcomes_and_actions_replay_the_same_game() -> None:
    game = pyspiel.load_game("septet_seven_up_seven_down", {"players": 3})
    played = play_to_decision(game.new_initial_state(), random.Random(5), decisions=40)
    again = game.new_initial_state()
    for action in played.history():
        again.apply_action(action)
    assert str(again) == str(played) and again.legal_actions() == played.legal_actions()


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_returns_are_ranks_or_scores_from_the_engines_result(game_id: str) -> None:
    engine_game = get_game(game_id)
    for returns in RETURNS:
        game = pyspiel.load_game(NAMES[game_id], {"returns": returns})
        state = game.new_initial_state()
        rng = random.Random(3)
        while not state.is_terminal():
            assert state.returns() == [0.0] * game.num_players()
            play_to_decision(state, rng, decisions=1)
            while state.is_chance_node():
                play_to_decision(state, rng)
        result = engine_game.result(state.engine_state())
        assert result is not None and result.ranks is not None
        n = game.num_players()
        if returns == "ranks":
            assert state.returns() == [1 - 2 * (rank - 1) / (n - 1) for rank in result.ranks]
            best = state.returns().index(1.0)
            assert result.ranks[best] == 1
        else:
            sign = 1 if engine_game.higher_is_better else -1
            assert state.returns() == [sign * score for score in result.scores]


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_information_states_do_not_change_when_hidden_cards_move(game_id: str) -> None:
    """A state resampled for a player places every card that player cannot see elsewhere: that
    player's information state string and tensor stay the same, another player's change."""
    game = pyspiel.load_game(NAMES[game_id])
    rng = random.Random(game_id)
    state = play_to_decision(game.new_initial_state(), rng, decisions=game.num_players() + 3)
    player = state.current_player()
    other = (player + 1) % game.num_players()
    others_changed = False
    for draw in range(20):
        world = state.resample_from_infostate(player, lambda draw=draw: (draw + 0.5) / 20)
        assert world.current_player() == player
        assert world.information_state_string(player) == state.information_state_string(player)
        assert world.information_state_tensor(player) == state.information_state_tensor(player)
        assert world.observation_string(player) == state.observation_string(player)
        assert world.legal_actions() == state.legal_actions()
        others_changed |= world.information_state_string(other) != state.information_state_string(other)
    assert others_changed, "20 worlds, and the other player's hand never moved"


def test_the_information_state_tensor_is_the_pettingzoo_observation() -> None:
    game = pyspiel.load_game("septet_black_sevens")
    state = play_to_decision(game.new_initial_state(), random.Random(2), decisions=6)
    player = state.current_player()
    info = state.information_state_of(player)
    encoding = encoding_for(get_game("black-sevens"), 4)
    tensor = np.array(state.information_state_tensor(player), np.float32)
    assert np.array_equal(tensor, encoding.observation(info))
    assert game.information_state_tensor_shape() == [encoding.layout.size]
    assert state.information_state_string(player) == describe(info)
    assert f"seat={player} " in state.information_state_string(player)


def test_a_clone_shares_the_position_and_goes_its_own_way() -> None:
    game = pyspiel.load_game("septet_oh7", {"players": 3})
    state = play_to_decision(game.new_initial_state(), random.Random(4), decisions=2)
    clone = state.clone()
    assert isinstance(clone, SeptetState) and clone.at is state.at
    before = str(state)
    clone.apply_action(clone.legal_actions()[0])
    assert str(state) == before and str(clone) != before and clone.at is not state.at


def test_oh7_asks_simultaneous_bets_in_turn_and_hides_the_pending_ones() -> None:
    game = pyspiel.load_game("septet_oh7", {"players": 3})
    state = play_to_decision(game.new_initial_state(), random.Random(8))
    assert state.current_player() == 0
    before = state.information_state_string(1)
    state.apply_action(state.legal_actions()[0])  # seat 0's bet: not revealed until all have bet
    assert state.current_player() == 1 and state.information_state_string(1) == before
    assert all(action >= 46 for action in state.legal_actions())  # bets: 46 + card id


@pytest.mark.parametrize(
    ("name", "parameters", "message"),
    [
        ("septet_oh_hell", {"colour": "red"}, "Unknown parameter 'colour'. Available parameters are"),
        ("septet_oh_hell", {"players": 9}, "septet_oh_hell: oh-hell is played by 3-7 players, not 9"),
        ("septet_oh7_duel", {"players": 3}, "septet_oh7_duel: oh7-duel is played by 2 players, not 3"),
        ("septet_oh7", {"target": 22}, "septet_oh7: oh7 option target=22 is not one of: 21, 35, 49"),
        ("septet_black_sevens", {"returns": "money"}, "returns must be one of ranks, scores, not 'money'"),
    ],
)
def test_bad_parameters_are_refused_with_openspiels_error_and_a_clear_message(
    name: str, parameters: dict[str, Any], message: str
) -> None:
    with pytest.raises(pyspiel.SpielError, match="^.*" + message.replace("(", r"\(").replace(")", r"\)")):
        pyspiel.load_game(name, parameters)


def test_an_observer_of_public_facts_only_is_refused_rather_than_shown_a_hand() -> None:
    """The encoding always holds the seat's own hand: an observer asked for public facts only
    (no private information) would leak it, so none is made."""
    game = pyspiel.load_game("septet_oh_hell")
    public_only = pyspiel.IIGObservationType(
        perfect_recall=False, public_info=True, private_info=pyspiel.PrivateInfoType.NONE
    )
    with pytest.raises(ValueError, match="observes a player's own view only"):
        make_observation(game, public_only)
    assert len(make_observation(game).tensor) == encoding_for(get_game("oh-hell"), 4).layout.size
