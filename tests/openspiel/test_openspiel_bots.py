"""OpenSpiel's bots play every game id through the adapter, sit at Septet's tables (`septet compare`,
`septet match`), and Shimmy's PettingZoo wrapper of an adapted game passes PettingZoo's api_test."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts, mcts
from pettingzoo.test import api_test
from shimmy import OpenSpielCompatibilityV0

from referee.engine.games import all_games, get_game
from referee.engine.games.base import GameError
from referee.engine.match import play_match
from referee.engine.players import GreedyPlayer, Player
from referee.openspiel import short_name
from referee.openspiel.bots import OpenSpielPlayer, TimedISMCTSBot, parse_bot_word
from referee.tools.lineup import parse_bot

ROOT = Path(__file__).resolve().parents[2]
GAME_IDS = tuple(all_games())


@pytest.mark.parametrize("kind", ["ismcts", "mcts"])
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_openspiels_search_bots_play_a_whole_game_of_every_game_id(game_id: str, kind: str) -> None:
    """ISMCTS (resampling worlds from each information state) or MCTS (searching the state it is
    given, here the real one), 2 simulations a decision, in seat 0; OpenSpiel's random bots
    elsewhere; to the end of the game."""
    game = pyspiel.load_game(short_name(game_id))
    random_state = np.random.RandomState(7)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state)
    if kind == "ismcts":
        bot = ismcts.ISMCTSBot(game, evaluator, 2.0, max_simulations=2, random_state=random_state)
    else:
        bot = mcts.MCTSBot(game, 2.0, 2, evaluator, random_state=random_state)
    others = [pyspiel.make_uniform_random_bot(seat, seat) for seat in range(game.num_players())]
    state = game.new_initial_state()
    searched = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, chances = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(random_state.choice(outcomes, p=chances)))
        elif state.current_player() == 0:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            searched += 1
        else:
            state.apply_action(others[state.current_player()].step(state))
    assert searched > 0 and max(state.returns()) == 1.0


def test_a_game_of_openspiel_bots_is_played_by_openspiels_own_loop() -> None:
    game = pyspiel.load_game("septet_oh7_duel")
    random_state = np.random.RandomState(3)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state)
    searcher = mcts.MCTSBot(game, 2.0, 3, evaluator, random_state=random_state)
    bots = [searcher, pyspiel.make_uniform_random_bot(1, 1)]
    returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, 5)
    assert sorted(returns) == [-1.0, 1.0]


def test_the_timed_ismcts_stops_at_its_time_and_searches_at_least_twice() -> None:
    game = pyspiel.load_game("septet_oh_hell", {"players": 3})
    state = game.new_initial_state()
    rng = random.Random(1)
    while state.is_chance_node():
        state.apply_action(rng.choice(state.chance_outcomes())[0])
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(1))
    bot = TimedISMCTSBot(game, evaluator, 2.0, max_simulations=10**6, seconds=0.0)
    assert bot.step(state) in state.legal_actions() and bot.simulations_done == 2


def test_bot_words_name_the_bot_and_its_budget_and_bad_ones_are_refused() -> None:
    assert parse_bot_word("openspiel-ismcts") == ("ismcts", parse_bot_word("openspiel-ismcts:100")[1])
    kind, budget = parse_bot_word("openspiel-ismcts:0.05s")
    assert kind == "ismcts" and budget.seconds == 0.05
    assert parse_bot_word("openspiel-mcts:40")[1].simulations == 40
    assert parse_bot("openspiel-random").kind == "openspiel"
    for word, message in [
        ("openspiel-cfr", "unknown OpenSpiel bot 'openspiel-cfr'"),
        ("openspiel-ismcts:fast", "unknown OpenSpiel bot"),
        ("openspiel-ismcts:1", "at least 2 simulations per decision"),
        ("openspiel-ismcts:0s", "the seconds per decision must be above 0"),
    ]:
        with pytest.raises(GameError, match=message):
            parse_bot(word)


def test_an_openspiel_player_plays_legal_moves_at_a_septet_table() -> None:
    """Oh 7?'s simultaneous bets included: the seat asked may be any of the bettors."""
    game = get_game("oh7")
    players: list[Player] = [
        OpenSpielPlayer("openspiel-ismcts:4", game, "a"),
        OpenSpielPlayer("openspiel-random", game, "b"),
        GreedyPlayer(game),
    ]
    outcome = play_match(game, players, seed=11, options={"target": 21})
    assert not outcome.forfeits and outcome.result.ranks is not None


def test_septet_compare_seats_an_openspiel_bot() -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "referee.tools.cli", "compare", "random", "openspiel-ismcts:3",
         "--game", "oh7-duel", "--games", "1", "--seed", "4", "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["b"] == "openspiel-ismcts:3" and report["games"] == 2
    assert report["forfeits"] == {"a": {}, "b": {}}


@pytest.mark.filterwarnings("ignore:Agent's m.* observation space value is:UserWarning")
def test_a_shimmy_wrapped_game_passes_pettingzoos_api_test() -> None:
    env = OpenSpielCompatibilityV0(game_name="septet_oh7_duel", render_mode=None)
    api_test(env, num_cycles=300)
