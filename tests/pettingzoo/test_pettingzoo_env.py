"""referee.pettingzoo: PettingZoo's own API and seed tests for every game id and seat count, and what
the environments promise beyond them (docs/pettingzoo.md): observations built from the seat's
information state only, action ids that round-trip, the engine's own games replayed, rewards.

The optional extra `pettingzoo` is imported at the top on purpose: without it this module fails to
collect (scripts/setup-env.sh installs it), it never skips.
"""

from __future__ import annotations

import ast
import copy
import pathlib
import random
import subprocess
import sys
import types
from typing import Any

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, seed_test

import referee
from referee.engine.games import all_games, get_game
from referee.engine.games.base import CHANCE, GameError
from referee.engine.playout import playout
from referee.pettingzoo import GAME_IDS, EngineBot, SeptetEnv, env, raw_env
from referee.pettingzoo.encoding import CARD_INDEX, OH7_INDEX, encoding_for

# PettingZoo's api_test says these of any environment whose observation is a dict with an action
# mask, except the classic ones it knows by name.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning"),
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be:UserWarning"),
]

SEAT_COUNTS = [(game.id, players) for game in all_games().values() for players in game.players]


def test_the_extra_is_the_pinned_pettingzoo_and_every_game_id_has_an_environment() -> None:
    assert pettingzoo.__version__ == "1.27.0"
    assert tuple(all_games()) == GAME_IDS and len(GAME_IDS) == 6


@pytest.mark.parametrize(("game_id", "players"), SEAT_COUNTS)
def test_pettingzoos_api_test_passes_for_every_game_id_and_seat_count(game_id: str, players: int) -> None:
    """1,000 cycles of random masked actions: several whole games, each agent removed at the end."""
    api_test(env(game_id, num_players=players), num_cycles=1000)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_pettingzoos_api_test_passes_with_rewards_by_final_rank(game_id: str) -> None:
    api_test(env(game_id, reward="rank"), num_cycles=1000)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_pettingzoos_seed_test_passes_for_every_game_id(game_id: str) -> None:
    seed_test(lambda: env(game_id), num_cycles=500)


def play_out(table: Any, choose: Any) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
    """Plays the reset table to its end; returns each agent's summed rewards and final info."""
    rewards = dict.fromkeys(table.possible_agents, 0.0)
    final: dict[str, dict[str, Any]] = {}
    for agent in table.agent_iter():
        observation, reward, terminated, truncated, info = table.last()
        rewards[agent] += reward
        if terminated or truncated:
            final[agent] = info
            table.step(None)
        else:
            table.step(choose(agent, observation))
    return rewards, final


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_greedy_bots_at_every_seat_replay_the_engines_own_greedy_playout(game_id: str) -> None:
    """Same seed, same deals: the environment's game is the engine's, score for score; the rewards
    of a game add up to each seat's final score (minus it in Black Sevens, lower is better)."""
    table = env(game_id)
    bots = {agent: EngineBot.builtin(table, "greedy", agent) for agent in table.possible_agents}
    table.reset(seed=11)
    rewards, final = play_out(table, lambda agent, observation: bots[agent](agent))

    game = get_game(game_id)
    state = table.unwrapped._state
    for step in playout(
        game, game.start(table.unwrapped.num_players), random.Random(11), greedy_policy(game)
    ):
        state = step.state
    result = game.result(state)
    assert result is not None and not result.aborted and result.ranks is not None
    sign = 1 if game.higher_is_better else -1
    for seat, agent in enumerate(table.possible_agents):
        assert final[agent] == {"score": result.scores[seat], "rank": result.ranks[seat]}
        assert rewards[agent] == sign * result.scores[seat]


@pytest.mark.parametrize(("game_id", "players"), SEAT_COUNTS)
def test_every_observation_to_the_end_of_the_game_is_in_its_space(game_id: str, players: int) -> None:
    """Seeded random masked play of whole games, every observation checked against the Box, the
    final ones too: once the last trick is won the engine shows it both as the current trick and as
    the last finished one, and an `N` played in it once counted 3 in oh7-advanced (2 is the top)."""
    rng = np.random.default_rng(7)
    for seed in range(6):
        table = env(game_id, num_players=players)
        table.reset(seed=seed)
        for agent in table.agent_iter():
            observation, _, terminated, truncated, _ = table.last()
            space = table.observation_space(agent)
            assert space["observation"].contains(observation["observation"]), (game_id, seed, agent)
            if terminated or truncated:
                table.step(None)
            else:
                table.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))


def test_a_card_of_the_last_trick_counts_once_in_the_final_observation() -> None:
    """The game ends with an `N` in its last trick: the seat that played it shows 1 there, not 2."""
    encoding = encoding_for(get_game("oh7-advanced"), 3)
    last = ((0, "3H"), (1, "N"), (2, "3S"))
    tricks = (((0, "0H"), (1, "4*"), (2, "2*")), last)
    info = types.SimpleNamespace(
        seat=1, hand=(), phase="over", attempt=0, bet_cards=((), (), ()), bets=None, revealer=None,
        first_leader=None, trump=None, leader=None, lead_suit=None, trick=last, tricks=tricks,
        dummy_up=(), dummy=None, tricks_won=(1, 1, 0), scores=(0, 0, 0), bets_made=(0, 0, 0),
        round=0, redeals=0, target=49,
    )  # fmt: skip
    played = encoding.layout.segments["played"]
    observation = encoding.observation(info)
    columns = (played.stop - played.start) // 3
    own_row = observation[played.start : played.start + columns]  # seat 1 sees itself first
    assert own_row[OH7_INDEX["N"]] == 1 and own_row[OH7_INDEX["4*"]] == 1 and own_row.sum() == 2


def greedy_policy(game: Any) -> Any:
    return lambda state, seat, legal, rng: game.greedy(game.information_state(state, seat), legal)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_rank_rewards_come_once_at_the_end_from_plus_one_for_first_to_minus_one_for_last(
    game_id: str,
) -> None:
    table = env(game_id, reward="rank")
    table.reset(seed=4)
    rng = np.random.default_rng(4)
    seen: list[float] = []

    def choose(agent: str, observation: dict[str, Any]) -> int:
        seen.append(table.last()[1])
        return int(rng.choice(np.flatnonzero(observation["action_mask"])))

    rewards, final = play_out(table, choose)
    assert set(seen) == {0.0}
    last = len(table.possible_agents)
    for agent, info in final.items():
        assert rewards[agent] == pytest.approx(1 - 2 * (info["rank"] - 1) / (last - 1))
    assert max(rewards.values()) == 1.0


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_every_legal_action_has_its_own_id_in_the_mask_and_maps_back(game_id: str) -> None:
    table = raw_env(game_id)
    table.reset(seed=2)
    rng = random.Random(2)
    decisions = 0
    for agent in table.agent_iter():
        observation, _, terminated, truncated, _ = table.last()
        if terminated or truncated:
            assert not observation["action_mask"].any()
            table.step(None)
            continue
        legal = table.legal_actions(agent)
        ids = [table.action_id(agent, action) for action in legal]
        assert len(set(ids)) == len(legal) and all(0 <= i < table.encoding.num_actions for i in ids)
        assert sorted(ids) == np.flatnonzero(observation["action_mask"]).tolist()
        assert [table.engine_action(agent, i) for i in ids] == list(legal)
        others = [other for other in table.possible_agents if other != agent]
        assert not any(table.observe(other)["action_mask"].any() for other in others)
        decisions += 1
        table.step(ids[rng.randrange(len(ids))])
    assert decisions > 100


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_an_illegal_action_raises_a_clear_error_and_changes_nothing(game_id: str) -> None:
    table = raw_env(game_id)
    table.reset(seed=3)
    agent = table.agent_selection
    before = table.observe(agent)
    illegal = int(np.flatnonzero(before["action_mask"] == 0)[0])
    for action in (illegal, table.encoding.num_actions, -1, "7S", None, 1.5):
        with pytest.raises(ValueError, match=r"not legal|an int id"):
            table.step(action)
    after = table.observe(agent)
    assert table.agent_selection == agent
    assert np.array_equal(after["observation"], before["observation"])
    assert np.array_equal(after["action_mask"], before["action_mask"])
    with pytest.raises(ValueError, match="not a legal action"):
        table.action_id(agent, "no such action")


def test_reset_with_a_seed_deals_the_same_cards_and_without_one_continues_the_generator() -> None:
    first, second = raw_env("oh-hell"), raw_env("oh-hell")
    first.reset(seed=8)
    second.reset(seed=8)
    assert np.array_equal(first.observe("player_0")["observation"], second.observe("player_0")["observation"])
    first.reset()
    second.reset()
    assert np.array_equal(first.observe("player_0")["observation"], second.observe("player_0")["observation"])
    second.reset(seed=9)
    assert not np.array_equal(
        first.observe("player_0")["observation"], second.observe("player_0")["observation"]
    )


def deal_then_swap(game_id: str, players: int, seed: int) -> tuple[Any, Any, Any]:
    """A game right after a sampled deal, and the same game dealt with the other seats' hidden
    cards exchanged (seats 1 and 2, or the duel's face-down pile reversed)."""
    game = get_game(game_id)
    start = game.start(players)
    outcome = game.sample_chance(start, random.Random(seed))
    swapped = copy.deepcopy(outcome)
    if game_id == "oh7-duel":
        swapped["pile"].reverse()
    else:
        swapped["hands"][1], swapped["hands"][2] = swapped["hands"][2], swapped["hands"][1]
    return game, game.apply(start, CHANCE, outcome), game.apply(start, CHANCE, swapped)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_an_observation_is_built_from_the_seats_information_state_only(game_id: str) -> None:
    """Exchanging cards the seat cannot see leaves its observation as it was; a seat that holds
    them sees the difference (so the comparison can fail)."""
    players = 2 if game_id == "oh7-duel" else 4
    game, dealt, swapped = deal_then_swap(game_id, players, seed=5)
    encoding = encoding_for(game, players)
    seen = [encoding.observation(game.information_state(state, 0)) for state in (dealt, swapped)]
    assert np.array_equal(seen[0], seen[1])
    if game_id != "oh7-duel":
        other = [encoding.observation(game.information_state(state, 1)) for state in (dealt, swapped)]
        assert not np.array_equal(other[0], other[1])


def test_a_pending_oh7_bet_is_not_in_the_other_seats_observations() -> None:
    table = raw_env("oh7")
    table.reset(seed=6)
    assert table.unwrapped.game.to_move(table._state).seats == (0, 1, 2, 3)
    before = table.observe("player_1")["observation"]
    table.step(int(np.flatnonzero(table.observe("player_0")["action_mask"])[0]))
    assert table.agent_selection == "player_1"
    assert np.array_equal(table.observe("player_1")["observation"], before)


def test_per_seat_rows_start_with_the_observing_seat_and_go_clockwise() -> None:
    """Oh Hell!: the leader's first card is in row 0 of its own `trick` block and in the last row
    (the seat on the right) of the next seat's."""
    table = raw_env("oh-hell")
    table.reset(seed=1)
    while table.unwrapped.game.to_move(table._state).kind != "play":
        table.step(int(np.flatnonzero(table.observe(table.agent_selection)["action_mask"])[0]))
    leader = table.agent_selection
    card_id = int(np.flatnonzero(table.observe(leader)["action_mask"])[0])
    table.step(card_id)
    trick = table.encoding.layout.segments["trick"]
    rows = {
        agent: table.observe(agent)["observation"][trick.start : trick.stop].reshape(trick.shape)
        for agent in (leader, table.agent_selection)
    }
    assert rows[leader][0, card_id] == 1 and rows[leader].sum() == 1
    assert rows[table.agent_selection][3, card_id] == 1 and rows[table.agent_selection].sum() == 1
    assert card_id == CARD_INDEX[table.information_state(leader).trick[0][1]]


def test_a_black_sevens_set_is_the_bits_of_its_cards_positions_in_the_sorted_hand() -> None:
    table = raw_env("black-sevens")
    table.reset(seed=1)
    agent = table.agent_selection
    hand = table.information_state(agent).hand
    for action in table.legal_actions(agent):
        action_id = table.action_id(agent, action)
        assert [hand[bit] for bit in range(7) if action_id >> bit & 1] == list(action)
    slots = table.encoding.layout.segments["hand_slots"]
    rows = table.observe(agent)["observation"][slots.start : slots.stop].reshape(slots.shape)
    assert [int(np.flatnonzero(rows[position])[0]) for position in range(len(hand))] == [
        CARD_INDEX[card] for card in hand
    ]


def test_the_text_view_renders_for_human_and_ansi_and_warns_without_a_mode(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ansi = raw_env("black-sevens", render_mode="ansi")
    ansi.reset(seed=1)
    text = ansi.render()
    assert text is not None and text.startswith("Black Sevens (black-sevens), 4 players: player_")
    for agent in ansi.possible_agents:
        cards = " ".join(ansi.information_state(agent).hand)
        assert f"{agent} hand: {cards}" in text
    human = raw_env("black-sevens", render_mode="human")
    human.reset(seed=1)
    assert human.render() is None
    assert text in capsys.readouterr().out
    quiet = raw_env("black-sevens")
    quiet.reset(seed=1)
    with pytest.warns(UserWarning, match="render_mode"):
        assert quiet.render() is None


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"game_id": "poker"}, GameError, "unknown game 'poker'"),
        ({"game_id": "black-sevens", "num_players": 5}, GameError, "played by 4 players, not 5"),
        ({"game_id": "oh7", "options": {"target": 30}}, GameError, "target=30 is not one of"),
        ({"game_id": "oh-hell", "reward": "money"}, ValueError, "reward must be one of points, rank"),
        (
            {"game_id": "oh-hell", "render_mode": "rgb_array"},
            ValueError,
            "render_mode must be None or one of",
        ),
    ],
)
def test_bad_constructor_input_gets_a_clear_error(
    arguments: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        SeptetEnv(**arguments)


def test_options_reach_the_game() -> None:
    table = raw_env("oh7", options={"target": 21})
    table.reset(seed=1)
    assert table.information_state("player_0").target == 21
    target = table.encoding.layout.segments["target"]
    assert table.observe("player_0")["observation"][target.start] == 21


ROOT = pathlib.Path(referee.__file__).parent
FORBIDDEN = ("referee.tools", "referee.botkit", "referee.sdk", "referee.protocol", "grpc", "google.protobuf",
             "django", "celery")  # fmt: skip


def test_the_pettingzoo_room_imports_nothing_of_the_tools_the_bot_kit_or_the_wire() -> None:
    found = []
    for path in sorted((ROOT / "pettingzoo").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{alias.name}" for alias in node.names]
            found += [
                name for name in names if any(name == bad or name.startswith(f"{bad}.") for bad in FORBIDDEN)
            ]
    assert found == []
    code = (
        f"import sys, referee.pettingzoo\nforbidden = {FORBIDDEN!r}\n"
        "print(sorted(m for m in sys.modules if any(m == f or m.startswith(f + '.') for f in forbidden)))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


@pytest.mark.parametrize("module", ["pettingzoo", "gymnasium", "numpy"])
def test_without_the_extra_the_import_names_the_extra_to_install(module: str) -> None:
    code = f"import sys\nsys.modules[{module!r}] = None\nimport referee.pettingzoo\n"
    failed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert failed.returncode == 1
    assert failed.stderr.strip().splitlines()[-1] == (
        f"ImportError: referee.pettingzoo needs the optional extra 'pettingzoo' ({module} is not installed): "
        "pip install -e '.[pettingzoo]'"
    )
