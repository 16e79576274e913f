"""Black Sevens (RULES.md §3, rulebook 003): every ruling from explicit deals, the rulebook's
example round, rules as tables, and random play checked against the rules recomputed here."""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.cards import DECK_52
from referee.engine.games import black_sevens
from referee.engine.games.base import CHANCE, Decision, DecisionKind, GameError, Result
from referee.engine.games.black_sevens import State
from referee.engine.playout import playout, random_policy

GAME = black_sevens.GAME

# The card values recomputed here (RULES.md §3), independently of the module's tables.
VALUES = {rank: value for value, rank in enumerate("23456789TJQKA", start=2)}


def value(card: str) -> int:
    return {"7S": 25, "7C": 21}.get(card, VALUES[card[0]])


def order(card: str) -> tuple[int, int]:
    return value(card), "CDHS".index(card[1])


def cards(text: str) -> tuple[str, ...]:
    """`"jd js"` -> `("JD", "JS")`, sorted as the game sorts sets (value, then C < D < H < S)."""
    return tuple(sorted(text.upper().split(), key=order))


# Helpers: explicit deals and scripted plays


def dealt(hands: Sequence[str], leader: int | None = 0, *, scores: Any = None, round_index: int = 0) -> State:
    """A new game (or one started mid-game) after an explicit deal: one string per seat."""
    state = black_sevens.new_game(4, {}, scores=scores, round_index=round_index)
    return deal(state, hands, leader)


def deal(state: State, hands: Sequence[str], leader: int | None = None) -> State:
    outcome: dict[str, Any] = {"hands": [text.upper().split() for text in hands]}
    if leader is not None:
        outcome["leader"] = leader
    return black_sevens.apply(state, CHANCE, outcome)


def seat_to_move(state: State) -> int:
    decision = black_sevens.to_move(state)
    assert decision is not None and decision.kind is DecisionKind.PLAY
    return decision.seats[0]


def play(state: State, seat: int, text: str) -> State:
    """`seat` plays the set `text`, which must be its turn and legal."""
    assert seat_to_move(state) == seat
    action = cards(text)
    legal = black_sevens.legal_actions(state, seat)
    assert action in legal, (seat, action, legal)
    return black_sevens.apply(state, seat, action)


def forced(state: State, seat: int, text: str) -> State:
    """`seat` has exactly one legal action, `text` (R-0.2, R-3.4), and plays it."""
    assert seat_to_move(state) == seat
    assert black_sevens.legal_actions(state, seat) == (cards(text),)
    return black_sevens.apply(state, seat, cards(text))


def legal_sets(state: State, seat: int) -> list[tuple[str, ...]]:
    """The legal actions of `seat`, each a set (a sorted tuple of card codes)."""
    legal = black_sevens.legal_actions(state, seat)
    assert all(isinstance(action, tuple) for action in legal)
    return [action for action in legal if isinstance(action, tuple)]


def event(state: State, kind: str) -> dict[str, Any]:
    (found,) = [e for e in state.events if e["type"] == kind]
    return found


def play_round(
    state: State, pick: Callable[[tuple[Any, ...]], Any] = lambda legal: legal[0]
) -> tuple[State, list[dict[str, Any]]]:
    """Plays the rest of the round with `pick`, collecting its events."""
    events: list[dict[str, Any]] = []
    while (decision := black_sevens.to_move(state)) is not None and not decision.is_chance:
        seat = decision.seats[0]
        state = black_sevens.apply(state, seat, pick(black_sevens.legal_actions(state, seat)))
        events.extend(state.events)
    assert events[-1]["type"] in ("round_end", "game_end")
    return state, events


# The rulebook's example round (RULES.md §3): players 1-4 are seats 0-3, player 1 leads.
EXAMPLE = ("8D QH AS 2C 4D TD KD", "TH 2H 4C 5H 9C 9H JC",
           "TC KH 7C 7S 6C 6D 8C", "KS JD JS 4H TS AC 3D")  # fmt: skip
EXAMPLE_PLAYS = ((0, "8D"), (1, "TH"), (2, "TC"), (3, "KS"), (3, "JD JS"), (0, "QH AS"),
                 (1, "2H 4C"), (2, "KH 7C"), (2, "7S"), (3, "3D"), (0, "2C"), (1, "5H"),
                 (2, "6C 6D"), (3, "TS AC"), (0, "4D TD"), (1, "9C 9H"))  # fmt: skip


EXAMPLE_LAST_CARDS = ("KD", "JC", "8C", "4H")
# A deal for the round after the example: its last cards (on the table, R-3.9) swapped for cards
# the example left unused.
NEXT_ROUND = tuple(
    " ".join({"KD": "QS", "JC": "QC", "8C": "3S", "4H": "5S"}.get(card, card) for card in hand.split())
    for hand in EXAMPLE
)


def play_example(state: State) -> State:
    """Plays the example round's sets (with R-3.6) on a state dealt EXAMPLE with seat 0 leading."""
    for seat, text in EXAMPLE_PLAYS:
        state = play(state, seat, text)
    return state


# The game descriptor


def test_game_descriptor_is_four_players_lower_total_wins() -> None:
    assert GAME.id == "black-sevens"
    assert GAME.players == range(4, 5)
    assert GAME.higher_is_better is False
    assert GAME.rules == black_sevens.__doc__
    assert GAME.options == {}
    for players in (3, 5):
        with pytest.raises(GameError, match="4 players"):
            GAME.start(players)
    with pytest.raises(GameError, match="no option"):
        GAME.start(4, {"target": 35})


# 1. Deal and card values


@pytest.mark.parametrize(
    ("card", "points"),
    [("2H", 2), ("TD", 10), ("JC", 11), ("QS", 12), ("KD", 13), ("AS", 14), ("AC", 14),
     ("7S", 25), ("7C", 21), ("7H", 7), ("7D", 7)],
)  # fmt: skip
def test_card_values_with_the_black_sevens_highest(card: str, points: int) -> None:
    assert black_sevens.VALUE[card] == points == value(card)


def test_a_game_starts_with_a_deal_of_seven_cards_each_and_a_drawn_leader() -> None:
    state = GAME.start(4)
    assert black_sevens.to_move(state) == Decision(DecisionKind.DEAL, ())
    assert black_sevens.legal_actions(state, 0) == ()
    outcome = black_sevens.sample_chance(state, random.Random(7))
    assert sorted(outcome) == ["hands", "leader"] and 0 <= outcome["leader"] < 4
    dealt_cards = [card for hand in outcome["hands"] for card in hand]
    assert [len(hand) for hand in outcome["hands"]] == [7, 7, 7, 7]
    assert len(set(dealt_cards)) == 28 and set(dealt_cards) <= set(DECK_52)
    state = black_sevens.apply(state, CHANCE, outcome)
    assert black_sevens.to_move(state) == Decision(DecisionKind.PLAY, (outcome["leader"],))
    deal_event = event(state, "deal")
    assert deal_event["round"] == 0 and deal_event["leader"] == outcome["leader"]
    assert [sorted(hand) for hand in deal_event["hands"]] == [sorted(hand) for hand in outcome["hands"]]


def test_the_seat_not_to_move_has_no_legal_actions() -> None:
    state = dealt(EXAMPLE, leader=2)
    assert [bool(black_sevens.legal_actions(state, seat)) for seat in range(4)] == [
        False, False, True, False,
    ]  # fmt: skip


# 2. A hand: rules as tables


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        ("2C 5D 9H KS", ["2C", "5D", "9H", "KS"]),
        # the leader keeps a card, so no pair from a hand of two equal cards.
        ("5C 5D", ["5C", "5D"]),
        # equal value pairs; 7S (25) and 7C (21) never pair, the red sevens do.
        ("7C 7S 7D 7H 2C", ["2C", "7D", "7H", "7C", "7S", "7D 7H"]),
        ("3C 3D 9H 9S JC", ["3C", "3D", "9H", "9S", "JC", "3C 3D", "9H 9S"]),
        # four kings and nothing else lead at most a triple.
        ("KC KD KH KS", ["KC", "KD", "KH", "KS", "KC KD", "KC KH", "KC KS", "KD KH", "KD KS",
                         "KH KS", "KC KD KH", "KC KD KS", "KC KH KS", "KD KH KS"]),
        ("KC KD KH KS 2C", ["2C", "KC", "KD", "KH", "KS", "KC KD", "KC KH", "KC KS", "KD KH",
                            "KD KS", "KH KS", "KC KD KH", "KC KD KS", "KC KH KS", "KD KH KS",
                            "KC KD KH KS"]),
    ],
)  # fmt: skip
def test_the_leader_may_lead_any_single_or_equal_value_set(hand: str, expected: list[str]) -> None:
    leads = black_sevens.lead_sets(cards(hand))
    assert leads == tuple(cards(text) for text in expected)


@pytest.mark.parametrize(
    ("hand", "standing", "expected"),
    [
        # Equal values beat ("same or higher point value").
        ("2C 8H 9D", "8D", ["8H", "9D"]),
        ("9C 9H TH JC 2H 4C 5H", "8D", ["9C", "9H", "TH", "JC"]),
        # The black sevens: 7C beats an ace, 7S beats 7C, nothing beats 7S; red sevens are 7.
        ("7C 7H 2D", "AS", ["7C"]),
        ("4C 7S", "7C", ["7S"]),
        ("7C 2D AH", "7S", ["2D"]),
        # Sets are beaten card by card, sorted by value; the cards need not match each other.
        ("QH AS 2C 4D TD KD", "JD JS", ["QH KD", "QH AS", "KD AS"]),
        ("9C TD KH", "9H 9S", ["9C TD", "9C KH", "TD KH"]),
        ("3C 4D AC TS", "6C 6D", ["TS AC"]),
        ("2C 8D 9H TS JC", "8C 8H 8S", ["8D 9H TS", "8D 9H JC", "8D TS JC", "9H TS JC"]),
        ("2C 3C 5D 6H 9S", "2D 2H 2S 3D", ["2C 3C 5D 6H", "2C 3C 5D 9S", "2C 3C 6H 9S",
                                           "2C 5D 6H 9S", "3C 5D 6H 9S"]),
        # no beating set: the k lowest, forced; equal values go C < D < H < S.
        ("2C 5H 9D", "TH", ["2C"]),
        ("2H 4C 5H 9C 9H JC", "QH AS", ["2H 4C"]),
        ("5S 5C 5H 9D", "KD", ["5C"]),
        ("5S 5C 5H 9D", "KC KD", ["5C 5H"]),
        ("4D TD KD", "TS AC", ["4D TD"]),
    ],
)  # fmt: skip
def test_a_follower_must_beat_the_standing_set_else_lays_its_lowest(
    hand: str, standing: str, expected: list[str]
) -> None:
    # A position: seat 0 has led `standing` and seat 1, holding `hand`, is to play.
    state = dataclasses.replace(
        dealt(EXAMPLE),
        hands=(cards(standing), cards(hand), (), ()),
        plays=((0, cards(standing)),),
        standing=cards(standing),
        standing_seat=0,
        turn=1,
    )
    assert black_sevens.legal_actions(state, 1) == tuple(cards(text) for text in expected)


# fmt: off
WINNER_TABLE = [
    # Equal values beat, so the later of equal sets wins (the rulebook: TC beats TH, KS wins).
    pytest.param(EXAMPLE, 0, ["8D", "TH", "TC", "KS"], 3, id="equal_value_beats_later_wins"),
    # Laying low never wins: 7S is unbeatable and the leader keeps the hand.
    pytest.param(EXAMPLE, 2, ["7S", "3D", "2C", "2H"], 2, id="unbeaten_leader_wins"),
    # An equal single beats: seat 1's 9D takes the hand from seat 0's 9C.
    pytest.param(("9C 2S 3S 4S 5S 6S 8S", "9D 2H 3H 4H 5H 6H 8H", "2C 3C 4C 5C 6C 8C 7H",
                  "2D 3D 4D 5D 6D 8D 7D"), 0, ["9C", "9D", "2C", "2D"], 1,
                 id="equal_single_beats"),
    # An equal pair beats a pair; a forced lay-low in between changes nothing.
    pytest.param(("9C 9D 2S 3S 4S 5S 6S", "TC TD 2H 3H 4H 5H 6H", "2C 3C 4C 5C 6C 8C 8H",
                  "TH TS 2D 3D 4D 5D 6D"), 0, ["9C 9D", "TC TD", "2C 3C", "TH TS"], 3,
                 id="equal_pair_beats_pair"),
    # 7C beats an ace, 7S beats 7C.
    pytest.param(("KD 2S 3S 4S 5S 6S 8S", "AS 2H 3H 4H 5H 6H 8H", "7C 2C 3C 4C 5C 6C 8C",
                  "7S 2D 3D 4D 5D 6D 8D"), 0, ["KD", "AS", "7C", "7S"], 3,
                 id="black_sevens_beat_aces"),
    # The last beating set wins even when later players lay low.
    pytest.param(("5C 5D 2S 3S 4S 6S 8S", "QH KH 2H 3H 4H 6H 8H", "2C 3C 4C 6C 8C 9C TC",
                  "2D 3D 4D 6D 8D 9D TD"), 0, ["5C 5D", "QH KH", "2C 3C", "2D 3D"], 1,
                 id="last_beating_set_wins"),
]
# fmt: on


@pytest.mark.parametrize(("hands", "leader", "sets", "winner"), WINNER_TABLE)
def test_the_owner_of_the_standing_set_wins_the_hand_and_leads(
    hands: Sequence[str], leader: int, sets: list[str], winner: int
) -> None:
    state = dealt(hands, leader)
    for offset, text in enumerate(sets):
        state = play(state, (leader + offset) % 4, text)
    hand_event = event(state, "hand")
    assert hand_event["winner"] == winner
    assert hand_event["plays"] == [
        [(leader + offset) % 4, list(cards(text))] for offset, text in enumerate(sets)
    ]
    assert seat_to_move(state) == winner
    assert black_sevens.information_state(state, winner).leader == winner


def test_r_3_2_black_sevens_never_pair_but_red_sevens_may() -> None:
    state = dealt(("7S 7C 7H 7D 2S 3S 4S", "5S 6S 8S 9S TS JS QS", "2C 3C 4C 5C 6C 8C 9C",
                   "2D 3D 4D 5D 6D 8D 9D"), leader=0)  # fmt: skip
    leads = legal_sets(state, 0)
    assert [lead for lead in leads if len(lead) > 1] == [cards("7D 7H")]


def test_r_3_3_the_leader_keeps_at_least_one_card() -> None:
    # Seat 0 leads three aces nobody can beat, then holds only four kings: no quadruple lead.
    state = dealt(("KC KD KH KS AS AH AD", "2H 3H 4H 5H 6H 8H 9H", "2C 3C 4C 5C 6C 8C 9C",
                   "2D 3D 4D 5D 6D 8D 9D"), leader=0)  # fmt: skip
    assert cards("AD AH AS") in black_sevens.legal_actions(state, 0)
    assert len(black_sevens.legal_actions(state, 0)) == 7 + 6 + 4 + 1 + 3 + 1
    state = play(state, 0, "AD AH AS")
    state = forced(state, 1, "2H 3H 4H")
    state = forced(state, 2, "2C 3C 4C")
    state = forced(state, 3, "2D 3D 4D")
    assert seat_to_move(state) == 0
    leads = legal_sets(state, 0)
    assert max(len(lead) for lead in leads) == 3 and len(leads) == 4 + 6 + 4


def test_r_3_4_a_player_who_cannot_beat_is_forced_to_lay_the_k_lowest() -> None:
    # Seat 1 cannot beat QC QD (needs two cards >= 12): it lays 5C 5H, its lowest by suit order.
    state = dealt(("QC QD 2S 3S 4S 6S 8S", "5S 5C 5H 9D TD JD AS", "KC KD 2C 3C 4C 6C 8C",
                   "2D 3D 4D 6D 8D 9C TC"), leader=0)  # fmt: skip
    state = play(state, 0, "QC QD")
    state = forced(state, 1, "5C 5H")
    assert event(state, "play") == {"type": "play", "seat": 1, "cards": ["5C", "5H"]}
    state = forced(state, 2, "KC KD")
    state = forced(state, 3, "2D 3D")
    assert event(state, "hand")["winner"] == 2


def test_a_beating_set_replaces_the_standing_set_the_next_player_must_beat() -> None:
    # The rulebook's second hand: QH AS beats JD JS, so player 3 must beat QH AS, not JD JS.
    state = dealt(EXAMPLE, leader=3)
    state = play(state, 3, "JD JS")
    info = black_sevens.information_state(state, 0)
    assert (info.standing, info.standing_seat, info.set_size) == (cards("JD JS"), 3, 2)
    state = play(state, 0, "QH AS")
    info = black_sevens.information_state(state, 1)
    assert (info.standing, info.standing_seat) == (cards("QH AS"), 0)
    state = forced(state, 1, "2H 4C")
    assert black_sevens.legal_actions(state, 2) == (
        cards("KH 7C"), cards("KH 7S"), cards("7C 7S"),
    )  # fmt: skip


# 3. The rulebook example round (RULES.md §3, R-3.6)


def test_rulebook_example_round_r_3_6_forces_3d_and_player_4_leads_next() -> None:
    state = dealt(EXAMPLE, leader=0)
    # Hand 1: player 1 leads 8D; TH, TC (equal beats), KS: player 4 wins.
    state = play(state, 0, "8D")
    assert black_sevens.legal_actions(state, 1) == tuple(map(cards, ["9C", "9H", "TH", "JC"]))
    state = play(state, 1, "TH")
    state = play(state, 2, "TC")
    state = play(state, 3, "KS")
    assert event(state, "hand")["winner"] == 3
    # Hand 2: JD JS; QH AS; player 2 cannot beat the ace and lays 2H 4C; KH 7C wins.
    state = play(state, 3, "JD JS")
    state = play(state, 0, "QH AS")
    state = forced(state, 1, "2H 4C")
    state = play(state, 2, "KH 7C")
    assert event(state, "hand")["winner"] == 2
    assert black_sevens.information_state(state, 0).hand_size == 4  # "All players have four"
    # Hand 3: 7S; nobody can beat it.: player 4 lays 3D, its lowest (the text says 4H).
    state = play(state, 2, "7S")
    state = forced(state, 3, "3D")
    state = forced(state, 0, "2C")
    state = forced(state, 1, "5H")
    assert event(state, "hand")["winner"] == 2
    # Hand 4: 6C 6D; player 4's only beating set is TS AC; players 1 and 2 lay low.
    state = play(state, 2, "6C 6D")
    state = forced(state, 3, "TS AC")
    state = forced(state, 0, "4D TD")
    state = forced(state, 1, "9C 9H")
    assert event(state, "hand")["winner"] == 3
    round_end = event(state, "round_end")
    assert round_end["last_cards"] == ["KD", "JC", "8C", "4H"]
    assert round_end["points"] == [13, 11, 8, 4]
    assert round_end["scores"] == [13, 11, 8, 4]
    assert round_end["next_leader"] == 3
    # player 4 (fewest points) leads round 2, whose deal draws no leader.
    assert black_sevens.to_move(state) == Decision(DecisionKind.DEAL, ())
    outcome = black_sevens.sample_chance(state, random.Random(1))
    assert "leader" not in outcome
    state = black_sevens.apply(state, CHANCE, outcome)
    assert seat_to_move(state) == 3
    info = black_sevens.information_state(state, 3)
    assert info.table == (("KD",), ("JC",), ("8C",), ("4H",))
    assert info.scores == (13, 11, 8, 4) and info.round_index == 1 and info.round_leader == 3


def test_the_round_ends_when_everyone_holds_one_card() -> None:
    # Whatever the sets, every player has played 6 cards when the round ends.
    state = dealt(EXAMPLE, leader=0)
    state, events = play_round(state)
    played = [e for e in events if e["type"] == "play"]
    assert sum(len(e["cards"]) for e in played) == 24
    assert all(len(hand) == 0 for hand in state.hands)  # the last cards are on the table
    assert [len(last) for last in black_sevens.information_state(state, 0).table] == [1] * 4


# the last cards stay out of the deck until the game is over


def full_game_deals(seed: int) -> tuple[list[dict[str, Any]], list[tuple[str, ...]], State]:
    """A random game's deal events, the table (every seat's last cards) before each deal, and
    its end."""
    rng = random.Random(seed)
    state = GAME.start(4)
    deals: list[dict[str, Any]] = []
    tables: list[tuple[str, ...]] = []
    while (decision := black_sevens.to_move(state)) is not None:
        if decision.is_chance:
            tables.append(tuple(card for last in state.table for card in last))
            state = black_sevens.apply(state, CHANCE, black_sevens.sample_chance(state, rng))
            deals.append(event(state, "deal"))
            continue
        seat = decision.seats[0]
        legal = black_sevens.legal_actions(state, seat)
        state = black_sevens.apply(state, seat, legal[rng.randrange(len(legal))])
    return deals, tables, state


@pytest.mark.parametrize("seed", range(5))
def test_r_3_9_round_r_deals_from_the_cards_not_on_the_table_and_round_7_deals_all_28_left(
    seed: int,
) -> None:
    deals, tables, end = full_game_deals(seed)
    assert len(deals) == 7
    for round_index, (deal_event, table) in enumerate(zip(deals, tables, strict=True)):
        dealt_cards = [card for hand in deal_event["hands"] for card in hand]
        assert len(table) == 4 * round_index and len(set(table)) == len(table)
        assert len(dealt_cards) == 28 and not set(dealt_cards) & set(table)  # no last card reappears
        left = set(DECK_52) - set(table)
        assert len(left) == 52 - 4 * round_index and set(dealt_cards) <= left
    assert {card for hand in deals[6]["hands"] for card in hand} == set(DECK_52) - set(tables[6])
    assert len({card for last in end.table for card in last}) == 28  # 7 rounds, 28 different cards


def test_r_3_9_every_seat_sees_the_last_cards_on_the_table_and_never_holds_one() -> None:
    rng = random.Random(11)
    state = GAME.start(4)
    rounds = 0
    while rounds < 7:
        state = black_sevens.apply(state, CHANCE, black_sevens.sample_chance(state, rng))
        table = tuple(card for last in state.table for card in last)
        for viewer in range(4):
            info = black_sevens.information_state(state, viewer)
            assert info.table == state.table and len(table) == 4 * rounds
            assert not set(info.hand) & set(table)
        state, _ = play_round(state, lambda legal: legal[rng.randrange(len(legal))])
        rounds += 1
    assert black_sevens.to_move(state) is None
    for viewer in range(4):
        table = black_sevens.information_state(state, viewer).table
        assert len({card for last in table for card in last}) == 28


def test_r_3_9_a_deal_of_a_last_card_on_the_table_is_refused_naming_the_ruling() -> None:
    state = play_example(dealt(EXAMPLE, leader=0))
    assert tuple(last[0] for last in state.table) == EXAMPLE_LAST_CARDS
    for last in EXAMPLE_LAST_CARDS:
        hands = [" ".join(last if card == "QS" else card for card in hand.split()) for hand in NEXT_ROUND]
        with pytest.raises(GameError, match=rf"card {last} is a last card on the table.*R-3\.9") as raised:
            deal(state, hands)
        assert "\n" not in str(raised.value)
    assert black_sevens.to_move(state) == Decision(DecisionKind.DEAL, ())  # the state is unchanged
    assert seat_to_move(deal(state, NEXT_ROUND)) == 3


def test_r_3_9_the_deal_after_the_rulebook_example_samples_none_of_its_last_cards() -> None:
    state = play_example(dealt(EXAMPLE, leader=0))
    for seed in range(50):
        outcome = black_sevens.sample_chance(state, random.Random(seed))
        assert not {card for hand in outcome["hands"] for card in hand} & set(EXAMPLE_LAST_CARDS)
        assert "leader" not in outcome  # decides it


# later leaders, and ties at the end


@pytest.mark.parametrize(
    ("scores", "table", "previous", "leader"),
    [
        ((13, 11, 8, 4), (("KD",), ("JC",), ("8C",), ("4H",)), 0, 3),
        # Tied totals: the lower latest last card leads.
        ((20, 20, 30, 40), (("9C", "AH"), ("QD", "8D"), ("2C", "2D"), ("2H", "2S")), 3, 1),
        # Tied latest last cards too: the one before decides.
        ((20, 20, 30, 40), (("AH", "6C"), ("QD", "6D"), ("2C", "2D"), ("2H", "2S")), 3, 1),
        # Still tied (equal values, suits do not count): the first clockwise after the previous
        # leader, the previous leader last.
        ((20, 20, 30, 40), (("KH", "7D"), ("KC", "7H"), ("2C", "2D"), ("2H", "2S")), 0, 1),
        ((20, 20, 30, 40), (("KH", "7D"), ("KC", "7H"), ("2C", "2D"), ("2H", "2S")), 1, 0),
        ((20, 20, 30, 40), (("KH", "7D"), ("KC", "7H"), ("2C", "2D"), ("2H", "2S")), 3, 0),
        ((5, 5, 5, 5), (("5C",), ("5D",), ("5H",), ("5S",)), 2, 3),
        ((5, 5, 5, 5), (("5C",), ("5D",), ("5H",), ("5S",)), 3, 0),
    ],
)
def test_r_3_1_fewest_points_leads_then_lower_last_cards_then_clockwise(
    scores: tuple[int, ...], table: tuple[tuple[str, ...], ...], previous: int, leader: int
) -> None:
    assert black_sevens.next_leader(scores, table, previous) == leader


def test_r_3_1_tied_totals_go_to_the_lower_last_card_after_a_played_round() -> None:
    # Started mid-game so the example ends with seats 0-2 tied at 13 and seat 3 at 16:
    # seat 2's 8C is the lowest of the tied last cards, so seat 2 leads, not seat 3 (4H).
    state = play_example(dealt(EXAMPLE, leader=0, scores=[0, 2, 5, 12], round_index=3))
    round_end = event(state, "round_end")
    assert round_end["round"] == 3 and round_end["scores"] == [13, 13, 13, 16]
    assert round_end["next_leader"] == 2
    assert seat_to_move(deal(state, NEXT_ROUND)) == 2


def finished(scores: tuple[int, ...], table: tuple[tuple[str, ...], ...]) -> State:
    return dataclasses.replace(black_sevens.new_game(4, {}), scores=scores, table=table, over=True)


@pytest.mark.parametrize(
    ("scores", "table", "ranks"),
    [
        ((40, 30, 50, 20), (("KD",), ("JC",), ("8C",), ("4H",)), (3, 2, 4, 1)),
        # tied totals: the lower latest last card wins, then the round before.
        ((30, 30, 30, 50), (("9C", "AH"), ("QD", "8D"), ("AD", "8H"), ("2H", "2S")), (3, 1, 2, 4)),
        # Still tied: shared rank (suits do not count).
        ((30, 30, 20, 50), (("QD", "8D"), ("QC", "8H"), ("2C", "2D"), ("2H", "2S")), (2, 2, 1, 4)),
        ((10, 10, 10, 10), (("5C",), ("5D",), ("5H",), ("5S",)), (1, 1, 1, 1)),
    ],
)
def test_r_3_5_lowest_total_wins_ties_by_last_cards_else_shared(
    scores: tuple[int, ...], table: tuple[tuple[str, ...], ...], ranks: tuple[int, ...]
) -> None:
    assert black_sevens.result(finished(scores, table)) == Result(scores, ranks)


def test_r_3_5_the_game_ends_after_seven_rounds_with_ties_on_the_last_card() -> None:
    state = dealt(EXAMPLE, leader=0, scores=[0, 2, 5, 12], round_index=6)
    assert black_sevens.result(state) is None
    state = play_example(state)
    assert black_sevens.to_move(state) is None
    assert [e["type"] for e in state.events] == ["play", "hand", "round_end", "game_end"]
    # Totals 13, 13, 13, 16: the tied seats rank by their last cards KD, JC, 8C.
    assert state.events[-1] == {
        "type": "game_end", "scores": [13, 13, 13, 16], "ranks": [3, 2, 1, 4], "aborted": False,
    }  # fmt: skip
    assert black_sevens.result(state) == Result((13, 13, 13, 16), (3, 2, 1, 4))


def test_r_3_8_a_game_started_mid_way_draws_its_first_leader() -> None:
    state = black_sevens.new_game(4, {}, scores=[10, 20, 30, 40], round_index=5)
    assert "leader" in black_sevens.sample_chance(state, random.Random(3))
    with pytest.raises(GameError, match="must draw a 'leader'"):
        deal(state, EXAMPLE)
    state = deal(state, EXAMPLE, leader=2)
    assert seat_to_move(state) == 2
    info = black_sevens.information_state(state, 2)
    assert (info.scores, info.round_index, info.table) == ((10, 20, 30, 40), 5, ((),) * 4)


# Bad input


@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        ({"hands": [h.split() for h in EXAMPLE[:3]], "leader": 0}, "needs 4 hands"),
        ({"hands": [h.split() for h in EXAMPLE[:3]] + [["KS"]], "leader": 0}, "needs 7 cards"),
        ({"hands": [h.split() for h in EXAMPLE[:3]] + [EXAMPLE[0].split()], "leader": 0},
         "dealt twice"),
        ({"hands": [h.split() for h in EXAMPLE[:3]] + [["1X", *EXAMPLE[3].split()[1:]]],
          "leader": 0}, "unknown card '1X'"),
        ({"hands": [h.split() for h in EXAMPLE[:3]] + [[None, *EXAMPLE[3].split()[1:]]],
          "leader": 0}, "unknown card None"),
        ({"hands": [h.split() for h in EXAMPLE]}, "must draw a 'leader'"),
        ({"hands": [h.split() for h in EXAMPLE], "leader": 4}, "leader must be a seat"),
        ({"hands": [h.split() for h in EXAMPLE], "leader": True}, "leader must be a seat"),
        ({"hands": [h.split() for h in EXAMPLE], "leader": 0, "trump": "TH"}, "must be a dict"),
        ("8D QH AS", "must be a dict"),
        ({"hands": "8D QH AS", "leader": 0}, "needs 4 hands"),
    ],
)  # fmt: skip
def test_malformed_deals_raise_a_clear_game_error(outcome: Any, message: str) -> None:
    with pytest.raises(GameError, match=message) as raised:
        black_sevens.apply(GAME.start(4), CHANCE, outcome)
    assert "\n" not in str(raised.value)


def test_a_later_deal_may_not_override_the_r_3_1_leader() -> None:
    state = play_example(dealt(EXAMPLE, leader=0))
    with pytest.raises(GameError, match=r"seat 3 leads by R-3\.1, not 0"):
        deal(state, NEXT_ROUND, leader=0)
    assert seat_to_move(deal(state, NEXT_ROUND, leader=3)) == 3
    with pytest.raises(GameError, match="no deal is pending"):
        deal(deal(state, NEXT_ROUND), NEXT_ROUND)


@pytest.mark.parametrize(
    ("position", "message"),
    [
        ({"scores": [1, 2, 3]}, "scores must be 4 ints"),
        ({"scores": [1, 2, 3, "4"]}, "scores must be 4 ints"),
        ({"round_index": 7}, "round_index must be 0..6"),
        ({"round_index": -1}, "round_index must be 0..6"),
    ],
)
def test_bad_starting_positions_raise_game_error(position: dict[str, Any], message: str) -> None:
    with pytest.raises(GameError, match=message):
        GAME.start(4, **position)


# Information state (RULES.md §5)


def test_information_state_shows_the_table_and_own_hand_only() -> None:
    state = dealt(EXAMPLE, leader=0)
    info = black_sevens.information_state(state, 1)
    assert info.game == "black-sevens" and info.seat == 1 and info.num_players == 4
    assert info.hand == cards(EXAMPLE[1]) and info.hand_size == 7
    assert (info.leader, info.round_leader, info.set_size, info.standing) == (0, 0, 0, ())
    assert info.standing_seat is None and info.plays == () and info.history == ()
    state = play(state, 0, "8D")
    state = play(state, 1, "TH")
    info = black_sevens.information_state(state, 2)
    assert info.plays == ((0, ("8D",)), (1, ("TH",)))
    assert (info.standing, info.standing_seat, info.set_size) == (("TH",), 1, 1)
    assert info.played == (("8D",), ("TH",), (), ())
    state = play(state, 2, "TC")
    state = play(state, 3, "KS")
    info = black_sevens.information_state(state, 3)
    assert info.history == ((3, ((0, ("8D",)), (1, ("TH",)), (2, ("TC",)), (3, ("KS",)))),)
    assert info.hands_won == (0, 0, 0, 1) and info.plays == () and info.standing_seat is None
    assert info.hand == cards("JD JS 4H TS AC 3D")


def swapped(hands: Sequence[str], swaps: Sequence[tuple[str, str]]) -> list[str]:
    """The hands with each pair of cards exchanged (a card not dealt comes from the unused)."""
    table = {a: b for a, b in swaps} | {b: a for a, b in swaps}
    return [" ".join(table.get(card, card) for card in hand.split()) for hand in hands]


def test_information_state_does_not_leak_hidden_cards_after_identical_public_plays() -> None:
    # Seat 2 leads 7S, then 7C (unbeatable once 7S is out); the others lay low both times. The
    # second deal swaps high cards between seats 0 and 3 and with the unused cards: seat 2 sees
    # nothing different at any point.
    hands = ("2C 3H TD KD QH AS 9D", "2H 4C 5H 9C 9H JC TH",
             "TC KH 7C 7S 6C 6D 8C", "3D 4H 5D KS JD AC TS")  # fmt: skip
    other = swapped(hands, [("KD", "KS"), ("AS", "AC"), ("QH", "QS"), ("JC", "JS")])
    script = [(2, "7S"), (3, "3D"), (0, "2C"), (1, "2H"), (2, "7C"), (3, "4H"), (0, "3H"),
              (1, "4C")]  # fmt: skip
    first, second = dealt(hands, leader=2), dealt(other, leader=2)
    assert black_sevens.information_state(first, 2) == black_sevens.information_state(second, 2)
    assert black_sevens.information_state(first, 0) != black_sevens.information_state(second, 0)
    for seat, text in script:
        first, second = play(first, seat, text), play(second, seat, text)
        assert first.events == second.events
        for viewer in range(4):
            if hands[viewer] == other[viewer]:
                assert black_sevens.information_state(first, viewer) == black_sevens.information_state(
                    second, viewer
                )


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), viewer=st.integers(0, 3))
def test_information_state_at_the_first_decision_ignores_hidden_cards(seed: int, viewer: int) -> None:
    rng = random.Random(seed)
    state = GAME.start(4)
    outcome = black_sevens.sample_chance(state, rng)
    hidden = [card for card in DECK_52 if card not in outcome["hands"][viewer]]
    shuffled = hidden[:]
    rng.shuffle(shuffled)
    remap = dict(zip(hidden, shuffled, strict=True))
    other = {
        "hands": [hand if seat == viewer else [remap[card] for card in hand]
                  for seat, hand in enumerate(outcome["hands"])],
        "leader": outcome["leader"],
    }  # fmt: skip
    first = black_sevens.apply(state, CHANCE, outcome)
    second = black_sevens.apply(state, CHANCE, other)
    assert black_sevens.information_state(first, viewer) == black_sevens.information_state(second, viewer)


# Random play, checked against the rules recomputed here


def oracle_legal(hand: tuple[str, ...], standing: tuple[str, ...]) -> set[tuple[str, ...]]:
    """Every legal set, by brute force over all subsets (RULES.md §3, R-3.2 to R-3.4)."""
    hand = tuple(sorted(hand, key=order))
    if not standing:
        return {
            subset
            for size in range(1, len(hand))
            for subset in itertools.combinations(hand, size)
            if len({value(card) for card in subset}) == 1
        }
    size = len(standing)
    beating = {
        subset
        for subset in itertools.combinations(hand, size)
        if all(value(a) >= value(b) for a, b in zip(subset, standing, strict=True))
    }
    return beating or {hand[:size]}


def checked_policy(policy: Any) -> Any:
    """Wraps a playout policy: legal actions must be exactly the brute-force legal sets."""

    def check(state: State, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
        info = black_sevens.information_state(state, seat)
        assert len(set(legal)) == len(legal)
        assert set(legal) == oracle_legal(info.hand, info.standing)
        assert all(list(action) == sorted(action, key=order) for action in legal)
        return policy(state, seat, legal, rng)

    return check


def greedy_policy(state: State, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
    info = black_sevens.information_state(state, seat)
    action = black_sevens.greedy(info, legal)
    assert action in legal and black_sevens.greedy(info, legal) == action
    return action


def check_game(events: list[dict[str, Any]]) -> None:
    """Replays a whole game's events and checks every rule on them."""
    scores = [0, 0, 0, 0]
    table: list[list[str]] = [[], [], [], []]
    expected_leader: int | None = None
    rounds = 0
    hands: list[list[str]] = []
    for e in events:
        kind = e["type"]
        if kind == "deal":
            assert e["round"] == rounds
            hands = [list(hand) for hand in e["hands"]]
            dealt_cards = [card for hand in hands for card in hand]
            assert len(dealt_cards) == 28 and len(set(dealt_cards)) == 28
            on_table = {card for last in table for card in last}  # out of the deck
            assert not set(dealt_cards) & on_table
            if rounds == 6:
                assert set(dealt_cards) == set(DECK_52) - on_table
            round_cards, played_cards = set(dealt_cards), list[str]()
            if expected_leader is not None:
                assert e["leader"] == expected_leader
            leader = previous_leader = e["leader"]
            plays: list[tuple[int, list[str]]] = []
            standing: tuple[str, ...] = ()
            owner = leader
        elif kind == "play":
            seat, played = e["seat"], tuple(e["cards"])
            assert seat == (leader + len(plays)) % 4
            hand = hands[seat]
            assert set(played) <= set(hand)
            if not plays:
                assert len({value(card) for card in played}) == 1 and len(played) < len(hand)
                standing, owner = played, seat
            else:
                assert len(played) == len(standing)
                if all(value(a) >= value(b) for a, b in zip(played, standing, strict=True)):
                    standing, owner = played, seat
                else:  # only when nothing beats, and then the k lowest
                    assert oracle_legal(tuple(hand), standing) == {played}
                    assert list(played) == sorted(hand, key=order)[: len(played)]
            for card in played:
                hand.remove(card)
            played_cards.extend(played)
            plays.append((seat, list(played)))
        elif kind == "hand":
            assert len(plays) == 4 and e["winner"] == owner and e["cards"] == list(standing)
            assert e["plays"] == [[seat, cards_] for seat, cards_ in plays]
            assert len({len(hand) for hand in hands}) == 1
            leader, plays = owner, []
        elif kind == "round_end":
            assert [len(hand) for hand in hands] == [1, 1, 1, 1]
            last = [hand[0] for hand in hands]
            # No card created or lost: the cards played and the last cards are the deal.
            assert len(played_cards) == 24 and set(played_cards) | set(last) == round_cards
            assert e["last_cards"] == last and e["points"] == [value(card) for card in last]
            scores = [score + value(card) for score, card in zip(scores, last, strict=True)]
            assert e["scores"] == scores
            for seat in range(4):
                table[seat].append(last[seat])
            rounds += 1
            if rounds < 7:
                key = [(scores[s], [value(c) for c in reversed(table[s])]) for s in range(4)]
                best = min(key)
                expected_leader = next(
                    (previous_leader + step) % 4
                    for step in range(1, 5)
                    if key[(previous_leader + step) % 4] == best
                )
                assert e["next_leader"] == expected_leader
        elif kind == "game_end":
            assert rounds == 7 and e["scores"] == scores and e["aborted"] is False
            key = [(scores[s], [value(c) for c in reversed(table[s])]) for s in range(4)]
            assert e["ranks"] == [1 + sum(1 for other in key if other < mine) for mine in key]
    assert events[-1]["type"] == "game_end"


def run(seed: int, policies: Sequence[Any]) -> tuple[list[dict[str, Any]], Result]:
    def by_seat(state: State, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
        return policies[seat](state, seat, legal, rng)

    state = GAME.start(4)
    events: list[dict[str, Any]] = []
    for step in playout(GAME, state, random.Random(seed), by_seat):
        events.extend(step.state.events)
        state = step.state
    result = black_sevens.result(state)
    assert result is not None
    return events, result


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), greedy_seats=st.sets(st.integers(0, 3)))
def test_random_and_greedy_play_keep_every_rule(seed: int, greedy_seats: set[int]) -> None:
    policies = [checked_policy(greedy_policy if seat in greedy_seats else random_policy) for seat in range(4)]
    events, result = run(seed, policies)
    check_game(events)
    json.dumps(events)
    game_end = events[-1]
    assert result == Result(tuple(game_end["scores"]), tuple(game_end["ranks"]))


def test_the_same_seed_and_policies_give_the_same_game() -> None:
    policies = [random_policy, greedy_policy, random_policy, greedy_policy]
    assert run(11, policies) == run(11, policies)
    assert run(11, policies)[0] != run(12, policies)[0]


def test_greedy_beats_random_players() -> None:
    greedy_ranks, random_ranks = list[int](), list[int]()
    for game in range(200):
        seat = game % 4
        policies = [random_policy] * 4
        policies[seat] = greedy_policy
        _, result = run(game, policies)
        assert result.ranks is not None
        greedy_ranks.append(result.ranks[seat])
        random_ranks.extend(rank for other, rank in enumerate(result.ranks) if other != seat)
    greedy_mean = sum(greedy_ranks) / len(greedy_ranks)
    random_mean = sum(random_ranks) / len(random_ranks)
    assert greedy_mean + 0.5 < random_mean, (greedy_mean, random_mean)


@pytest.mark.parametrize(
    ("hand", "standing", "expected"),
    [
        # Leading: the biggest set, the highest of those, never the lowest card.
        ("2C 5D 9H KS", "", "KS"),
        ("2C 5D 5H KS", "", "5D 5H"),
        ("2C 2D", "", "2D"),
        # Following: the cheapest beating set that keeps the lowest card.
        ("2C 9D JH KS", "8D", "9D"),
        ("9C TD KH", "9H", "TD"),
        ("4C 8D 9D AS", "3H 3S", "8D 9D"),
    ],
)
def test_greedy_keeps_its_lowest_card_leads_big_and_beats_cheaply(
    hand: str, standing: str, expected: str
) -> None:
    led = bool(standing)
    info = black_sevens.InfoState(
        game="black-sevens", seat=1, num_players=4, options=(), scores=(0,) * 4,
        table=((),) * 4, round_index=0, round_leader=0, history=(), hands_won=(0,) * 4,
        played=((),) * 4, leader=0 if led else 1, hand_size=len(cards(hand)),
        set_size=len(cards(standing)), standing=cards(standing), standing_seat=0 if led else None,
        plays=((0, cards(standing)),) if led else (), hand=cards(hand),
    )  # fmt: skip
    legal = tuple(sorted(oracle_legal(cards(hand), cards(standing))))
    assert black_sevens.greedy(info, legal) == cards(expected)
