"""Oh 7? (RULES.md §1): every ruling and rulebook example, the trick rules as tables, and
property tests over random play of `oh7`, `oh7-advanced` and `oh7-duel`."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.games import oh7, oh7_dummy
from referee.engine.games.base import (
    CHANCE,
    Decision,
    DecisionKind,
    Event,
    GameError,
    Result,
    competition_ranks,
)
from referee.engine.playout import Step, playout, random_policy

OH7, ADVANCED, DUEL = oh7.GAMES
State = oh7.State


# Helpers: explicit deals and scripted actions


def deal(state: State, hands: list[str], rest: str | None = None) -> State:
    """Applies an explicit deal: one string of card codes per player, the discard or the pile."""
    outcome: dict[str, Any] = {"hands": [hand.split() for hand in hands]}
    if rest is not None:
        outcome["pile" if state.setup.dummy is not None else "discard"] = rest.split()
    return oh7.apply(state, CHANCE, outcome)


def bet(state: State, *cards: str) -> State:
    """Every player bets (seat order); each card must be a legal bet."""
    for seat, card in enumerate(cards):
        decision = oh7.to_move(state)
        assert decision is not None and decision.kind is DecisionKind.BET and seat in decision.seats
        assert card in oh7.legal_actions(state, seat), (seat, card)
        state = oh7.apply(state, seat, card)
    return state


def play(state: State, cards: str, events: list[Event] | None = None) -> State:
    """Plays `cards` in turn order, checking each is legal; collects the events if asked."""
    for card in cards.split():
        decision = oh7.to_move(state)
        assert decision is not None and decision.kind is DecisionKind.PLAY
        (seat,) = decision.seats
        assert card in oh7.legal_actions(state, seat), (seat, card, state.hands[seat])
        state = oh7.apply(state, seat, card)
        if events is not None:
            events.extend(state.events)
    return state


def of_type(events: list[Event] | tuple[Event, ...], kind: str) -> list[Event]:
    return [event for event in events if event["type"] == kind]


# Rulebook Examples 1 and 2 (RULES.md §1.3): Alice, Bob, Carole, David are seats 0-3.
EXAMPLE_HANDS = [
    "2C 3C 7S 7C 7D 0D 1D",  # Alice
    "3S 3H 5H 6H 7H 0C 1C",  # Bob
    "2S 2H 4S 5S 6S 4C 4D",  # Carole
    "0H 0S 1S 5C 6C 5D 6D",  # David
]
EXAMPLE_DISCARD = "1H 4H 2D 3D"
EXAMPLE_BETS = (("2C", "3S", "2S", "0H"), ("3C", "3H", "2H", "0S"))
EXAMPLE_TRICKS = [  # in playing order; Bob leads, Bob wins 4 trump tricks, Alice the last 3
    "7H 2H 0H 2C",
    "6H 4S 1S 3C",
    "5H 5S 5D 0D",
    "3H 6S 6D 1D",
    "3S 2S 0S 7S",
    "7C 0C 4C 5C",
    "7D 1C 4D 6C",
]


def example_round(state: State, rotation: int = 0, events: list[Event] | None = None) -> State:
    """Examples 1 and 2, with the roles moved `rotation` seats clockwise."""
    hands = [EXAMPLE_HANDS[(seat - rotation) % 4] for seat in range(4)]
    state = deal(state, hands, EXAMPLE_DISCARD)
    for attempt in EXAMPLE_BETS:
        state = bet(state, *(attempt[(seat - rotation) % 4] for seat in range(4)))
        if events is not None:
            events.extend(state.events)
    return play(state, " ".join(EXAMPLE_TRICKS), events)


def test_rulebook_example_1_bets_summing_to_7_are_made_again_and_bob_leads_with_hearts() -> None:
    state = deal(OH7.start(4), EXAMPLE_HANDS, EXAMPLE_DISCARD)
    state = bet(state, *EXAMPLE_BETS[0])
    assert of_type(state.events, "bets") == [
        {"type": "bets", "attempt": 0, "cards": ["2C", "3S", "2S", "0H"], "bets": [2, 3, 2, 0], "total": 7}
    ]
    assert oh7.to_move(state) == Decision(DecisionKind.BET, (0, 1, 2, 3))
    assert state.bets is None and state.attempt == 1
    state = bet(state, *EXAMPLE_BETS[1])
    assert state.bets == (3, 3, 2, 0)
    assert of_type(state.events, "leader") == [
        {"type": "leader", "seat": 1, "trump": "H", "bets": [3, 3, 2, 0]}
    ]
    assert state.first_leader == 1 and state.trump == "H"
    assert oh7.to_move(state) == Decision(DecisionKind.PLAY, (1,))


def test_rulebook_example_2_scores_basket_3_alice_11_bob_2_carole_1_david_8() -> None:
    events: list[Event] = []
    state = example_round(OH7.start(4), events=events)
    assert [event["winner"] for event in of_type(events, "trick")] == [1, 1, 1, 1, 0, 0, 0]
    (end,) = of_type(events, "round_end")
    assert end["bets"] == [3, 3, 2, 0] and end["tricks"] == [3, 4, 0, 0]
    assert end["points"] == [11, 2, 1, 8] and end["made"] == [True, False, False, True]
    assert state.scores == (11, 2, 1, 8) and state.bets_made == (1, 0, 0, 1)
    assert oh7.to_move(state) == oh7.DEAL_DECISION and state.round_index == 1


def test_rulebook_example_2_points_from_bets_and_tricks() -> None:
    assert oh7.round_points((3, 3, 2, 0), (3, 4, 0, 0), ["3C", "3H", "2H", "0S"]) == [11, 2, 1, 8]


def test_a_made_bet_with_the_naught_card_does_not_get_the_2_points() -> None:
    assert oh7.round_points((0, 3, 2), (0, 4, 3), ["N", "3S", "2H"]) == [4, 1, 1]
    assert oh7.round_points((0, 3, 2), (0, 4, 3), ["0S", "3S", "2H"]) == [6, 1, 1]


def test_a_lone_failed_bet_scores_nothing() -> None:
    assert oh7.round_points((2, 1, 3), (3, 1, 3), ["2S", "1S", "3H"]) == [0, 5, 7]


# 1.1 Game ids, players, decks


@pytest.mark.parametrize(
    ("game", "players", "size", "suits"),
    [
        (OH7, 3, 24, "SHC"),
        (OH7, 4, 32, "SHCD"),
        (OH7, 5, 40, "SHCDF"),
        (ADVANCED, 3, 23, "SH"),
        (ADVANCED, 4, 31, "SHC"),
        (ADVANCED, 6, 47, "SHCDF"),
        (DUEL, 2, 24, "SHC"),
    ],
)
def test_deck_holds_values_0_to_7_of_the_first_suits_and_the_specials(
    game: Any, players: int, size: int, suits: str
) -> None:
    cards = oh7.deck(game.id, players)
    assert len(cards) == size
    assert {card[1] for card in cards if card not in oh7.SPECIAL} == set(suits)
    if game is ADVANCED:
        assert Counter(card for card in cards if card in oh7.SPECIAL) == Counter(oh7.SPECIALS)
        assert cards.count("N") == 2


def test_game_ids_players_options_and_the_dummy_seat() -> None:
    assert [(g.id, g.players) for g in oh7.GAMES] == [
        ("oh7", range(3, 6)),
        ("oh7-advanced", range(3, 7)),
        ("oh7-duel", range(2, 3)),
    ]
    assert all(g.options["target"].allowed == (21, 35, 49) for g in oh7.GAMES)
    assert DUEL.dummy_seats == (2,) and DUEL.seat_count(2) == 3
    assert "R-1.7" in OH7.rules and "Dummy" in DUEL.rules
    with pytest.raises(GameError, match="3-5 players"):
        OH7.start(6)
    with pytest.raises(GameError, match="target"):
        OH7.start(3, {"target": 30})
    assert ADVANCED.start(6, {"target": 21}).setup.target == 21


# 2. Bets


def test_bets_are_simultaneous_and_a_pending_bet_is_hidden_from_the_others() -> None:
    state = deal(OH7.start(4), EXAMPLE_HANDS, EXAMPLE_DISCARD)
    before = [oh7.information_state(state, seat) for seat in range(4)]
    state = oh7.apply(state, 2, "2S")
    assert oh7.to_move(state) == Decision(DecisionKind.BET, (0, 1, 3))
    assert oh7.legal_actions(state, 2) == ()
    assert [oh7.information_state(state, seat) for seat in (0, 1, 3)] == [before[0], before[1], before[3]]
    assert state.events == ()


def test_r_1_1_bet_cards_stay_in_the_hand_are_played_and_are_public_for_the_round() -> None:
    state = deal(OH7.start(4), EXAMPLE_HANDS, EXAMPLE_DISCARD)
    state = bet(state, *EXAMPLE_BETS[0])
    state = bet(state, *EXAMPLE_BETS[1])
    info = oh7.information_state(state, 3)
    assert info.bet_cards == (("2C", "3C"), ("3S", "3H"), ("2S", "2H"), ("0H", "0S"))
    assert info.bets == (3, 3, 2, 0) and info.first_leader == 1 and info.trump == "H"
    assert "0H" in info.hand and "0S" in info.hand and len(info.hand) == 7
    state = play(state, "7H 2H 0H")  # Carole and David play their bet cards
    assert oh7.information_state(state, 0).trick == ((1, "7H"), (2, "2H"), (3, "0H"))


def test_re_bets_use_a_card_not_yet_bet_with_a_second_naught_is_another_card() -> None:
    hands = ["N N ? 0S 1S 2S 3S", "4S 5S 6S 7S 1* 2* 3*", "0H 1H 2H 3H 4H 5H 6H"]
    state = deal(ADVANCED.start(3), hands, "7H 4*")
    assert oh7.legal_actions(state, 0) == ("0S", "1S", "2S", "3S", "N")  # `?` never bets
    state = bet(state, "N", "4S", "3H")
    assert state.attempt == 1
    assert oh7.legal_actions(state, 0) == ("0S", "1S", "2S", "3S", "N")
    assert "4S" not in oh7.legal_actions(state, 1) and "3H" not in oh7.legal_actions(state, 2)
    state = bet(state, "N", "5S", "2H")
    assert state.attempt == 2
    assert oh7.legal_actions(state, 0) == ("0S", "1S", "2S", "3S")
    assert oh7.information_state(state, 1).bet_cards == (("N", "N"), ("4S", "5S"), ("3H", "2H"))
    state = bet(state, "0S", "6S", "0H")
    assert state.bets == (0, 6, 0) and state.first_leader == 1 and state.trump == "S"


# Three attempts that all sum to 7, for R-1.2 (3 players, base game).
REDEAL_HANDS = ["3S 4S 5S 6S 7S 0S 1S", "1H 2H 3H 4H 5H 6H 7H", "0C 1C 2C 3C 4C 5C 6C"]
REDEAL_BETS = (("3S", "2H", "2C"), ("4S", "3H", "0C"), ("5S", "1H", "1C"))


def _redeal(state: State) -> State:
    state = deal(state, REDEAL_HANDS, "2S 0H 7C")
    for attempt in REDEAL_BETS:
        state = bet(state, *attempt)
    return state


def test_a_third_sum_of_7_redeals_the_same_round() -> None:
    state = _redeal(OH7.start(3, scores=(5, 6, 7), round_index=4))
    assert of_type(state.events, "redeal") == [{"type": "redeal", "round": 4, "redeals": 1}]
    assert oh7.to_move(state) == oh7.DEAL_DECISION
    assert state.round_index == 4 and state.scores == (5, 6, 7) and state.redeals == 1
    state = oh7.apply(state, CHANCE, oh7.sample_chance(state, random.Random(3)))
    assert state.events[0]["redeals"] == 1 and state.attempt == 0 and state.bet_cards == ((), (), ())


def test_r_1_2_the_11th_redeal_in_a_row_aborts_the_game() -> None:
    state = OH7.start(3, scores=(5, 6, 7))
    for _ in range(10):
        state = _redeal(state)
        assert oh7.to_move(state) == oh7.DEAL_DECISION
    assert oh7.result(state) is None
    state = _redeal(state)
    assert oh7.to_move(state) is None
    assert oh7.result(state) == Result((5, 6, 7), None, True, "11 redeals in a row (R-1.2)")
    assert of_type(state.events, "game_end") == [
        {"type": "game_end", "scores": [5, 6, 7], "ranks": None, "aborted": True}
    ]


def test_r_1_13_the_redeal_count_restarts_with_each_round() -> None:
    state = _redeal(_redeal(OH7.start(3)))
    assert state.redeals == 2
    state = oh7.apply(state, CHANCE, oh7.sample_chance(state, random.Random(11)))
    while state.round_index == 0 and (decision := oh7.to_move(state)) is not None:
        for seat in decision.seats:
            state = oh7.apply(state, seat, oh7.legal_actions(state, seat)[0])
    assert state.round_index == 1 and state.redeals == 0


# 3. First leader and trump

INTERROBANG_HANDS = ["3H ? 0S 1S 2S 1* 2*", "3S 4S 5S 6S 7S 3* 4*", "0H 1H 2H 4H 5H 6H N"]


def test_r_1_4_a_tied_top_bettor_holding_the_interrobang_is_asked_and_revealing_wins() -> None:
    state = bet(deal(ADVANCED.start(3), INTERROBANG_HANDS, "7H N"), "3H", "3S", "0H")
    assert oh7.to_move(state) == Decision(DecisionKind.REVEAL, (0,))
    assert oh7.legal_actions(state, 0) == (False, True)
    assert oh7.legal_actions(state, 1) == ()
    revealed = oh7.apply(state, 0, True)
    assert revealed.events[0] == {"type": "reveal", "seat": 0}
    assert revealed.first_leader == 0 and revealed.trump == "H"
    assert oh7.information_state(revealed, 2).revealer == 0
    assert oh7.to_move(revealed) == Decision(DecisionKind.PLAY, (0,))


def test_r_1_4_while_the_holder_is_asked_the_other_seats_see_the_betting_as_before_the_last_bet() -> None:
    """A "reveal" phase with no leader would tell every other seat that a tied top bettor holds
    the `?`: during the question their information states equal those before the last bet."""
    before_last = bet(deal(ADVANCED.start(3), INTERROBANG_HANDS, "7H N"), "3H", "3S")
    state = oh7.apply(before_last, 2, "0H")
    assert oh7.to_move(state) == Decision(DecisionKind.REVEAL, (0,))
    for seat in (1, 2):
        assert oh7.information_state(state, seat) == oh7.information_state(before_last, seat)
    asked = oh7.information_state(state, 0)
    assert asked.phase == oh7.Phase.REVEAL and asked.bets == (3, 3, 0), "the holder sees its question"


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_r_1_4_no_seat_but_the_holder_can_tell_a_question_is_asked_over_many_seeds(players: int) -> None:
    """Every Interrobang question of 150 random games per table size: each seat not asked sees
    the same information state during the question as just before it."""
    questions = 0
    for seed in range(150):
        rng = random.Random(seed)
        state = ADVANCED.start(players)
        for step in playout(ADVANCED, state, rng):
            decision = oh7.to_move(step.state)
            if decision is not None and decision.kind == DecisionKind.REVEAL:
                questions += 1
                for seat in range(players):
                    if seat not in decision.seats:
                        during = oh7.information_state(step.state, seat)
                        assert during == oh7.information_state(state, seat), (players, seed, seat)
            state = step.state
    assert questions > 0, "the seeds must include Interrobang questions"


def test_r_1_4_declining_the_interrobang_leaves_the_tie_to_suit_priority() -> None:
    state = bet(deal(ADVANCED.start(3), INTERROBANG_HANDS, "7H N"), "3H", "3S", "0H")
    declined = oh7.apply(state, 0, False)
    assert of_type(declined.events, "reveal") == []
    assert declined.first_leader == 1 and declined.trump == "S"
    assert oh7.information_state(declined, 2).revealer is None


def test_r_1_12_no_interrobang_question_when_its_holder_wins_the_tie_anyway() -> None:
    hands = ["3S ? 0S 1S 2S 1* 2*", "3H 4S 5S 6S 7S 3* 4*", INTERROBANG_HANDS[2]]
    state = bet(deal(ADVANCED.start(3), hands, "7H N"), "3S", "3H", "0H")
    assert state.first_leader == 0 and state.trump == "S"
    assert oh7.to_move(state) == Decision(DecisionKind.PLAY, (0,))


def test_r_1_12_no_interrobang_question_when_its_holder_is_not_tied_on_top() -> None:
    state = bet(deal(ADVANCED.start(3), INTERROBANG_HANDS, "7H N"), "2S", "3S", "0H")
    assert state.first_leader == 1 and state.phase == oh7.Phase.PLAY


NAUGHT_HANDS = ["N 1H 2H 3H 4H 5H 6H", "N 0H 7H 1S 2S 3S 4S", "0S 5S 6S 7S 1* 2* 3*"]


def test_r_1_3_naught_loses_every_suit_tie_break() -> None:
    state = bet(deal(ADVANCED.start(3), NAUGHT_HANDS, "4* ?"), "N", "N", "0S")
    assert state.first_leader == 2 and state.trump == "S"


def test_r_1_3_among_naughts_only_the_lowest_seat_wins_and_r_1_6_naught_gives_no_trump() -> None:
    state = bet(deal(ADVANCED.start(3), NAUGHT_HANDS, "4* ?"), "N", "N", "1*")
    assert state.first_leader == 0 and state.trump is None
    assert of_type(state.events, "leader")[0]["trump"] is None


STAR_HANDS = ["1* 0S 1S 2S 3S 4S 5S", "3* 6S 7S 0H 1H 2H 3H", "4* 4H 5H 6H 7H N ?"]


def test_star_bets_cannot_make_the_first_leader() -> None:
    state = bet(deal(ADVANCED.start(3), STAR_HANDS, "2* N"), "2S", "0H", "4*")
    assert state.bets == (2, 0, 4) and state.first_leader == 0 and state.trump == "S"


def test_r_1_5_when_every_bet_is_a_star_the_highest_star_leads_with_no_trump() -> None:
    state = bet(deal(ADVANCED.start(3), STAR_HANDS, "2* N"), "1*", "3*", "4*")
    assert state.first_leader == 2 and state.trump is None
    assert oh7.to_move(state) == Decision(DecisionKind.PLAY, (2,))


# 4. Tricks: follow suit and the winner, as tables


@pytest.mark.parametrize(
    ("hand", "trick", "legal"),
    [
        ("1S 5S 2H", "", "1S 5S 2H"),
        ("1S 5S 2H", "3S", "1S 5S"),
        ("1S 5S 2H 3*", "3S", "1S 5S 3*"),  # specials are always playable
        ("1S 2H N ?", "0S", "1S N ?"),
        ("2H 0C N", "3S", "2H 0C N"),  # no lead-suit card: any card
        ("3* 2H", "3S", "3* 2H"),  # a star is not a card of the lead suit
        ("1S 2H", "?", "1S 2H"),  # a special lead makes no lead suit
        ("1S 2H 4*", "? 2H", "2H 4*"),  # the next card made hearts the lead suit
        ("1S 2H", "N 1* 0S", "1S"),
        ("1S N N", "5S", "1S N"),  # two N are one action
        ("2H N N", "5S", "2H N"),
    ],
)
def test_follow_suit_table(hand: str, trick: str, legal: str) -> None:
    assert oh7.playable(tuple(hand.split()), oh7.lead_suit_of(trick.split())) == tuple(legal.split())


@pytest.mark.parametrize(
    ("trick", "trump", "winner"),
    [
        ("3S 5S 1S", "H", 1),  # rule 3: the highest lead-suit card
        ("7C 0D 6C 5C", "D", 1),  # rule 1: a trump
        ("3S 0H 2H", "H", 2),  # rule 1: the highest trump
        ("3S ? 7S", "H", 1),  # rule 2: `?` beats every non-trump card
        ("3S ? 0H", "H", 2),  # rule 1 before rule 2: a trump beats `?`
        ("2S ? 7C", None, 1),
        ("2* 2S 1S", None, 1),  # a star loses to the real lead-suit card of its value
        ("2* 1S 0S", "H", 0),  # ... and beats a lower one
        ("N 0S 1*", None, 2),  # a star counts as a lead-suit card of its value
        ("N 3* 1*", "S", 1),  # rule 4: only specials, the highest star
        ("N ? 4*", "S", 1),  # rule 4: `?` first
        ("N N 0S", "S", 2),  # `N` never wins
        ("1S 5C 0S", None, 0),  # an off-suit card never wins
        ("3S 4* 1S", "H", 1),  # lead suit is not trump: stars count in the lead suit
        ("3S 4* 0H", "H", 2),  # ... and a real trump beats them
    ],
)
def test_trick_winner_table(trick: str, trump: str | None, winner: int) -> None:
    cards = trick.split()
    assert oh7.trick_winner(cards, trump, oh7.lead_suit_of(cards)) == winner


@pytest.mark.parametrize(
    ("trick", "trump", "winner"),
    [
        ("3H 4* 2S", "H", 1),  # trump led: 4* is a trump of value 4 above 3H
        ("4* 4H 2S", "H", 1),  # ... still below the real trump of the same value
        ("3H ? 4*", "H", 2),  # ... so it beats `?` like any trump
        ("2S 3H 4*", "H", 1),  # spades led: 4* is a spade, the real trump 3H wins
    ],
)
def test_r_1_7_stars_count_as_trump_when_trump_is_led(trick: str, trump: str, winner: int) -> None:
    cards = trick.split()
    assert oh7.trick_winner(cards, trump, oh7.lead_suit_of(cards)) == winner


def test_naught_never_wins_a_trick_in_play() -> None:
    hands = ["N 1H 2H 3H 4H 5H 6H", "N 0H 7H 1S 2S 3S 4S", "0S 5S 6S 7S 1* 2* 3*"]
    state = bet(deal(ADVANCED.start(3), hands, "4* ?"), "1H", "0H", "0S")
    assert state.first_leader == 0 and state.trump == "H"
    state = play(state, "N N 1*")  # only specials: the star wins
    assert state.trick_winners == (2,)


# 5. Score and 6. End of game


def test_one_candidate_wins_even_below_a_player_who_missed_the_bet() -> None:
    state = example_round(OH7.start(4, scores=(30, 40, 0, 0)))
    assert oh7.result(state) == Result((41, 42, 1, 8), (1, 2, 4, 3), False, "")
    assert of_type(state.events, "game_end") == [
        {"type": "game_end", "scores": [41, 42, 1, 8], "ranks": [1, 2, 4, 3], "aborted": False}
    ]


def test_several_candidates_the_most_points_wins_when_bets_made_are_equal() -> None:
    state = example_round(OH7.start(4, scores=(30, 0, 0, 30)))
    assert oh7.result(state) == Result((41, 2, 1, 38), (1, 3, 4, 2), False, "")


def test_several_candidates_still_tied_share_the_victory() -> None:
    state = example_round(OH7.start(4, scores=(30, 0, 0, 33)))
    assert oh7.result(state) == Result((41, 2, 1, 41), (1, 3, 4, 1), False, "")


def test_several_candidates_the_most_bets_made_wins_before_points() -> None:
    state = example_round(OH7.start(4, scores=(20, 30, 0, 0)))
    assert state.scores == (31, 32, 1, 8) and oh7.result(state) is None  # 31 < 35: no candidate
    state = example_round(state, rotation=1)
    assert state.bets_made == (2, 1, 0, 1)
    assert oh7.result(state) == Result((39, 43, 3, 9), (1, 2, 4, 3), False, "")


def test_the_others_rank_by_points_then_bets_made() -> None:
    state = example_round(OH7.start(4, scores=(30, 7, 0, 1)))
    assert state.scores == (41, 9, 1, 9) and state.bets_made == (1, 0, 0, 1)
    assert oh7.result(state) == Result((41, 9, 1, 9), (1, 3, 4, 2), False, "")


def test_r_1_8_a_game_with_no_winner_after_200_rounds_is_aborted() -> None:
    # 3 players at 0 points cannot reach 49 in one round (at most 2 x 14 + 2 + 7 = 37 points).
    state = OH7.start(3, {"target": 49}, round_index=199)
    steps = list(playout(OH7, state, random.Random(8)))
    result = oh7.result(steps[-1].state)
    assert result is not None and result.aborted and result.ranks is None
    assert result.reason == "no winner after 200 rounds (R-1.8)"
    assert len([s for s in steps if s.seat == CHANCE]) == 1 + steps[-1].state.redeals


# 1.4 The Dummy


# Pile top first. Seat 0 bets 3S (trump spades, leads), seat 1 bets 0H.
DUMMY_WIN_HANDS = ["3S 1H 3H 5H 1C 2C 3C", "0S 0H 2H 7H 4C 5C 6C"]
DUMMY_WIN_PILE = "4H 6H 0C 7C 1S 2S 4S 5S 6S 7S"


def test_dummy_bets_2_and_the_players_bet_again_when_their_bets_plus_2_make_7() -> None:
    state = deal(
        DUEL.start(2), ["2S 5C 1S 1H 2H 3H 2C", "0S 0H 4H 5H 1C 3C 4C"], "7H 0C 3S 4S 5S 6S 7S 6H 6C 7C"
    )
    assert oh7.to_move(state) == Decision(DecisionKind.BET, (0, 1))
    state = bet(state, "2S", "3C")
    assert of_type(state.events, "bets")[0]["bets"] == [2, 3, 2] and state.attempt == 1
    state = bet(state, "1S", "0H")
    assert state.bets == (1, 0, 2)
    assert state.first_leader == 0 and state.trump == "S"  # the Dummy's 2 never leads


def test_dummy_turns_2_pile_cards_up_after_the_bets_and_they_are_public() -> None:
    state = bet(deal(DUEL.start(2), DUMMY_WIN_HANDS, DUMMY_WIN_PILE), "3S", "0H")
    assert of_type(state.events, "leader")[0]["dummy_up"] == ["4H", "6H"]
    info = oh7.information_state(state, 1)
    assert info.dummy_up == ("4H", "6H") and info.dummy == 2 and info.bets == (3, 0, 2)


def test_dummy_playing_last_with_no_trick_won_plays_its_lowest_winning_card_then_leads_its_pile() -> None:
    state = bet(deal(DUEL.start(2), DUMMY_WIN_HANDS, DUMMY_WIN_PILE), "3S", "0H")
    events: list[Event] = []
    state = play(state, "1H 2H", events)
    plays = of_type(events, "play")
    assert plays[2] == {"type": "play", "seat": 2, "card": "4H", "turned": "0C"}
    assert of_type(events, "trick")[0] == {
        "type": "trick",
        "winner": 2,
        "plays": [[0, "1H"], [1, "2H"], [2, "4H"]],
    }
    # It won: it leads the top card of its pile, its face-up cards stay, the first leader follows.
    assert plays[3] == {"type": "play", "seat": 2, "card": "7C", "from_pile": True}
    assert state.dummy_up == ("6H", "0C") and state.trick == ((2, "7C"),)
    assert oh7.to_move(state) == Decision(DecisionKind.PLAY, (0,))
    state = play(state, "1C 4C")
    assert state.trick_winners == (2, 2) and state.tricks_won == (0, 0, 2)
    assert state.trick == ((2, "1S"),) and oh7.to_move(state) == Decision(DecisionKind.PLAY, (0,))


def test_r_1_9_the_dummy_follows_suit_like_any_player() -> None:
    hands = ["2S 5C 1S 1H 2H 3H 2C", "0S 0H 4H 5H 1C 3C 4C"]
    state = bet(deal(DUEL.start(2), hands, "7H 0C 3S 4S 5S 6S 7S 6H 6C 7C"), "2S", "0H")
    events: list[Event] = []
    state = play(state, "5C 1C", events)
    # It wants a trick and its turned-up 3S (trump) would win, but it holds a club.
    assert of_type(events, "play")[2] == {"type": "play", "seat": 2, "card": "0C", "turned": "3S"}
    assert state.trick_winners == (0,) and state.dummy_up == ("7H", "3S")


def test_r_1_10_the_dummy_orders_its_cards_trump_last_so_its_lowest_card_is_a_plain_one() -> None:
    hands = ["4S 5C 0C 1C 2C 3C 4C", "3S 0H 1H 2H 3H 4H 5H"]
    state = bet(deal(DUEL.start(2), hands, "6H 2S 7H 0S 1S 5S 6S 7S 6C 7C"), "4S", "0H")
    events: list[Event] = []
    state = play(state, "5C 3S", events)
    # No card of its three wins (2S < 3S): it plays its lowest, 6H, not the lower-valued trump 2S.
    assert of_type(events, "play")[2] == {"type": "play", "seat": 2, "card": "6H", "turned": "7H"}
    assert state.trick_winners == (1,)


@pytest.mark.parametrize(
    ("candidates", "wins", "trump", "won", "card"),
    [
        ("2H 5H 7H", "5H 7H", "S", 0, "5H"),  # wants to win, none won yet: the lowest winner
        ("2H 5H 7H", "5H 7H", "S", 1, "7H"),  # one won: the highest winner
        ("2H 5H 7H", "", "S", 1, "2H"),  # cannot win: the lowest card
        ("2H 5H 7H", "7H", "S", 2, "5H"),  # wants to lose: the highest loser
        ("2H 5H 7H", "2H 5H 7H", "S", 3, "7H"),  # cannot lose: the highest card
        ("2S 6H 7H", "", "S", 0, "6H"),  # trump counts above any plain value
        ("2S 6H 7H", "", "S", 2, "2S"),
        ("5H 5C 1C", "", "S", 0, "1C"),
        ("5H 5C 0S", "5H 5C 0S", "S", 0, "5C"),  # same value, the lower suit first
        ("5H 5C 0S", "5H 5C 0S", "S", 1, "0S"),
        ("5H 5C", "", None, 2, "5H"),
    ],
)
def test_dummy_choice_table(candidates: str, wins: str, trump: str | None, won: int, card: str) -> None:
    assert oh7_dummy.choose(candidates.split(), wins.split(), trump, won) == card


def test_dummy_trick_order() -> None:
    assert oh7_dummy.trick_order(0, 1) == (0, 1, 2)
    assert oh7_dummy.trick_order(1, 0) == (1, 0, 2)
    assert oh7_dummy.trick_order(2, 1) == (2, 1, 0)
    assert oh7_dummy.trick_order(2, 0) == (2, 0, 1)


def test_r_1_11_the_dummys_loss_counts_in_the_basket() -> None:
    seen = 0
    for seed in range(40):
        for step in playout(DUEL, DUEL.start(2), random.Random(seed), _greedy_policy(DUEL)):
            for end in of_type(step.state.events, "round_end"):
                dummy_loss = abs(2 - end["tricks"][2])
                if all(end["made"]) and dummy_loss:
                    seen += 1
                    tricks = end["tricks"][:2]
                    assert end["points"] == [2 * dummy_loss + 2 + won for won in tricks]
    assert seen > 0


def test_the_dummy_has_no_score_and_no_rank() -> None:
    steps = list(playout(DUEL, DUEL.start(2), random.Random(4)))
    result = oh7.result(steps[-1].state)
    assert result is not None and len(result.scores) == 2
    assert result.ranks is None or len(result.ranks) == 2


# Information states (RULES.md §5)


def _infos_along(state: State, script: list[tuple[int, Any]], seats: tuple[int, ...]) -> list[Any]:
    """Applies (seat, action) pairs; the information states of `seats` whenever they are asked,
    then once more each at the end."""
    infos = []
    for seat, action in script:
        decision = oh7.to_move(state)
        assert decision is not None and seat in decision.seats
        if seat in seats:
            infos.append(oh7.information_state(state, seat))
        state = oh7.apply(state, seat, action)
    return infos + [oh7.information_state(state, seat) for seat in seats]


def _example_script(tricks: int) -> list[tuple[int, Any]]:
    script: list[tuple[int, Any]] = [
        (seat, card) for attempt in EXAMPLE_BETS for seat, card in enumerate(attempt)
    ]
    leaders = [1, 1, 1, 1, 1, 0, 0]
    for number, trick in enumerate(EXAMPLE_TRICKS[:tricks]):
        script += [((leaders[number] + i) % 4, card) for i, card in enumerate(trick.split())]
    return script


def test_information_states_do_not_show_other_hands_or_the_discard() -> None:
    # Carole and David swap 4C and 6C; Carole's 4D and the discarded 3D swap: none is played yet.
    swapped = ["2C 3C 7S 7C 7D 0D 1D", "3S 3H 5H 6H 7H 0C 1C", "2S 2H 4S 5S 6S 6C 3D", "0H 0S 1S 5C 4C 5D 6D"]
    first = deal(OH7.start(4), EXAMPLE_HANDS, EXAMPLE_DISCARD)
    second = deal(OH7.start(4), swapped, "1H 4H 2D 4D")
    script = _example_script(tricks=5)
    infos = _infos_along(first, script, (0, 1))
    assert infos == _infos_along(second, script, (0, 1)) and len(infos) == 16
    assert infos[-1].trick_winners == (1, 1, 1, 1, 0)
    assert infos[-2].hand == ("7C", "7D") and all(not hasattr(info, "hands") for info in infos)


def test_information_states_do_not_show_the_dummys_pile() -> None:
    hands = ["2S 5C 1S 1H 2H 3H 2C", "0S 0H 4H 5H 1C 3C 4C"]
    first = deal(DUEL.start(2), hands, "7H 0C 3S 4S 5S 6S 7S 6H 6C 7C")
    # Deeper pile cards change order, and seat 1's unplayed 5H changes place with the pile's 6H.
    second = deal(DUEL.start(2), [hands[0], "0S 0H 4H 6H 1C 3C 4C"], "7H 0C 3S 4S 5S 6S 7S 5H 7C 6C")
    script: list[tuple[int, Any]] = [(0, "2S"), (1, "0H"), (0, "5C"), (1, "1C"), (0, "1H"), (1, "0H")]
    assert _infos_along(first, script, (0,)) == _infos_along(second, script, (0,))


def test_information_states_do_not_show_who_holds_the_interrobang() -> None:
    hands = ["3H 0S 1S 2S 1* 2* 3*", "3S 4S 5S 6S 7S ? 4*", "0H 1H 2H 4H 5H 6H N"]
    moved = ["3H 0S 1S 2S 1* 2* 3*", "3S 4S 5S 6S 7S N 4*", "0H 1H 2H 4H 5H 6H ?"]
    script: list[tuple[int, Any]] = [(0, "2S"), (1, "3S"), (2, "0H"), (1, "3S"), (2, "0H"), (0, "0S")]
    first = deal(ADVANCED.start(3), hands, "7H N")
    second = deal(ADVANCED.start(3), moved, "7H N")
    assert _infos_along(first, script, (0,)) == _infos_along(second, script, (0,))


@pytest.mark.parametrize("seed", range(6))
def test_information_states_are_equal_for_deals_differing_in_unseen_cards(seed: int) -> None:
    game = (OH7, ADVANCED, DUEL)[seed % 3]
    players = game.players.start + seed % len(game.players)
    state = game.start(players)
    outcome = oh7.sample_chance(state, random.Random(seed))
    hands = outcome["hands"]
    # Seat 0 looks; the last seat and the undealt cards trade a card neither bets with.
    rest_key = "pile" if game is DUEL else "discard"
    other = [card for card in hands[-1] if card != "?"]
    moved = dict(outcome, hands=[list(h) for h in hands], **{rest_key: list(outcome[rest_key])})
    keep = other[0]
    where = max(i for i, card in enumerate(moved[rest_key]) if card != "?")
    moved["hands"][-1][moved["hands"][-1].index(keep)] = moved[rest_key][where]
    moved[rest_key][where] = keep
    first = oh7.apply(state, CHANCE, outcome)
    second = oh7.apply(state, CHANCE, moved)
    bets = [hand[-1] if hand[-1] != "?" else hand[-2] for hand in hands]
    bets[-1] = other[-1]
    assert oh7.information_state(first, 0) == oh7.information_state(second, 0)
    for seat, card in enumerate(bets):
        first, second = oh7.apply(first, seat, card), oh7.apply(second, seat, card)
    assert oh7.information_state(first, 0) == oh7.information_state(second, 0)


# Bad input


def _hands(hands: list[str], last: str | None = None, size: int = 7) -> list[list[str]]:
    """`hands` as lists, the last card of seat 0 replaced by `last`, seat 0 cut to `size`."""
    lists = [hand.split() for hand in hands]
    if last is not None:
        lists[0][-1] = last
    lists[0] = lists[0][:size]
    return lists


@pytest.mark.parametrize(
    ("game", "outcome", "message"),
    [
        (OH7, {"hand": []}, "expected"),
        (OH7, {"hands": [["0S"] * 7] * 2}, "2 hands given for 3 players"),
        (OH7, {"hands": _hands(REDEAL_HANDS, size=6)}, "seat 0's hand has 6 cards, expected 7"),
        (OH7, {"hands": _hands(REDEAL_HANDS, "0F")}, "'0F' is not a card of this deck"),
        (OH7, {"hands": _hands(REDEAL_HANDS, "ZZ")}, "'ZZ' is not a card of this deck"),
        (OH7, {"hands": _hands(REDEAL_HANDS, "1H")}, "'1H' is dealt more often than the deck holds it"),
        (OH7, {"hands": _hands(REDEAL_HANDS), "discard": ["2S"]}, "'discard' has 1 cards, expected 3"),
        (OH7, {"hands": _hands(REDEAL_HANDS), "discard": ["2S", "0H", "3S"]}, "'3S' is dealt more often"),
        (DUEL, {"hands": _hands(DUMMY_WIN_HANDS)}, "the Dummy's 'pile' of 10 cards is missing"),
        (DUEL, {"hands": _hands(DUMMY_WIN_HANDS), "pile": DUMMY_WIN_PILE.split()[:9]}, "'pile' has 9 cards"),
        (ADVANCED, {"hands": _hands(NAUGHT_HANDS, "N")}, "'N' is dealt more often"),
    ],
)
def test_malformed_deals_raise_a_clear_game_error(game: Any, outcome: dict[str, Any], message: str) -> None:
    with pytest.raises(GameError, match=message):
        oh7.apply(game.start(game.players.start), CHANCE, outcome)


def test_scores_must_be_one_per_player() -> None:
    with pytest.raises(GameError, match="2 scores given for 3 players"):
        OH7.start(3, scores=(1, 2))


# Property tests over random play


def _greedy_policy(game: Any) -> Any:
    def policy(state: Any, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
        action = game.greedy(game.information_state(state, seat), legal)
        assert action in legal
        return action

    return policy


def _expected_ranks(scores: list[int], made_total: list[int], last: Event, target: int) -> tuple[int, ...]:
    players = range(len(scores))
    candidates = [p for p in players if last["made"][p] and scores[p] >= target]
    best = max((made_total[p], scores[p]) for p in candidates)
    winners = {p for p in candidates if (made_total[p], scores[p]) == best}
    return competition_ranks([(1, 0, 0) if p in winners else (0, scores[p], made_total[p]) for p in players])


def check_playthrough(game: Any, players: int, steps: list[Step]) -> None:
    """Every invariant of a finished game, recomputed from its events."""
    deck = Counter(oh7.deck(game.id, players))
    duel = game is DUEL
    scores, made_total = [0] * players, [0] * players
    hands: list[list[str]] = []
    played: Counter[str] = Counter()
    tricks = 0
    bet_cards: list[list[str]] = []
    last_end: Event | None = None
    for step in steps:
        state = step.state
        if state.phase in (oh7.Phase.BET, oh7.Phase.REVEAL, oh7.Phase.PLAY):
            on_table = Counter(c for hand in state.hands for c in hand) + Counter(state.dummy_up)
            on_table += Counter(state.pile) + Counter(c for _, c in state.trick)
            on_table += Counter(c for trick in state.tricks for _, c in trick)
            assert on_table == deck, "no card is created or lost"
        for event in state.events:
            kind = event["type"]
            if kind == "deal":
                hands, played, tricks = event["hands"], Counter(), 0
                bet_cards = [[] for _ in range(players)]
            elif kind == "bets":
                for seat, card in enumerate(event["cards"]):
                    bet_cards[seat].append(card)
                    assert card != "?" and bet_cards[seat].count(card) <= hands[seat].count(card)
                assert event["total"] == sum(event["bets"]) and len(event["bets"]) == players + duel
            elif kind == "leader":
                assert sum(event["bets"]) != 7, "bets never total 7 when tricks start"
                assert event["seat"] < players
                card = bet_cards[event["seat"]][-1]
                assert event["trump"] == (None if card in oh7.SPECIAL else card[1])
            elif kind == "play":
                if event["seat"] < players:
                    played[event["card"]] += 1
            elif kind == "trick":
                tricks += 1
                winning = {seat: card for seat, card in event["plays"]}[event["winner"]]
                assert winning != "N"
            elif kind == "round_end":
                assert tricks == 7 and sum(event["tricks"]) == 7
                assert played == Counter(c for hand in hands for c in hand), "players play their full hands"
                losses = [abs(b - t) for b, t in zip(event["bets"], event["tricks"], strict=True)]
                basket = sum(losses)
                expected = [
                    2 * basket + (2 if card != "N" else 0) + event["tricks"][p]
                    if losses[p] == 0
                    else basket - losses[p]
                    for p, card in enumerate(event["bet_cards"])
                ]
                assert event["points"] == expected
                assert event["bet_cards"] == [cards[-1] for cards in bet_cards]
                scores = [s + p for s, p in zip(scores, expected, strict=True)]
                made_total = [m + (loss == 0) for m, loss in zip(made_total, losses, strict=False)]
                assert event["scores"] == scores
                last_end = event
    result = game.result(steps[-1].state)
    assert isinstance(result, Result) and list(result.scores) == scores
    if result.aborted:
        assert result.ranks is None
    else:
        assert last_end is not None
        assert result.ranks == _expected_ranks(scores, made_total, last_end, 35)


GAME_SIZES = [(OH7, n) for n in OH7.players] + [(ADVANCED, n) for n in ADVANCED.players] + [(DUEL, 2)]


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sized=st.sampled_from(GAME_SIZES))
def test_random_play_keeps_every_rule(seed: int, sized: tuple[Any, int]) -> None:
    game, players = sized
    steps = list(playout(game, game.start(players), random.Random(seed)))
    check_playthrough(game, players, steps)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sized=st.sampled_from(GAME_SIZES))
def test_greedy_play_is_always_legal_and_keeps_every_rule(seed: int, sized: tuple[Any, int]) -> None:
    game, players = sized
    steps = list(playout(game, game.start(players), random.Random(seed), _greedy_policy(game)))
    check_playthrough(game, players, steps)


@pytest.mark.parametrize(("game", "players"), [(OH7, 4), (ADVANCED, 5), (DUEL, 2)])
def test_the_same_seed_and_policy_replay_the_same_events(game: Any, players: int) -> None:
    def events(policy: Any) -> list[Any]:
        return [
            (s.seat, s.action, s.state.events)
            for s in playout(game, game.start(players), random.Random(9), policy)
        ]

    assert events(random_policy) == events(random_policy)
    assert events(_greedy_policy(game)) == events(_greedy_policy(game))
    assert events(random_policy) != events(_greedy_policy(game))


@pytest.mark.parametrize(("game", "players"), [(OH7, 3), (OH7, 4), (ADVANCED, 4), (ADVANCED, 6), (DUEL, 2)])
def test_greedy_beats_random_on_average(game: Any, players: int) -> None:
    greedy_ranks, random_ranks = [], []
    greedy = _greedy_policy(game)
    for number in range(200 // players):
        hero = number % players

        def policy(
            state: Any, seat: int, legal: tuple[Any, ...], rng: random.Random, hero: int = hero
        ) -> Any:
            return (greedy if seat == hero else random_policy)(state, seat, legal, rng)

        steps = list(playout(game, game.start(players), random.Random(number), policy))
        result = oh7.result(steps[-1].state)
        assert result is not None
        if result.ranks is None:
            continue
        greedy_ranks.append(result.ranks[hero])
        random_ranks += [rank for seat, rank in enumerate(result.ranks) if seat != hero]
    assert sum(greedy_ranks) / len(greedy_ranks) < sum(random_ranks) / len(random_ranks) - 0.3
