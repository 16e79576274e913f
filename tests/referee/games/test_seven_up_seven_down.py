"""7Up7Down (RULES.md §4, rulebook 004): every ruling and the rulebook's example table from
explicit deals, rules as tables, and random play checked against the scoring recomputed here."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from bidding_helpers import act, deal, game_events, seat_to_move, views_compared
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.cards import DECK_52, parse_cards
from referee.engine.games import seven_up_seven_down as sevens
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

GAME = sevens.GAME
ONE_CARD_ROUNDS = (6, 7)


# 1. Deal


def test_fourteen_rounds_from_seven_cards_down_to_one_and_back_up() -> None:
    assert sevens.hand_sizes(4) == (7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7)
    rounds = [
        step.state.events[0] for step in playout(GAME, GAME.start(4), random.Random(1))
        if step.seat == CHANCE
    ]  # fmt: skip
    assert [event["hand_size"] for event in rounds] == list(sevens.HAND_SIZES)


@pytest.mark.parametrize("players", [1, 8])
def test_r_4_1_seven_up_seven_down_is_for_two_to_seven_players(players: int) -> None:
    assert GAME.players == range(2, 8)
    with pytest.raises(GameError, match="2-7 players"):
        GAME.start(players)


@pytest.mark.parametrize("players", [2, 7])
def test_r_4_1_two_and_seven_players_play_a_whole_game(players: int) -> None:
    steps = list(playout(GAME, GAME.start(players), random.Random(players)))
    result = sevens.result(steps[-1].state)
    assert result is not None and len(result.scores) == players


def test_the_first_dealer_is_drawn_and_the_deal_rotates_clockwise() -> None:
    assert {sevens.sample_chance(GAME.start(3), random.Random(s))["dealer"] for s in range(30)} == {
        0, 1, 2,
    }  # fmt: skip
    dealers = [
        step.state.dealer for step in playout(GAME, GAME.start(3), random.Random(8))
        if step.seat == CHANCE
    ]  # fmt: skip
    assert [(dealer - dealers[0]) % 3 for dealer in dealers] == [i % 3 for i in range(14)]


def test_r_4_2_the_trump_card_is_drawn_at_random_from_the_undealt_cards() -> None:
    outcome = sevens.sample_chance(GAME.start(4), random.Random(21))
    rng = random.Random(21)
    assert outcome["dealer"] == rng.randrange(4)
    deck = list(DECK_52)
    rng.shuffle(deck)
    assert [card for hand in outcome["hands"] for card in hand] == deck[:28]
    undealt = deck[28:]
    assert outcome["trump_card"] == undealt[rng.randrange(len(undealt))]
    trumps = {sevens.sample_chance(GAME.start(4), random.Random(s))["trump_card"] for s in range(50)}
    assert len(trumps) > 20


def test_r_4_2_the_trump_suit_is_the_trump_cards_suit_and_the_card_is_not_in_play() -> None:
    state = deal(GAME.start(2, round_index=6), ["AS", "KS"], "5D", dealer=0)
    info = sevens.information_state(state, 0)
    assert (info.trump_card, info.trump) == ("5D", "D")
    with pytest.raises(GameError, match="trump card KS is also in a hand"):
        deal(GAME.start(2, round_index=6), ["AS", "KS"], "KS", dealer=0)


@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        ({"hands": [["AS"], ["KS"]], "trump_card": "2C"}, "first deal must draw the dealer"),
        ({"dealer": 2, "hands": [["AS"], ["KS"]], "trump_card": "2C"}, "seat 0..1"),
        ({"dealer": 0, "hands": [["AS"], ["KS"], ["QS"]], "trump_card": "2C"}, "a list of 2 hands"),
        ({"dealer": 0, "hands": [["AS", "2S"], ["KS"]], "trump_card": "2C"}, "hand 0 has 2 cards"),
        ({"dealer": 0, "hands": [["AS"], "KS"], "trump_card": "2C"}, "hand 1 must be a list"),
        ({"dealer": 0, "hands": [["AS"], ["1S"]], "trump_card": "2C"}, "unknown card '1S'"),
        ({"dealer": 0, "hands": [["AS"], [7]], "trump_card": "2C"}, "unknown card 7"),
        ({"dealer": 0, "hands": [["KS"], ["KS"]], "trump_card": "2C"}, "KS is dealt twice"),
        ({"dealer": 0, "hands": [["AS"], ["KS"]], "trump_card": None}, "'trump_card'"),
        ({"dealer": 0, "hands": [["AS"], ["KS"]], "trump": "2C"}, "unknown key 'trump'"),
    ],
)
def test_a_malformed_deal_outcome_is_rejected_with_a_clear_message(outcome: Any, message: str) -> None:
    with pytest.raises(GameError, match=message):
        sevens.apply(GAME.start(2, round_index=6), CHANCE, outcome)


def test_a_bad_starting_position_is_rejected() -> None:
    with pytest.raises(GameError, match=r"round_index must be 0\.\.13"):
        GAME.start(4, round_index=14)
    with pytest.raises(GameError, match="one integer score per seat"):
        GAME.start(4, scores=[0, 0, 0])
    with pytest.raises(GameError, match="has no option"):
        GAME.start(4, {"target": 35})


# 2. Bid


def test_bidding_goes_clockwise_from_the_dealers_left_and_the_dealer_bids_last() -> None:
    state = deal(GAME.start(3, round_index=5), ["AS 2S", "KS 3S", "QS 4S"], "2C", dealer=1)
    order = []
    for bid in (0, 0, 0):
        order.append(seat_to_move(state))
        assert sevens.to_move(state) == Decision(DecisionKind.BID, (order[-1],))
        state = act(state, bid)
    assert order == [2, 0, 1]
    assert state.events == ({"type": "bid", "seat": 1, "bid": 0},)


@pytest.mark.parametrize(
    ("hand_size", "others", "dealer_bids"),
    [
        (3, (1, 1), (0, 2, 3)),
        (3, (0, 0), (0, 1, 2)),
        (3, (3, 1), (0, 1, 2, 3)),
        (1, (0, 0), (0,)),  # a forced bid
        (1, (1, 0), (1,)),
    ],
)
def test_the_bids_may_not_total_the_hand_size(
    hand_size: int, others: tuple[int, ...], dealer_bids: tuple[int, ...]
) -> None:
    hands = [" ".join(DECK_52[seat * hand_size : (seat + 1) * hand_size]) for seat in range(3)]
    state = deal(GAME.start(3, round_index=sevens.HAND_SIZES.index(hand_size)), hands, "AC", 2)
    assert sevens.legal_actions(state, 0) == tuple(range(hand_size + 1))
    state = act(state, *others)
    assert sevens.legal_actions(state, 2) == dealer_bids


# 3. Play


def test_the_player_to_the_dealers_left_leads_the_first_trick() -> None:
    state = deal(GAME.start(4, round_index=5), ["AS 2S", "KS 3S", "QS 4S", "JS 5S"], "2C", dealer=3)
    state = act(state, 0, 0, 0, 0)
    assert sevens.to_move(state) == Decision(DecisionKind.PLAY, (0,))
    assert sevens.information_state(state, 2).leader == 0


@pytest.mark.parametrize(
    ("hand", "led", "legal"),
    [
        ("AS 2H 3D", None, "AS 2H 3D"),
        ("AS 2H 3D", "8H", "2H"),
        ("AS 2H 3D", "8C", "AS 2H 3D"),  # void in the led suit: any card
        ("AS 2H 3D", "8D", "3D"),
    ],
)
def test_follow_suit_if_able_else_any_card(hand: str, led: str | None, legal: str) -> None:
    cards = parse_cards(hand)
    used = {*cards, led, "2C"}
    pads = [card for card in DECK_52 if card[1] == "C" and card not in used]
    opponent = [led, *pads[:2]] if led else pads[:3]
    # seat 1 deals so seat 0 leads; when a card is led, seat 0 deals so seat 1 leads it
    state = deal(GAME.start(2, round_index=4), [hand, " ".join(opponent)], "2C", dealer=0 if led else 1)
    state = act(state, 0, 0)
    if led:
        state = act(state, led)
    assert seat_to_move(state) == 0
    assert sevens.legal_actions(state, 0) == parse_cards(legal)


@pytest.mark.parametrize(
    ("trick", "trump", "winner"),
    [
        ("5H 9H 2H", "S", 1),  # highest of the led suit
        ("5H AD AC", "S", 0),  # off-suit cards never win
        ("5H 2S AC", "S", 1),  # a trump wins
        ("5H 2S 3S", "S", 2),  # the highest trump
    ],
)
def test_highest_trump_else_highest_card_of_the_led_suit_wins(trick: str, trump: str, winner: int) -> None:
    cards = parse_cards(trick)
    state = deal(GAME.start(3, round_index=6), [card for card in cards], "7" + trump, dealer=2)
    state = act(state, 0, 0, 0)
    state = act(state, *cards)  # seat 0, left of the dealer, leads
    assert state.events[1] == {"type": "trick", "winner": winner,
                               "plays": [[seat, card] for seat, card in enumerate(cards)]}  # fmt: skip


# 4. Score


@pytest.mark.parametrize(
    ("bid", "tricks", "points"),
    [(1, 1, 15), (2, 2, 30), (7, 7, 105), (0, 0, 10), (1, 2, 0), (3, 0, 0), (0, 1, 0)],
)
def test_an_exact_bid_scores_fifteen_a_trick_an_exact_zero_ten_and_a_miss_nothing(
    bid: int, tricks: int, points: int
) -> None:
    assert sevens.score(bid, tricks) == points


# The rulebook's example: player 1 is seat 0, ..., player 4 is seat 3; clubs are trump and nobody
# holds one, so each trick goes to the highest card of the suit led.
EXAMPLE_FIRST_ROUND = (
    ["AS KS 2H 7H 4D 6D 9D", "2S 5S AH KH 2D 7D TD", "3S 6S 3H 5H AD KD QD",
     "4S 7S 4H 6H 3D 5D 8D"],
    (1, 2, 3, 0),  # bids of seats 0, 1, 2, then the dealer 3: 6 of 7
    ["AS", "2S", "3S", "4S", "KS", "5S", "6S", "7S", "2H", "AH", "3H", "4H", "KH", "5H", "6H",
     "7H", "2D", "AD", "3D", "4D", "KD", "5D", "6D", "7D", "QD", "8D", "9D", "TD"],
)  # fmt: skip
EXAMPLE_SECOND_ROUND = (
    ["4S 7S AH KH QH 2D", "AS KS 2H 5H 8H 3D", "2S 5S 3H 6H 9H 4D", "3S 6S 4H 7H TH AD"],
    (0, 0, 1, 3),  # bids of seats 1, 2, 3, then the dealer 0: 4 of 6
    ["AS", "2S", "3S", "4S", "KS", "5S", "6S", "7S", "2H", "3H", "4H", "AH", "KH", "5H", "6H",
     "7H", "QH", "8H", "9H", "TH", "2D", "3D", "4D", "AD"],
)  # fmt: skip


def _play_example_round(state: State, example: Any, dealer: int | None = None) -> State:
    hands, bids, plays = example
    return act(deal(state, hands, "2C", dealer), *bids, *plays)


def test_r_4_3_rulebook_example_table_made_zero_scores_ten_in_both_rows() -> None:
    state = _play_example_round(GAME.start(4), EXAMPLE_FIRST_ROUND, dealer=3)
    first = state.events[-1]
    assert (first["bids"], first["tricks"]) == ([1, 2, 3, 0], [2, 2, 3, 0])
    assert first["points"] == [0, 30, 45, 10]  # the table's first row shows 0 for player 4
    assert state.dealer == 0  # player 1 deals the second row
    state = _play_example_round(state, EXAMPLE_SECOND_ROUND)
    second = state.events[-1]
    assert (second["bids"], second["tricks"]) == ([3, 0, 0, 1], [3, 2, 0, 1])
    assert second["points"] == [45, 0, 10, 15]
    assert second["scores"] == [45, 30, 55, 25]


def test_r_4_5_after_round_fourteen_the_highest_total_wins_and_ties_share_the_rank() -> None:
    state = GAME.start(4, scores=[100, 70, 55, 0], round_index=13)
    state = _play_example_round(state, EXAMPLE_FIRST_ROUND, dealer=3)
    assert sevens.to_move(state) is None
    assert sevens.result(state) == Result((100, 100, 100, 10), (1, 1, 1, 4))
    assert state.events[-1] == {"type": "game_end", "scores": [100, 100, 100, 10],
                                "ranks": [1, 1, 1, 4], "aborted": False}  # fmt: skip


# the one-card rounds


@pytest.mark.parametrize("round_index", ONE_CARD_ROUNDS)
def test_r_4_4_in_a_one_card_round_a_player_sees_the_others_cards_but_not_their_own(
    round_index: int,
) -> None:
    state = deal(GAME.start(4, round_index=round_index), ["AS", "KH", "2D", "3C"], "9H", dealer=0)
    info = sevens.information_state(state, 1)
    assert info.hand == ()
    assert info.visible_cards == ((0, "AS"), (2, "2D"), (3, "3C"))
    assert "KH" not in repr(info)


def test_r_4_6_the_one_card_trick_is_forced_and_stays_blind_until_played() -> None:
    state = deal(GAME.start(4, round_index=6), ["AS", "KH", "2D", "3C"], "9H", dealer=0)
    state = act(state, 0, 0, 0, 0)
    for card in ("KH", "2D", "3C"):  # seat 1, left of the dealer, leads
        seat = seat_to_move(state)
        assert sevens.legal_actions(state, seat) == (card,)  # one legal action: the runner plays it
        assert sevens.information_state(state, seat).hand == ()
        state = sevens.apply(state, seat, card)
    assert sevens.information_state(state, 0).visible_cards == ()
    assert sevens.information_state(state, 1).visible_cards == ((0, "AS"),)
    state = act(state, "AS")
    assert state.events[1]["winner"] == 1  # the trump
    assert state.events[2]["points"] == [10, 0, 10, 10]


def test_r_4_4_a_blind_players_own_card_changes_nothing_it_is_shown() -> None:
    hands = ["AS", "KH", "2D", "3C"]
    first = deal(GAME.start(4, round_index=7), hands, "9H", dealer=2)
    for own in ("QD", "2S", "AH"):
        second = deal(GAME.start(4, round_index=7), [hands[0], own, *hands[2:]], "9H", dealer=2)
        assert sevens.information_state(first, 1) == sevens.information_state(second, 1)


def test_r_4_4_in_the_other_rounds_players_see_their_own_hand() -> None:
    state = deal(GAME.start(2, round_index=5), ["AS 2D", "KH 3C"], "9H", dealer=0)
    info = sevens.information_state(state, 1)
    assert info.hand == ("KH", "3C") and info.visible_cards == ()


# What a seat may know


def _swapped(outcome: dict[str, Any], seat: int, rng: random.Random, blind: bool) -> dict[str, Any]:
    """The same deal but for a card `seat` cannot see: another seat's card swapped with another
    hand's or an undealt card; in a blind round (R-4.4) its own card swapped with an undealt one."""
    hands = [list(hand) for hand in outcome["hands"]]
    hidden = [seat] if blind else [other for other in range(len(hands)) if other != seat]
    first = rng.choice(hidden)
    dealt = {card for hand in hands for card in hand}
    undealt = [c for c in DECK_52 if c not in dealt and c != outcome["trump_card"]]
    i = rng.randrange(len(hands[first]))
    if blind or len(hidden) == 1 or rng.random() < 0.5:
        hands[first][i] = rng.choice(undealt)
    else:
        second = rng.choice([other for other in hidden if other != first])
        j = rng.randrange(len(hands[second]))
        hands[first][i], hands[second][j] = hands[second][j], hands[first][i]
    return {**outcome, "hands": hands}


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.sampled_from([2, 3, 4, 5, 6, 7]))
def test_information_states_do_not_depend_on_cards_the_seat_cannot_see(seed: int, players: int) -> None:
    rng = random.Random(seed)
    round_index = rng.choice([*ONE_CARD_ROUNDS, rng.randrange(14)])
    state = GAME.start(players, round_index=round_index)
    outcome = sevens.sample_chance(state, rng)
    seat = rng.randrange(players)
    blind = round_index in ONE_CARD_ROUNDS
    first = sevens.apply(state, CHANCE, outcome)
    second = sevens.apply(state, CHANCE, _swapped(outcome, seat, rng, blind))
    compared = views_compared(first, second, seat, rng)
    assert compared >= players  # at least the whole bidding


# Whole games


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.sampled_from([2, 3, 4, 5, 6, 7]))
def test_random_games_keep_the_rules(seed: int, players: int) -> None:
    events, state = game_events(GAME, players, seed)
    rounds: list[list[dict[str, Any]]] = []
    for event in events:
        if event["type"] == "deal":
            rounds.append([])
        rounds[-1].append(event)
    assert len(rounds) == 14
    totals = [0] * players
    for index, (dealt, *rest) in enumerate(rounds):
        size = sevens.HAND_SIZES[index]
        assert dealt["round"] == index and dealt["hand_size"] == size
        dealer, hands = dealt["dealer"], dealt["hands"]
        assert dealt["trump_card"] not in {card for hand in hands for card in hand}
        plays = [e for e in rest if e["type"] == "play"]
        for seat in range(players):  # no card is created or lost
            assert sorted(e["card"] for e in plays if e["seat"] == seat) == sorted(hands[seat])
        bids = [e for e in rest if e["type"] == "bid"]
        assert [e["seat"] for e in bids] == [(dealer + 1 + i) % players for i in range(players)]
        tricks = [e for e in rest if e["type"] == "trick"]
        assert len(tricks) == size
        assert tricks[0]["plays"][0][0] == (dealer + 1) % players  # the dealer's left leads
        for before, after in itertools.pairwise(tricks):
            assert after["plays"][0][0] == before["winner"]
        (end,) = [e for e in rest if e["type"] == "round_end"]
        assert end["bids"] == [next(e["bid"] for e in bids if e["seat"] == s) for s in range(players)]
        assert sum(end["bids"]) != size
        won = [sum(1 for t in tricks if t["winner"] == seat) for seat in range(players)]
        assert end["tricks"] == won
        points = [
            (15 * bid if bid else 10) if bid == got else 0 for bid, got in zip(end["bids"], won, strict=True)
        ]
        assert end["points"] == points
        totals = [total + gain for total, gain in zip(totals, points, strict=True)]
        assert end["scores"] == totals
    assert sevens.result(state) == Result(tuple(totals), competition_ranks(totals))
    assert events[-1]["type"] == "game_end" and events[-1]["scores"] == totals


def test_the_same_seed_and_policy_give_the_same_game() -> None:
    assert game_events(GAME, 5, 7) == game_events(GAME, 5, 7)
    assert game_events(GAME, 5, 7)[0] != game_events(GAME, 5, 8)[0]


# The greedy policy


def _greedy(state: State, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
    action = sevens.greedy(sevens.information_state(state, seat), legal)
    assert action in legal
    return action


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.sampled_from([2, 3, 4, 5, 6, 7]))
def test_greedy_always_plays_a_legal_action(seed: int, players: int) -> None:
    game_events(GAME, players, seed, _greedy)


@pytest.mark.parametrize("players", [2, 4])
def test_greedy_beats_random_play_on_average(players: int) -> None:
    def mixed(state: State, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
        if seat == greedy_seat:
            return _greedy(state, seat, legal, rng)
        return legal[rng.randrange(len(legal))]

    greedy_ranks, random_ranks = [], []
    for game in range(200):
        greedy_seat = game % players
        _, state = game_events(GAME, players, game, mixed)
        result = sevens.result(state)
        assert result is not None and result.ranks is not None
        greedy_ranks.append(result.ranks[greedy_seat])
        random_ranks += [rank for seat, rank in enumerate(result.ranks) if seat != greedy_seat]
    assert sum(greedy_ranks) / len(greedy_ranks) < sum(random_ranks) / len(random_ranks) - 0.3


@pytest.mark.parametrize(
    ("dealer", "others", "chance", "bid"),
    [
        (1, "AH", 0.0, 0),  # the ace of trumps: nothing can beat it
        (1, "2S", 1.0, 1),  # leading against a low non-trump: always wins
        (0, "2S", 24 / 50, 0),  # following a led 2S: a higher spade or a trump wins, 24 of 50
    ],
)
def test_greedy_bids_a_blind_one_card_round_from_the_cards_it_sees(
    dealer: int, others: str, chance: float, bid: int
) -> None:
    state = deal(GAME.start(2, round_index=6), ["QC", others], "2H", dealer=dealer)
    if dealer == 0:
        state = act(state, 0)  # seat 1 bids first
    info = sevens.information_state(state, 0)
    assert info.hand == () and info.visible_cards == ((1, others),)
    assert sevens.blind_win_chance(info) == pytest.approx(chance)
    assert sevens.greedy(info, (0, 1)) == bid
