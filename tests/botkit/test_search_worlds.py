"""The search API's worlds (referee.botkit.search): for every game id, in random positions, each
sampled world is one the seat cannot tell from the real one, and the real one is among them.

The checks are the test's own, not the sampler's: the world's information state for the seat
equals the real one; the cards in the world's hands, the plays of the round and the cards the seat
has seen are one deck with no card twice (none of the seen cards, such as Black Sevens' last cards
on the table, is dealt); and the round's public history replays legally from the hands the world
gives (a seat that did not follow suit holds none of it, a Black Sevens lay-low could not beat).
"""

from __future__ import annotations

import itertools
import math
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from search_positions import positions, some_positions, table_sizes, true_hands

from referee.botkit.search import Constraints, NoWorld, Placement, worlds
from referee.botkit.worlds import dealing
from referee.engine.cards import DECK_52
from referee.engine.games import GAMES, get_game, oh7
from referee.engine.games.base import CHANCE, Game, GameError

ROOT = Path(__file__).resolve().parents[2]


def deck(game: Game, info: Any) -> Counter[str]:
    if info.game.startswith("oh7"):
        return Counter(oh7.deck(info.game, info.num_players))
    return Counter(DECK_52)


def round_plays(info: Any) -> list[tuple[int, Any]]:
    """The round's plays in order as (seat, card) or, in Black Sevens, (seat, set of cards)."""
    if info.game == "black-sevens":
        return [play for _, plays in info.history for play in plays] + list(info.plays)
    return [play for trick in (*info.tricks, info.trick) for play in trick]


def seen_elsewhere(info: Any) -> list[str]:
    """Cards the seat sees outside hands and plays: the trump card, the Dummy's face-up cards,
    Black Sevens' last cards on the table."""
    if info.game == "black-sevens":
        return [card for cards in info.table for card in cards]
    if info.game.startswith("oh7"):
        return list(info.dummy_up)
    return [info.trump_card]


def start_hands(info: Any, hands: list[tuple[str, ...]]) -> list[list[str]]:
    """Each seat's hand when the round was dealt, in a world: what it holds plus what it played."""
    start = [list(hand) for hand in hands]
    for seat, played in round_plays(info):
        if seat < len(start):
            start[seat] += list(played) if isinstance(played, tuple) else [played]
    return start


def replays_legally(game: Game, info: Any, hands: list[tuple[str, ...]]) -> bool:
    """Whether the round's public history could have been played from the world's hands."""
    start = start_hands(info, hands)
    if info.game.startswith("oh7"):
        return _oh7_plays_follow_suit(info, start) and all(
            not (Counter(info.bet_cards[player]) - Counter(start[player]))
            for player in range(info.num_players)
        )
    if info.game == "black-sevens":
        state = game.start(4, scores=info.scores, round_index=info.round_index)
        state = game.apply(state, CHANCE, {"hands": start, "leader": info.round_leader})
    else:
        state = game.start(info.num_players, scores=info.scores, round_index=info.round)
        deal = {"dealer": info.dealer, "hands": start, "trump_card": info.trump_card}
        state = game.apply(state, CHANCE, deal)
        for offset in range(info.num_players):
            bidder = (info.dealer + 1 + offset) % info.num_players
            if info.bids[bidder] is None:
                break
            if info.bids[bidder] not in game.legal_actions(state, bidder):
                return False
            state = game.apply(state, bidder, info.bids[bidder])
    for seat, action in round_plays(info):
        if action not in game.legal_actions(state, seat):
            return False
        state = game.apply(state, seat, action)
    return True


def _oh7_plays_follow_suit(info: Any, start: list[list[str]]) -> bool:
    hands = [list(hand) for hand in start]
    for trick in (*info.tricks, info.trick):
        lead: str | None = None
        for seat, card in trick:
            if seat != info.dummy:  # the Dummy plays face-up cards: nothing hidden to check
                if card not in oh7.playable(tuple(hands[seat]), lead):
                    return False
                hands[seat].remove(card)
            if lead is None and card not in oh7.SPECIAL:
                lead = oh7.SUIT[card]
    return True


def check_world(game: Game, real: Any, seat: int, world: Any) -> None:
    info = game.information_state(real, seat)
    assert game.information_state(world, seat) == info, "the seat could tell the world from the real one"
    assert set(game.legal_actions(world, seat)) == set(game.legal_actions(real, seat))
    hands = true_hands(game, world)
    real_hands = true_hands(game, real)
    assert [len(hand) for hand in hands] == [len(hand) for hand in real_hands], "hand sizes"
    if not getattr(info, "visible_cards", ()):
        assert sorted(hands[seat]) == sorted(info.hand), "the seat's own hand, exactly"
    used = Counter(card for hand in hands for card in hand)
    used.update(
        card
        for _, played in round_plays(info)
        for card in (played if isinstance(played, tuple) else (played,))
    )
    used.update(seen_elsewhere(info))
    assert not used - deck(game, info), f"a card twice, or a card the seat saw: {used - deck(game, info)}"
    assert replays_legally(game, info, hands), "the round's history is impossible in this world"


def check_position(game: Game, state: Any, seat: int, rng: random.Random, samples: int) -> None:
    info = game.information_state(state, seat)
    possible = worlds(info)
    assert possible.admits(true_hands(game, state)), "the real hands must be possible"
    for _ in range(samples):
        check_world(game, state, seat, possible.sample(rng))


@pytest.mark.parametrize("game_id", list(GAMES))
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), stop=st.integers(0, 400), data=st.data())
def test_sampled_worlds_are_consistent_and_admit_the_real_one(
    game_id: str, seed: int, stop: int, data: st.DataObject
) -> None:
    game = get_game(game_id)
    players = data.draw(st.sampled_from(list(game.players)), label="players")
    greedy_share = data.draw(st.sampled_from([0.0, 0.7, 1.0]), label="greedy share")
    chosen = None
    for index, position in enumerate(positions(game, players, seed, greedy_share)):
        chosen = position
        if index == stop:
            break
    assert chosen is not None
    check_position(game, *chosen, random.Random(seed), samples=3)


@pytest.mark.parametrize("game_id", list(GAMES))
def test_many_positions_of_every_round(game_id: str) -> None:
    """A sweep over whole games at both table sizes: early and late rounds, every phase."""
    game = get_game(game_id)
    rng = random.Random(5)
    checked = 0
    for players, seed in itertools.product(table_sizes(game), (1, 2, 3)):
        for state, seat in some_positions(game, players, seed, count=35):
            check_position(game, state, seat, rng, samples=2)
            checked += 1
    assert checked >= 100


@pytest.mark.parametrize("game_id", list(GAMES))
def test_the_sampler_deals_each_real_hand_where_few_hands_are_possible(game_id: str) -> None:
    """Late in a round a seat can hold few hands: sampled often enough, its real one comes up (the
    sampler does not rule it out, nor, by the same count, any other hand it should allow)."""
    game = get_game(game_id)
    rng = random.Random(11)
    found = 0
    for players, seed in itertools.product(table_sizes(game), range(1, 4)):
        for state, seat in positions(game, players, seed):
            possible = worlds(game.information_state(state, seat))
            pool, counts = possible.constraints.pool, possible.constraints.counts
            real = true_hands(game, state)
            for other, count in enumerate(counts):
                ways = math.comb(len(pool), count)
                if other == seat or not 2 <= ways <= 60:
                    continue
                tries = 40 * ways
                assert any(
                    sorted(possible.sample_placement(rng).hands[other]) == sorted(real[other])
                    for _ in range(tries)
                ), f"{game_id}: seat {other}'s real hand never came up in {tries} worlds"
                found += 1
            if found >= 6:
                return
    assert found, f"{game_id}: no position with few possible hands"


def test_a_seat_that_did_not_follow_suit_is_dealt_none_of_it() -> None:
    """Oh Hell!: after the others discard on a led suit, no world gives them that suit."""
    game = get_game("oh-hell")
    rng = random.Random(2)
    seen_void = 0
    for state, seat in positions(game, 4, 9, greedy_share=1.0):
        info = game.information_state(state, seat)
        for trick in info.tricks:
            led = trick[0][1][1]
            for other, card in trick[1:]:
                if card[1] == led or other == seat:
                    continue
                seen_void += 1
                for _ in range(3):
                    world_hand = true_hands(game, worlds(info).sample(rng))[other]
                    assert all(held[1] != led for held in world_hand)
    assert seen_void > 20


def test_the_same_rng_gives_the_same_world_and_another_a_different_one() -> None:
    game = get_game("oh-hell")
    state, seat = some_positions(game, 4, 3, count=5)[1]
    possible = worlds(game.information_state(state, seat))
    first = possible.sample_placement(random.Random(7))
    assert possible.sample_placement(random.Random(7)) == first
    assert any(possible.sample_placement(random.Random(other)) != first for other in range(8, 12))


DIGEST_SCRIPT = """
import hashlib, random
from referee.botkit.search import worlds
from referee.engine.games import GAMES
from referee.engine.games.base import CHANCE
digest = hashlib.sha256()
for game_id, game in GAMES.items():
    rng = random.Random(1)
    state = game.start(game.players.start)
    state = game.apply(state, CHANCE, game.sample_chance(state, rng))
    seat = game.to_move(state).seats[0]
    for _ in range(5):
        digest.update(repr(worlds(game.information_state(state, seat)).sample_placement(rng)).encode())
print(digest.hexdigest())
"""


def test_worlds_do_not_depend_on_the_process_hash_seed() -> None:
    """Card codes are strings, whose hashes differ between processes: a sampler iterating a set
    would deal differently in each. Two processes with different hash seeds deal alike."""
    digests = set()
    for hash_seed in ("1", "2"):
        environment = {**os.environ, "PYTHONHASHSEED": hash_seed}
        run = subprocess.run(
            [sys.executable, "-c", DIGEST_SCRIPT],
            capture_output=True,
            text=True,
            env=environment,
            cwd=ROOT,
            check=True,
        )
        digests.add(run.stdout.strip())
    assert len(digests) == 1


def test_tight_constraints_are_met_exactly_by_the_matching() -> None:
    """Constraints no shuffle meets in practice: seat 0 may hold only the spades, seat 1 only the
    hearts, the rest anything; the one placement is found, every time."""
    spades = tuple(card for card in DECK_52 if card[1] == "S")
    hearts = tuple(card for card in DECK_52 if card[1] == "H")
    others = tuple(card for card in DECK_52 if card[1] in "DC")
    pool = spades + hearts + others
    constraints = Constraints(
        pool,
        (13, 13),
        (frozenset(hearts + others), frozenset(spades + others)),
        ((), ()),
    )
    for seed in range(5):
        hands, rest = dealing.deal(constraints, random.Random(seed))
        assert sorted(hands[0]) == sorted(spades) and sorted(hands[1]) == sorted(hearts)
        assert sorted(rest) == sorted(others)
        assert constraints.admits(hands)


def test_contradictory_constraints_raise_no_world() -> None:
    pool = ("AS", "KS", "QH")
    with pytest.raises(NoWorld, match="cannot be placed"):
        dealing.deal(
            Constraints(pool, (2, 1), (frozenset({"AS", "KS"}), frozenset()), ((), ())), random.Random(1)
        )
    with pytest.raises(NoWorld, match="only 3 are unseen"):
        dealing.deal(Constraints(pool, (2, 2), (frozenset(), frozenset()), ((), ())), random.Random(1))


def test_admits_refuses_hands_that_break_a_constraint() -> None:
    constraints = Constraints(
        ("AS", "KS", "QH", "2C"), (0, 2), (frozenset(), frozenset({"QH"})), (("7D",), ())
    )
    assert constraints.admits([("7D",), ("AS", "2C")])
    assert not constraints.admits([(), ("AS", "2C")]), "a known card is missing"
    assert not constraints.admits([("7D",), ("AS", "QH")]), "a forbidden card"
    assert not constraints.admits([("7D",), ("AS", "AS")]), "a card twice"
    assert not constraints.admits([("7D",), ("AS",)]), "a hand of the wrong size"
    assert not constraints.admits([("7D",), ("AS", "9H")]), "a card not unseen"


def test_black_sevens_worlds_never_deal_a_last_card_on_the_table() -> None:
    """The last cards stay out of the deck until the game is over (R-3.9); in round 7, where all
    28 cards left are dealt, the other seats hold exactly the cards the seat cannot see."""
    game = get_game("black-sevens")
    rng = random.Random(8)
    rounds_seen: set[int] = set()
    for state, seat in positions(game, 4, 4):
        info = game.information_state(state, seat)
        on_table = {card for cards in info.table for card in cards}
        assert len(on_table) == 4 * info.round_index
        held = {card for hand in true_hands(game, worlds(info).sample(rng)) for card in hand}
        assert not held & on_table
        if info.round_index == 6:
            assert held == {card for hand in true_hands(game, state) for card in hand}
        rounds_seen.add(info.round_index)
    assert rounds_seen == set(range(7))


def test_a_placement_is_built_into_the_state_it_describes() -> None:
    """`build` of the real hands (and the real rest) gives a state every seat sees as the real one."""
    game = get_game("oh-hell")
    for state, seat in some_positions(game, 3, 4, count=10):
        info = game.information_state(state, seat)
        hands = tuple(true_hands(game, state))
        rest = tuple(
            sorted(Counter(worlds(info).constraints.pool) - Counter(card for hand in hands for card in hand))
        )
        built = worlds(info).build(Placement(hands, rest))
        for other in range(3):
            assert game.information_state(built, other) == game.information_state(state, other)


def test_an_unknown_game_is_a_clear_error() -> None:
    class Stranger:
        game = "chess"

    with pytest.raises(GameError, match="no worlds for 'chess'"):
        worlds(Stranger())
