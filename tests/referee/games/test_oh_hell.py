"""Oh Hell! (RULES.md §2, rulebook 002): every ruling from explicit deals, rules as tables,
and random play checked against the scoring recomputed here."""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Callable
from typing import Any

import pytest
from bidding_helpers import act, deal, game_events, seat_to_move, views_compared
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.cards import DECK_52, parse_cards
from referee.engine.games import oh_hell
from referee.engine.games.base import (
    CHANCE,
    Decision,
    DecisionKind,
    GameError,
    Result,
    competition_ranks,
)
from referee.engine.games.bidding import State
from referee.engine.playout import playout

GAME = oh_hell.GAME


def play_round(
    state: State, pick: Callable[[tuple[Any, ...]], Any] = lambda legal: legal[0]
) -> tuple[State, list[dict[str, Any]]]:
    """Plays the rest of the round, collecting its events."""
    events: list[dict[str, Any]] = []
    round_index = state.round_index
    while (decision := oh_hell.to_move(state)) is not None and not decision.is_chance:
        seat = decision.seats[0]
        state = oh_hell.apply(state, seat, pick(oh_hell.legal_actions(state, seat)))
        events.extend(state.events)
    assert any(e["type"] == "round_end" and e["round"] == round_index for e in events)
    return state, events


# The last regular hand of a 3-player game is 10 cards: seat 2 holds the ten top hearts (trump)
# and takes every trick, whatever is led.
SWEEP_DEAL = ("2S 3S 4S 5S 6S 7S 8S 9S TS JS", "2D 3D 4D 5D 6D 7D 8D 9D TD JD",
              "5H 6H 7H 8H 9H TH JH QH KH AH")  # fmt: skip


# 1. Deal


@pytest.mark.parametrize(
    ("players", "sizes"),
    [
        (3, (10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)),
        (4, (10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)),
        (5, (10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)),
        (6, (8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8)),
        (7, (7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7)),  # the rulebook's example: 13 hands
    ],
)
def test_hands_count_down_to_one_and_back_up_to_the_start(players: int, sizes: tuple[int, ...]) -> None:
    assert oh_hell.hand_sizes(players) == sizes
    dealt = [
        step.state.events[0]["hand_size"]
        for step in playout(GAME, GAME.start(players), random.Random(players))
        if step.seat == CHANCE
    ]
    assert tuple(dealt[: len(sizes)]) == sizes


def test_rulebook_example_seven_players_play_thirteen_hands() -> None:
    assert len(oh_hell.hand_sizes(7)) == 13


@pytest.mark.parametrize("players", [2, 8])
def test_oh_hell_is_for_three_to_seven_players(players: int) -> None:
    assert GAME.players == range(3, 8)
    with pytest.raises(GameError, match="3-7 players"):
        GAME.start(players)


def test_a_new_game_waits_for_the_deal() -> None:
    state = GAME.start(4)
    assert oh_hell.to_move(state) == Decision(DecisionKind.DEAL, ())
    assert oh_hell.result(state) is None
    assert state.events == ()


def test_r_2_1_the_first_dealer_is_drawn_in_the_first_deal_then_rotates() -> None:
    dealers = set()
    for seed in range(40):
        outcome = oh_hell.sample_chance(GAME.start(4), random.Random(seed))
        assert 0 <= outcome["dealer"] < 4
        dealers.add(outcome["dealer"])
    assert dealers == {0, 1, 2, 3}

    state = deal(GAME.start(4, round_index=9), ["AS", "KS", "QS", "JS"], "2C", dealer=3)
    assert state.dealer == 3
    state, _ = play_round(state)
    later = oh_hell.sample_chance(state, random.Random(0))
    assert "dealer" not in later  # the deal rotates: nothing left to draw
    assert deal(state, ["AS 2S", "KS 3S", "QS 4S", "JS 5S"], "2C").dealer == 0


def test_r_2_1_the_first_deal_must_name_the_dealer() -> None:
    with pytest.raises(GameError, match="first deal must draw the dealer"):
        deal(GAME.start(4, round_index=9), ["AS", "KS", "QS", "JS"], "2C")


def test_a_later_deal_may_only_name_the_dealer_the_rotation_gives() -> None:
    state = deal(GAME.start(4, round_index=9), ["AS", "KS", "QS", "JS"], "2C", dealer=1)
    state, _ = play_round(state)
    with pytest.raises(GameError, match="deal passes to 2"):
        deal(state, ["AS 2S", "KS 3S", "QS 4S", "JS 5S"], "2C", dealer=0)


def test_the_deal_rotates_clockwise_each_hand() -> None:
    dealers = [
        step.state.dealer for step in playout(GAME, GAME.start(5), random.Random(3))
        if step.seat == CHANCE
    ]  # fmt: skip
    assert [(dealer - dealers[0]) % 5 for dealer in dealers] == [i % 5 for i in range(len(dealers))]
    assert len(dealers) >= 19


def test_the_trump_card_is_the_top_card_left_on_the_deck_after_the_deal() -> None:
    state = GAME.start(4)
    outcome = oh_hell.sample_chance(state, random.Random(11))
    rng = random.Random(11)
    rng.randrange(4)  # the first dealer is drawn before the shuffle
    deck = list(DECK_52)
    rng.shuffle(deck)
    assert [card for hand in outcome["hands"] for card in hand] == deck[:40]
    assert outcome["trump_card"] == deck[40]


def test_the_trump_card_is_public_and_not_in_play() -> None:
    state = deal(GAME.start(3, round_index=9), ["AS", "KH", "QD"], "4C", dealer=0)
    assert state.trump == "C"
    for seat in range(3):
        info = oh_hell.information_state(state, seat)
        assert (info.trump_card, info.trump) == ("4C", "C")
        assert "4C" not in info.hand
    with pytest.raises(GameError, match="trump card 4C is also in a hand"):
        deal(GAME.start(3, round_index=9), ["AS", "KH", "4C"], "4C", dealer=0)


def test_the_deal_event_shows_every_hand_for_the_replay() -> None:
    state = deal(GAME.start(3, round_index=8), ["KS AS", "2H QD", "3C 3D"], "4C", dealer=2)
    assert state.events == (
        {"type": "deal", "round": 8, "hand_size": 2, "dealer": 2,
         "hands": [["KS", "AS"], ["2H", "QD"], ["3D", "3C"]], "trump_card": "4C"},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        ({"hands": [["AS"], ["KS"], ["QS"]], "trump_card": "2C"}, "first deal must draw the dealer"),
        ({"dealer": 3, "hands": [["AS"], ["KS"], ["QS"]], "trump_card": "2C"}, "seat 0..2"),
        ({"dealer": True, "hands": [["AS"], ["KS"], ["QS"]], "trump_card": "2C"}, "seat 0..2"),
        ({"dealer": 0, "hands": [["AS"], ["KS"]], "trump_card": "2C"}, "a list of 3 hands"),
        ({"dealer": 0, "hands": [["AS"], ["KS", "2S"], ["QS"]], "trump_card": "2C"},
         "hand 1 has 2 cards, expected 1"),
        ({"dealer": 0, "hands": [["AS"], [], ["QS"]], "trump_card": "2C"},
         "hand 1 has 0 cards, expected 1"),
        ({"dealer": 0, "hands": [["AS"], ["XX"], ["QS"]], "trump_card": "2C"},
         "hand 1 has an unknown card 'XX'"),
        ({"dealer": 0, "hands": [["AS"], ["AS"], ["QS"]], "trump_card": "2C"}, "AS is dealt twice"),
        ({"dealer": 0, "hands": [["AS"], ["KS"], ["QS"]], "trump_card": "ZZ"}, "'trump_card'"),
        ({"dealer": 0, "hands": [["AS"], ["KS"], ["QS"]]}, "'trump_card'"),
        ({"dealer": 0, "hands": [["AS"], ["KS"], ["QS"]], "trump_card": "QS"}, "also in a hand"),
        ({"dealer": 0, "hands": [["AS"], ["KS"], ["QS"]], "trump_card": "2C", "x": 1},
         "unknown key 'x'"),
        ("AS KS QS", "must be a dict"),
    ],
)  # fmt: skip
def test_a_malformed_deal_outcome_is_rejected_with_a_clear_message(outcome: Any, message: str) -> None:
    with pytest.raises(GameError, match=message):
        oh_hell.apply(GAME.start(3, round_index=9), CHANCE, outcome)


def test_a_deal_outcome_when_no_deal_is_due_is_rejected() -> None:
    state = deal(GAME.start(3, round_index=9), ["AS", "KS", "QS"], "2C", dealer=0)
    with pytest.raises(GameError, match="no deal is due"):
        deal(state, ["AS", "KS", "QS"], "2C", dealer=0)


@pytest.mark.parametrize(
    ("position", "message"),
    [
        ({"round_index": 29}, "round_index must be 0..28"),
        ({"round_index": -1}, "round_index must be 0..28"),
        ({"scores": [0, 0]}, "one integer score per seat"),
        ({"scores": [0, 0, "1"]}, "one integer score per seat"),
    ],
)
def test_a_bad_starting_position_is_rejected(position: dict[str, Any], message: str) -> None:
    with pytest.raises(GameError, match=message):
        GAME.start(3, **position)


# 2. Bid


def test_bidding_starts_at_the_dealers_left_and_the_dealer_bids_last() -> None:
    state = deal(GAME.start(4, round_index=8), ["AS 2S", "KS 3S", "QS 4S", "JS 5S"], "2C", dealer=2)
    order = []
    for bid in (0, 1, 0, 0):
        order.append(seat_to_move(state))
        assert oh_hell.to_move(state) == Decision(DecisionKind.BID, (order[-1],))
        state = act(state, bid)
    assert order == [3, 0, 1, 2]
    assert state.bids == (1, 0, 0, 0)
    assert oh_hell.to_move(state) == Decision(DecisionKind.PLAY, (2,))  # the dealer leads


@pytest.mark.parametrize(
    ("hand_size", "others", "dealer_bids"),
    [
        (2, (0, 1, 0), (0, 2)),  # 1 would make the total 2
        (2, (0, 0, 0), (0, 1)),  # 2 would make the total 2
        (2, (1, 1, 0), (1, 2)),  # 0 would make the total 2
        (2, (2, 1, 0), (0, 1, 2)),  # already over: every bid is allowed
        (1, (0, 0, 0), (0,)),  # a forced bid: the runner applies it
        (1, (1, 0, 0), (1,)),
        (3, (1, 1, 0), (0, 2, 3)),
    ],
)
def test_the_dealer_may_not_bid_the_number_that_makes_the_total_the_hand_size(
    hand_size: int, others: tuple[int, ...], dealer_bids: tuple[int, ...]
) -> None:
    state = GAME.start(4, round_index=10 - hand_size)
    hands = [" ".join(DECK_52[seat * hand_size : (seat + 1) * hand_size]) for seat in range(4)]
    state = act(deal(state, hands, "AC", dealer=3), *others)
    assert seat_to_move(state) == 3
    assert oh_hell.legal_actions(state, 3) == dealer_bids


def test_other_players_may_bid_anything_from_zero_to_the_hand_size() -> None:
    state = deal(GAME.start(4, round_index=7), ["AS 2S 9D", "KS 3S 9H", "QS 4S 9C", "JS 5S 8C"],
                 "2C", dealer=3)  # fmt: skip
    assert oh_hell.legal_actions(state, 0) == (0, 1, 2, 3)
    state = act(state, 3)
    assert oh_hell.legal_actions(state, 1) == (0, 1, 2, 3)  # the total may reach 3 before the dealer


def test_r_2_2_a_bid_is_final_once_made() -> None:
    state = deal(GAME.start(3, round_index=8), ["AS 2S", "KS 3S", "QS 4S"], "2C", dealer=0)
    state = act(state, 2)
    assert state.events == ({"type": "bid", "seat": 1, "bid": 2},)
    assert oh_hell.legal_actions(state, 1) == ()  # no way to take it back
    assert seat_to_move(state) == 2
    state = act(state, 0, 1)
    assert state.bids == (1, 2, 0)


# 3. Play


def test_the_dealer_leads_the_first_trick() -> None:
    state = deal(GAME.start(4, round_index=8), ["AS 2S", "KS 3S", "QS 4S", "JS 5S"], "2C", dealer=1)
    state = act(state, 0, 0, 0, 0)
    assert oh_hell.to_move(state) == Decision(DecisionKind.PLAY, (1,))
    assert oh_hell.information_state(state, 1).leader == 1


def test_trump_need_not_be_broken_the_first_lead_may_be_trump() -> None:
    state = deal(GAME.start(3, round_index=8), ["AC 2S", "KS 3S", "QS 4S"], "2C", dealer=0)
    state = act(state, 0, 0, 0)
    assert oh_hell.legal_actions(state, 0) == ("2S", "AC")


@pytest.mark.parametrize(
    ("hand", "trick", "legal"),
    [
        ("AS 2H 3D 4C", "", "AS 2H 3D 4C"),  # leading: any card
        ("AS 2H 3D 4C", "KH", "2H"),  # follow suit
        ("AS 2H 9H 4C", "KH", "2H 9H"),
        ("AS 3D 4C", "KH", "AS 3D 4C"),  # void: any card, trump or not
        ("AS 3D 4C", "KH AC", "AS 3D 4C"),  # a trump played does not change the led suit
        ("AS 3D 4C", "KC AH", "4C"),  # trump led: follow trump
    ],
)
def test_follow_suit_if_able_else_any_card(hand: str, trick: str, legal: str) -> None:
    state = _position(hand, trick)
    assert seat_to_move(state) == 0
    assert oh_hell.legal_actions(state, 0) == parse_cards(legal)


def _position(hand: str, trick: str, trump_card: str = "2C") -> State:
    """3 players; seat 0 holds `hand` and is to play after the seats before it played `trick`."""
    cards, played = parse_cards(hand), parse_cards(trick)
    size = len(cards)
    leader = (3 - len(played)) % 3
    used = {*cards, *played, trump_card}
    led = played[0][1] if played else None
    pads = [card for card in DECK_52 if card not in used and card[1] != led]
    hands: list[list[str]] = [list(cards), [], []]
    for offset, card in enumerate(played):
        hands[(leader + offset) % 3].append(card)
    for seat in (1, 2):
        while len(hands[seat]) < size:
            hands[seat].append(pads.pop())
    state = GAME.start(3, round_index=oh_hell.hand_sizes(3).index(size))
    state = deal(state, [" ".join(own) for own in hands], trump_card, dealer=leader)
    return act(state, 0, 0, 0, *played)  # the dealer leads the first trick


@pytest.mark.parametrize(
    ("trick", "trump", "winner"),
    [
        ("2H KH AH", "C", 2),  # highest of the led suit
        ("AH 2S 3D", "C", 0),  # off-suit cards never win
        ("AH 2C 3D", "C", 1),  # a trump beats the led suit
        ("AH 2C 3C", "C", 2),  # the highest trump
        ("4C AH 3C", "C", 0),  # trump led: the highest trump
        ("TD 9D 8S 7S", "S", 2),
        ("2D 3D 4D 5D 6D 7D AS", "H", 5),
    ],
)
def test_highest_trump_else_highest_card_of_the_led_suit_wins(trick: str, trump: str, winner: int) -> None:
    cards = parse_cards(trick)
    players = len(cards)
    pads = [c for c in DECK_52 if c[1] not in (trump, cards[0][1]) and c not in cards]
    hands = [[card, pads.pop(), pads.pop()] for card in cards]
    trump_card = next(card for card in DECK_52 if card[1] == trump and card not in cards)
    state = GAME.start(players, round_index=oh_hell.hand_sizes(players).index(3))
    state = deal(state, [" ".join(hand) for hand in hands], trump_card, dealer=0)
    state = act(state, *[0] * players)  # the dealer leads
    state = act(state, *cards)
    assert state.events[-1]["type"] == "trick"
    assert state.events[-1]["winner"] == winner
    assert state.tricks_won[winner] == 1
    assert seat_to_move(state) == winner  # the winner leads the next trick


def test_the_trick_winner_leads_the_next_trick() -> None:
    state = deal(GAME.start(3, round_index=8), ["2S 3H", "AS 4H", "KS 5H"], "2C", dealer=0)
    state = act(state, 0, 1, 0)
    state = act(state, "2S", "AS", "KS")
    assert state.events[-1] == {"type": "trick", "winner": 1, "plays": [[0, "2S"], [1, "AS"], [2, "KS"]]}
    assert seat_to_move(state) == 1
    assert oh_hell.information_state(state, 2).tricks == (((0, "2S"), (1, "AS"), (2, "KS")),)


# 4. Score


@pytest.mark.parametrize(
    ("bid", "tricks", "points"),
    [(0, 0, 10), (1, 1, 10), (3, 3, 30), (10, 10, 100), (0, 2, -20), (3, 1, -20), (2, 5, -30)],
)
def test_an_exact_bid_scores_ten_a_trick_a_made_zero_ten_a_miss_loses_ten_a_trick(
    bid: int, tricks: int, points: int
) -> None:
    assert oh_hell.score(bid, tricks) == points


def test_a_round_is_scored_from_its_bids_and_tricks() -> None:
    state = deal(GAME.start(3, scores=[5, 0, -5], round_index=8),
                 ["AS AH", "KS KH", "2S 2H"], "2C", dealer=0)  # fmt: skip
    state = act(state, 1, 0, 0)  # seats 1, 2, then the dealer 0: total 1 != 2
    state = act(state, "AS", "KS", "2S", "AH", "KH", "2H")
    round_end = state.events[-1]
    assert round_end == {"type": "round_end", "round": 8, "hand_size": 2, "bids": [0, 1, 0],
                         "tricks": [2, 0, 0], "points": [-20, -10, 10], "scores": [-15, -10, 5]}  # fmt: skip
    assert state.scores == (-15, -10, 5)
    assert oh_hell.to_move(state) == Decision(DecisionKind.DEAL, ())
    assert state.round_index == 9 and state.hand_size == 1 and state.dealer == 1


def test_the_game_ends_after_the_last_hand_and_the_highest_total_wins() -> None:
    state = deal(GAME.start(3, scores=[0, 30, 0], round_index=18), SWEEP_DEAL, "2H", dealer=0)
    state = act(state, 0, 10, 1)  # seats 1, 2, then the dealer: 0 is barred (0 + 10 + 0 = 10)
    state, events = play_round(state)
    assert events[-1] == {"type": "game_end", "scores": [-10, 40, 100], "ranks": [3, 2, 1],
                          "aborted": False}  # fmt: skip
    assert oh_hell.to_move(state) is None
    assert oh_hell.result(state) == Result((-10, 40, 100), (3, 2, 1))


def test_r_2_3_a_tie_for_the_top_deals_an_extra_hand_at_the_starting_size() -> None:
    state = deal(GAME.start(3, scores=[120, 100, 0], round_index=18), SWEEP_DEAL, "2H", dealer=0)
    state = act(state, 0, 10, 1)
    state, events = play_round(state)
    assert events[-1]["scores"] == [110, 110, 100]
    assert oh_hell.to_move(state) == Decision(DecisionKind.DEAL, ())
    assert (state.round_index, state.hand_size, state.dealer) == (19, 10, 1)  # the deal rotates


def test_r_2_3_extra_hands_end_when_one_leader_remains() -> None:
    state = deal(GAME.start(3, scores=[100, 100, 0], round_index=19), SWEEP_DEAL, "2H", dealer=0)
    state = act(state, 0, 10, 1)
    state, _ = play_round(state)
    assert oh_hell.result(state) == Result((90, 110, 100), (3, 1, 2))


def test_r_2_4_every_player_plays_the_extra_hands_and_one_outside_the_tie_may_win() -> None:
    state = deal(GAME.start(3, scores=[100, 100, 95], round_index=19), SWEEP_DEAL, "2H", dealer=0)
    state = act(state, 0, 10, 1)
    state, _ = play_round(state)
    assert oh_hell.result(state) == Result((90, 110, 195), (3, 2, 1))


def test_r_2_3_after_ten_extra_hands_the_tied_players_share_rank_one() -> None:
    state = deal(GAME.start(3, scores=[120, 100, 0], round_index=28), SWEEP_DEAL, "2H", dealer=0)
    state = act(state, 0, 10, 1)
    state, events = play_round(state)
    assert oh_hell.result(state) == Result((110, 110, 100), (1, 1, 3))
    assert events[-1]["ranks"] == [1, 1, 3]


def test_apply_never_mutates_its_input() -> None:
    state = deal(GAME.start(3, round_index=8), ["2S 3H", "AS 4H", "KS 5H"], "2C", dealer=0)
    before = dataclasses.astuple(state)
    act(state, 0, 1, 0, "2S", "AS", "KS", "4H", "5H", "3H")
    assert dataclasses.astuple(state) == before


# What a seat may know


def test_the_information_state_holds_the_seats_hand_sorted_and_the_public_facts() -> None:
    state = deal(GAME.start(3, scores=[10, 20, 30], round_index=7),
                 ["AS 2H 9S", "KS 3H 5D", "QS 4H 6D"], "7C", dealer=2)  # fmt: skip
    state = act(state, 1, 0, 1, "QS")
    info = oh_hell.information_state(state, 0)
    assert info == oh_hell.InfoState(
        game="oh-hell", seat=0, num_players=3, options=(), scores=(10, 20, 30), round=7, rounds=19,
        hand_size=3, dealer=2, trump_card="7C", trump="C", hand=("9S", "AS", "2H"),
        visible_cards=(), bids=(1, 0, 1), leader=2, trick=((2, "QS"),), tricks=(),
        tricks_won=(0, 0, 0),
    )  # fmt: skip


def test_in_the_one_card_hand_each_player_sees_their_own_card() -> None:
    state = deal(GAME.start(3, round_index=9), ["AS", "KS", "QS"], "2C", dealer=0)
    info = oh_hell.information_state(state, 1)
    assert info.hand == ("KS",) and info.visible_cards == ()


def _swapped(outcome: dict[str, Any], seat: int, rng: random.Random) -> dict[str, Any]:
    """The same deal with one card of another seat swapped with another seat's or an undealt one."""
    hands = [list(hand) for hand in outcome["hands"]]
    others = [other for other in range(len(hands)) if other != seat]
    first = rng.choice(others)
    dealt = {card for hand in hands for card in hand}
    undealt = [c for c in DECK_52 if c not in dealt and c != outcome["trump_card"]]
    i = rng.randrange(len(hands[first]))
    if len(others) > 1 and rng.random() < 0.5:
        second = rng.choice([other for other in others if other != first])
        j = rng.randrange(len(hands[second]))
        hands[first][i], hands[second][j] = hands[second][j], hands[first][i]
    else:
        hands[first][i] = rng.choice(undealt)
    return {**outcome, "hands": hands}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.sampled_from([3, 4, 5, 6, 7]))
def test_information_states_do_not_depend_on_cards_the_seat_cannot_see(seed: int, players: int) -> None:
    rng = random.Random(seed)
    state = GAME.start(players, round_index=rng.randrange(len(oh_hell.hand_sizes(players))))
    outcome = oh_hell.sample_chance(state, rng)
    seat = rng.randrange(players)
    first = oh_hell.apply(state, CHANCE, outcome)
    second = oh_hell.apply(state, CHANCE, _swapped(outcome, seat, rng))
    compared = views_compared(first, second, seat, rng)
    assert compared >= players  # at least the whole bidding


# Whole games


def _rounds(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    rounds: list[list[dict[str, Any]]] = []
    for event in events:
        if event["type"] == "deal":
            rounds.append([])
        rounds[-1].append(event)
    return rounds


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.sampled_from([3, 4, 5, 6, 7]))
def test_random_games_keep_the_rules(seed: int, players: int) -> None:
    events, state = game_events(GAME, players, seed)
    rounds = _rounds(events)
    sizes = oh_hell.hand_sizes(players)
    assert len(rounds) >= len(sizes)
    totals = [0] * players
    for index, round_events in enumerate(rounds):
        dealt, *rest = round_events
        size = sizes[index] if index < len(sizes) else sizes[0]
        assert dealt["round"] == index and dealt["hand_size"] == size
        dealer = dealt["dealer"]
        hands = dealt["hands"]
        # no card is created or lost: each seat plays exactly its dealt cards; the trump card never
        plays = [e for e in rest if e["type"] == "play"]
        for seat in range(players):
            assert sorted(e["card"] for e in plays if e["seat"] == seat) == sorted(hands[seat])
        assert dealt["trump_card"] not in {e["card"] for e in plays}
        bids = [e for e in rest if e["type"] == "bid"]
        assert [e["seat"] for e in bids] == [(dealer + 1 + i) % players for i in range(players)]
        tricks = [e for e in rest if e["type"] == "trick"]
        assert len(tricks) == size
        assert tricks[0]["plays"][0][0] == dealer  # the dealer leads
        for before, after in itertools.pairwise(tricks):
            assert after["plays"][0][0] == before["winner"]
        (end,) = [e for e in rest if e["type"] == "round_end"]
        bid_of = {e["seat"]: e["bid"] for e in bids}
        assert end["bids"] == [bid_of[seat] for seat in range(players)]
        assert sum(end["bids"]) != size  # the dealer's restriction
        won = [sum(1 for t in tricks if t["winner"] == seat) for seat in range(players)]
        assert end["tricks"] == won
        expected = [
            (10 * bid if bid else 10) if bid == got else -10 * abs(bid - got)
            for bid, got in zip(end["bids"], won, strict=True)
        ]
        assert end["points"] == expected
        totals = [total + gain for total, gain in zip(totals, expected, strict=True)]
        assert end["scores"] == totals
        if index >= len(sizes) - 1 and index + 1 < len(rounds):
            assert totals.count(max(totals)) > 1  # only a tie for the top deals an extra hand
    assert len(rounds) <= len(sizes) + oh_hell.EXTRA_HANDS
    result = oh_hell.result(state)
    assert result == Result(tuple(totals), competition_ranks(totals))
    assert events[-1] == {"type": "game_end", "scores": totals, "ranks": list(result.ranks or ()),
                          "aborted": False}  # fmt: skip


def test_the_same_seed_and_policy_give_the_same_game() -> None:
    assert game_events(GAME, 4, 99) == game_events(GAME, 4, 99)
    assert game_events(GAME, 4, 99)[0] != game_events(GAME, 4, 100)[0]


# The greedy policy


def _greedy(state: State, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
    return oh_hell.greedy(oh_hell.information_state(state, seat), legal)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.sampled_from([3, 4, 5, 6, 7]))
def test_greedy_always_plays_a_legal_action(seed: int, players: int) -> None:
    def checked(state: State, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
        action = _greedy(state, seat, legal, rng)
        assert action in legal
        return action

    game_events(GAME, players, seed, checked)


def test_greedy_beats_random_play_on_average() -> None:
    def mixed(state: State, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
        if seat == greedy_seat:
            return _greedy(state, seat, legal, rng)
        return legal[rng.randrange(len(legal))]

    greedy_ranks, random_ranks = [], []
    for game in range(200):
        greedy_seat = game % 4
        _, state = game_events(GAME, 4, game, mixed)
        result = oh_hell.result(state)
        assert result is not None and result.ranks is not None
        greedy_ranks.append(result.ranks[greedy_seat])
        random_ranks += [rank for seat, rank in enumerate(result.ranks) if seat != greedy_seat]
    assert sum(greedy_ranks) / len(greedy_ranks) < sum(random_ranks) / len(random_ranks) - 0.5


def _info(**fields: Any) -> oh_hell.InfoState:
    base: dict[str, Any] = dict(
        game="oh-hell", seat=0, num_players=4, options=(), scores=(0,) * 4, round=0, rounds=19,
        hand_size=3, dealer=3, trump_card="2C", trump="C", hand=(), visible_cards=(),
        bids=(1, 1, 1, 1), leader=1, trick=(), tricks=(), tricks_won=(0, 0, 0, 0),
    )  # fmt: skip
    base.update(fields)
    return oh_hell.InfoState(**base)


@pytest.mark.parametrize(
    ("hand", "bids", "legal", "bid"),
    [
        ("AS AH AD", (None,) * 4, (0, 1, 2, 3), 3),
        ("2S 3H 4D", (None,) * 4, (0, 1, 2, 3), 0),
        ("AC KC QC", (None,) * 4, (0, 1, 2, 3), 3),
        ("AS AH AD", (0, 0, 0, None), (0, 1, 2), 2),  # dealer barred from 3: the nearest bid
        ("2S 3H 4D", (1, 1, 1, None), (1, 2, 3), 1),  # dealer barred from 0
    ],
)
def test_greedy_bids_its_hand_strength_nearest_to_what_is_allowed(
    hand: str, bids: tuple[int | None, ...], legal: tuple[int, ...], bid: int
) -> None:
    info = _info(seat=3, hand=parse_cards(hand), bids=bids)
    assert oh_hell.greedy(info, legal) == bid


@pytest.mark.parametrize(
    ("hand", "trick", "bid", "won", "card"),
    [
        ("2H 9H KH", ((1, "TH"),), 1, 0, "KH"),  # needs a trick: the lowest winning card
        ("2H 9H QH KH", ((1, "TH"),), 1, 0, "QH"),
        ("2H 9H KH", ((1, "AH"),), 1, 0, "2H"),  # cannot win: the lowest card
        ("2S 3C 9C", ((1, "AH"),), 1, 0, "3C"),  # void: trumps in cheaply
        ("2S 3C 9C", ((1, "AH"), (2, "5C")), 1, 0, "9C"),  # over-trumps cheaply
        ("2H 9H KH", ((1, "TH"),), 1, 1, "9H"),  # has enough: the highest card that loses
        ("QH KH", ((1, "TH"),), 0, 0, "QH"),  # every card wins: the lowest
        ("2S 3C 9C", ((1, "AH"),), 0, 0, "2S"),  # void, wants none: discards, not trumps
        ("2S 3H AH KC", (), 2, 0, "KC"),  # leading and needing: the strongest card
        ("2S 3H AH KC", (), 0, 0, "2S"),  # leading with enough: the weakest
    ],
)
def test_greedy_plays_to_make_its_bid_exactly(
    hand: str, trick: tuple[tuple[int, str], ...], bid: int, won: int, card: str
) -> None:
    cards = parse_cards(hand)
    led = trick[0][1][1] if trick else None
    legal = tuple(c for c in cards if c[1] == led) or cards
    info = _info(hand=cards, trick=trick, bids=(bid, 1, 1, 1), tricks_won=(won, 0, 0, 0))
    assert oh_hell.greedy(info, legal) == card
