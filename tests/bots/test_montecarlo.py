"""The montecarlo example bot: it conforms, keeps to its budget, and never uses what its seat cannot see.

The bot's modules sit beside its bot.py (a bot folder, not a package), so the tests put that
folder on sys.path, as running `python bot.py` in it does.
"""

from __future__ import annotations

import itertools
import json
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.engine.games import GAMES, get_game
from referee.engine.games.base import CHANCE, Game
from referee.engine.match import MatchStart, TimeControl
from referee.engine.tricks import playable_cards

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "bots" / "examples" / "montecarlo"
SEPTET = str(Path(sys.executable).with_name("septet"))


MODULES = ("bot", "search", "deal", "worlds_bidding", "worlds_black_sevens", "worlds_oh7")


@pytest.fixture(scope="module")
def mc() -> Iterator[dict[str, Any]]:
    """The bot's modules, imported from its folder (and forgotten after, so a module of another
    folder with the same name, such as another bot's `bot`, is never mistaken for them)."""
    for name in MODULES:
        sys.modules.pop(name, None)
    sys.path.insert(0, str(FOLDER))
    try:
        import bot
        import search
        import worlds_black_sevens
        import worlds_oh7

        assert Path(bot.__file__).parent == FOLDER
        yield {"bot": bot, "search": search, "black_sevens": worlds_black_sevens, "oh7": worlds_oh7}
    finally:
        sys.path.remove(str(FOLDER))
        for name in MODULES:
            sys.modules.pop(name, None)


def decisions(game: Game, players: int, seed: int) -> Iterator[tuple[Any, int]]:
    """Every (state, seat) of a random game where the seat has a choice."""
    rng = random.Random(seed)
    state = game.start(players)
    while (decision := game.to_move(state)) is not None:
        if decision.is_chance:
            state = game.apply(state, CHANCE, game.sample_chance(state, rng))
            continue
        for seat in decision.seats:
            legal = game.legal_actions(state, seat)
            if len(legal) > 1:
                yield state, seat
            state = game.apply(state, seat, legal[rng.randrange(len(legal))])


def table_sizes(game: Game) -> tuple[int, ...]:
    return tuple(dict.fromkeys((game.players.start, game.players.stop - 1)))


def start_hands(world: Any, info: Any, game_id: str) -> list[list[str]]:
    """Each seat's hand at the round's start in a world: what it holds now plus what it played."""
    if game_id == "black-sevens":
        return [[*hand, *played] for hand, played in zip(world.hands, info.played, strict=True)]
    hands = [list(hand) for hand in world.hands]
    for trick in (*info.tricks, info.trick):
        for seat, card in trick:
            if seat < len(info.scores):  # not the Dummy
                hands[seat].append(card)
    return hands


def replays_legally(world: Any, info: Any, game_id: str, mc: dict[str, Any]) -> bool:
    """Whether every card played this round was a legal play from the hand the world gives."""
    if game_id == "black-sevens":
        return bool(mc["black_sevens"].consistent(info, list(world.hands)))
    hands = start_hands(world, info, game_id)
    for trick in (*info.tricks, info.trick):
        lead: str | None = None
        for seat, card in trick:
            if game_id.startswith("oh7"):
                oh7 = mc["oh7"]
                if seat != info.dummy and card not in oh7.oh7.playable(tuple(hands[seat]), lead):
                    return False
                if lead is None and card not in oh7.SPECIAL:
                    lead = oh7.SUIT[card]
                if seat == info.dummy:  # its cards were face up: nothing to check
                    continue
            else:
                if card not in playable_cards(hands[seat], lead):
                    return False
                lead = lead or card[1]
            hands[seat].remove(card)
    return True


@pytest.mark.parametrize("game_id", list(GAMES))
def test_every_sampled_world_looks_to_the_seat_exactly_like_the_real_one(
    game_id: str, mc: dict[str, Any]
) -> None:
    """The seat's information state in each world equals its real one, and the unseen cards are
    dealt so that every play of the round was legal (a player who did not follow has no card of
    the suit): the bot's worlds use only what the seat can see, and all of it."""
    game = get_game(game_id)
    sampler = mc["bot"].SAMPLERS[game_id]
    rng = random.Random(5)
    checked = 0
    for players, seed in itertools.product(table_sizes(game), (1, 2)):
        for state, seat in decisions(game, players, seed):
            info = game.information_state(state, seat)
            for _ in range(2):
                world = sampler(info, rng)
                assert game.information_state(world, seat) == info, f"{game_id}: the seat could tell"
                assert set(game.legal_actions(world, seat)) == set(game.legal_actions(state, seat))
                assert replays_legally(world, info, game_id, mc), f"{game_id}: a play was illegal"
                checked += 1
    assert checked > 200


def test_black_sevens_worlds_never_deal_a_last_card_on_the_table(mc: dict[str, Any]) -> None:
    """The last cards stay out of the deck until the game is over (R-3.9): no world gives a seat
    one, and in round 7, where all 28 cards left are dealt, the other seats hold exactly the cards
    the seat cannot see."""
    game = get_game("black-sevens")
    sampler = mc["bot"].SAMPLERS["black-sevens"]
    rng = random.Random(8)
    rounds_seen: set[int] = set()
    for state, seat in decisions(game, 4, 4):
        info = game.information_state(state, seat)
        if info.round_index == 0:
            continue
        on_table = {card for cards in info.table for card in cards}
        assert len(on_table) == 4 * info.round_index
        world = sampler(info, rng)
        held = {card for hand in world.hands for card in hand}
        assert not held & on_table
        if info.round_index == 6:
            assert held == {card for hand in state.hands for card in hand}
        rounds_seen.add(info.round_index)
    assert rounds_seen == set(range(1, 7))


@pytest.mark.parametrize("game_id", ["oh-hell", "oh7", "black-sevens"])
def test_the_decision_depends_only_on_the_seat_view_not_on_the_hidden_cards(
    game_id: str, mc: dict[str, Any]
) -> None:
    """Two deals that differ only in cards the seat cannot see (two opponents swap hands before
    the first play) give the bot the same information state, the same worlds and the same choice."""
    game = get_game(game_id)
    rng = random.Random(3)
    state = game.start(4)
    state = game.apply(state, CHANCE, game.sample_chance(state, rng))
    decision = game.to_move(state)
    assert decision is not None
    seat = decision.seats[0]
    others = [other for other in range(4) if other != seat][:2]
    swapped = game.apply(game.start(4), CHANCE, _swap_hands(state, game_id, others))
    assert swapped.hands[others[0]] == state.hands[others[1]] != state.hands[others[0]]
    budget = mc["search"].Budget(seconds=60.0, max_worlds=12)
    reports = []
    for real in (state, swapped):
        info = game.information_state(real, seat)
        legal = game.legal_actions(real, seat)
        reports.append(
            mc["search"].search(info, legal, mc["bot"].SAMPLERS[game_id], budget, random.Random(9))
        )
    assert reports[0].worlds == reports[1].worlds == 12
    assert reports[0].means == reports[1].means
    assert reports[0].chosen == reports[1].chosen


def _swap_hands(state: Any, game_id: str, pair: list[int]) -> dict[str, Any]:
    """The deal of `state` with the hands of the two seats in `pair` exchanged."""
    hands = [list(hand) for hand in state.hands]
    hands[pair[0]], hands[pair[1]] = hands[pair[1]], hands[pair[0]]
    if game_id == "black-sevens":
        return {"hands": hands, "leader": state.leader}
    if game_id.startswith("oh7"):
        return {"hands": hands, "discard": list(state.pile)}
    return {"dealer": state.dealer, "hands": hands, "trump_card": state.trump_card}


def test_the_search_stops_at_its_world_cap_or_its_time_budget(mc: dict[str, Any]) -> None:
    game = get_game("oh-hell")
    search, sampler = mc["search"], mc["bot"].SAMPLERS["oh-hell"]
    state, seat = next(decisions(game, 4, seed=1))
    info, legal = game.information_state(state, seat), game.legal_actions(state, seat)
    capped = search.search(info, legal, sampler, search.Budget(seconds=60.0, max_worlds=5), random.Random(1))
    assert capped.worlds == 5, "plenty of time: the world cap stops it"
    timed = search.search(
        info, legal, sampler, search.Budget(seconds=0.05, max_worlds=10**6), random.Random(1)
    )
    assert 1 <= timed.worlds < 10**6, "the time budget stops it long before the cap"
    assert timed.seconds < 1.0, "well inside the referee's one second per decision"
    assert timed.chosen in legal


def test_budget_comes_from_the_command_line_then_the_environment(mc: dict[str, Any]) -> None:
    budget_from, budget = mc["bot"].budget_from, mc["search"].Budget
    assert budget_from([], {}) == budget(0.2, 200)
    assert budget_from(["--address", "unix:x.sock"], {"SEPTET_MC_BUDGET": "0.05"}) == budget(0.05, 200)
    given = ["--budget", "0.1", "--max-worlds", "9"]
    assert budget_from(given, {"SEPTET_MC_BUDGET": "0.05"}) == budget(0.1, 9)
    for bad in (["--budget", "0"], ["--max-worlds", "0"]):
        with pytest.raises(SystemExit, match="montecarlo: --budget must be"):
            budget_from(bad, {})
    with pytest.raises(SystemExit, match="SEPTET_MC_BUDGET must be a number"):
        budget_from([], {"SEPTET_MC_BUDGET": "fast"})


def test_a_fast_clock_shortens_the_search(mc: dict[str, Any]) -> None:
    bot = mc["bot"].MonteCarloBot(mc["search"].Budget(0.2, 50))
    start = MatchStart("m", "oh-hell", 0, 3, {}, ["a", "b", "c"], TimeControl(0.1, 1.0))
    bot.start_match(start)
    assert bot.budget == mc["search"].Budget(0.1 * mc["bot"].CLOCK_SHARE, 50)
    bot.start_match(MatchStart("m", "oh-hell", 0, 3, {}, ["a", "b", "c"], TimeControl(1.0, 10.0)))
    assert bot.budget == mc["search"].Budget(0.2, 50), "a slow clock leaves the configured budget"


@pytest.mark.slow
def test_septet_check_passes_every_game_it_declares(tmp_path: Path) -> None:
    """The bot as a process over gRPC, in every seat of each game; a copy with a small budget
    (the check plays every seat with it, so the default 0.2 s would take minutes)."""
    folder = tmp_path / "montecarlo"
    shutil.copytree(FOLDER, folder, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = (folder / "septet-bot.toml").read_text()
    (folder / "septet-bot.toml").write_text(
        manifest.replace('"{address}"]', '"{address}", "--budget", "0.005", "--max-worlds", "8"]')
    )
    run = subprocess.run(
        [SEPTET, "check", str(folder), "--games", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert report["passed"] is True
    assert {entry["game"] for entry in report["games"]} == set(GAMES)
