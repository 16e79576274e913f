"""Black Sevens (RULES.md §3): beat the standing set or lay low; end each round on a low card.

1. Deal: 4 players, 7 cards each. The last cards stay face up on the table, out of the deck,
   until the game is over (R-3.9), so round r deals from the 52 - 4(r-1) cards left: 24 unused
   in round 1, none in round 7. Every seat sees the last cards on the table. Round 1's first
   leader is drawn with the deal; later rounds: the fewest points on the table leads (R-3.1),
   ties still tied after the last cards go to the first of them clockwise *after* the previous
   round's first leader (R-3.7). A game started mid-way draws its first leader too and knows no
   earlier last cards (R-3.8). Values: 2..10, J 11, Q 12, K 13, A 14; 7S is 25 and 7C is 21;
   the red sevens are 7.
2. A hand: the leader plays k cards of one value (R-3.2), keeping at least one card (R-3.3).
   Each other player in turn plays k cards: a set that beats the standing set (sorted by value,
   each card >= the one in the same position) if they have one, else their k lowest (R-3.4).
   The owner of the standing set at the end wins the hand and leads the next.
3. Round end: when everyone holds one card, that last card stays face up; its value is the
   player's points for the round.
4. Game end: after 7 rounds the lowest total wins; ties: the lower latest last card, then the
   round before, else shared (R-3.5).
"""

from __future__ import annotations

import random
import sys
from bisect import bisect_left
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from referee.engine.cards import DECK_52, shuffled_order
from referee.engine.games.base import (
    CHANCE,
    Action,
    Card,
    ChanceOutcome,
    Decision,
    DecisionKind,
    Event,
    Game,
    GameError,
    Options,
    Result,
    competition_ranks,
)

GAME_ID = "black-sevens"
PLAYERS = range(4, 5)
NUM_PLAYERS = 4
ROUNDS = 7
HAND_SIZE = 7

VALUE: dict[Card, int] = {card: "23456789TJQKA".index(card[0]) + 2 for card in DECK_52}
VALUE["7S"] = 25
VALUE["7C"] = 21
"""A card's value: its points as a last card, and its strength in a set."""

SUIT_ORDER = "CDHS"
"""Equal values are ordered C < D < H < S: the order of sets and of forced lay-low plays (R-3.4)."""

ORDER: dict[Card, int] = {card: VALUE[card] * 4 + SUIT_ORDER.index(card[1]) for card in DECK_52}
"""The sort key of a card: by value, then suit order."""

_SINGLE: dict[Card, tuple[Card]] = {card: (card,) for card in DECK_52}

Play = tuple[int, tuple[Card, ...]]
"""A seat and the set it played."""


def sort_cards(cards: Any) -> tuple[Card, ...]:
    """Cards sorted by (value, suit order C < D < H < S): how hands and sets are kept."""
    return tuple(sorted(cards, key=ORDER.__getitem__))


def beats(cards: tuple[Card, ...], standing: tuple[Card, ...]) -> bool:
    """Whether a sorted set beats the sorted standing set: each card >= the one in its position."""
    if len(cards) == 1:
        return VALUE[cards[0]] >= VALUE[standing[0]]
    return all(VALUE[mine] >= VALUE[theirs] for mine, theirs in zip(cards, standing, strict=True))


@dataclass(slots=True)
class State:
    """A game of Black Sevens; `apply` builds a new one (copy-on-write), never mutating this."""

    # Game: rounds played, totals, and the last cards on the table (per seat, oldest first).
    round_index: int
    scores: tuple[int, ...]
    table: tuple[tuple[Card, ...], ...]
    over: bool
    # Round: who leads its first hand (None: drawn with the deal), whether it is dealt, the hands
    # (sorted), the cards each seat has played, hands won, and the earlier hands (winner, plays).
    round_leader: int | None
    dealt: bool
    hands: tuple[tuple[Card, ...], ...]
    played: tuple[tuple[Card, ...], ...]
    hands_won: tuple[int, ...]
    history: tuple[tuple[int, tuple[Play, ...]], ...]
    # The hand being played: its leader, whose turn it is, the cards each seat held when it
    # began, the standing set and its owner, and the plays so far (seat, set).
    leader: int
    turn: int
    hand_size: int
    standing: tuple[Card, ...]
    standing_seat: int
    plays: tuple[Play, ...]
    events: tuple[Event, ...] = ()

    def _copy(self) -> State:
        return State(
            self.round_index, self.scores, self.table, self.over, self.round_leader,
            self.dealt, self.hands, self.played, self.hands_won, self.history, self.leader,
            self.turn, self.hand_size, self.standing, self.standing_seat, self.plays,
        )  # fmt: skip


# 1. Deal


def new_game(
    num_players: int,
    options: Options,
    *,
    scores: Any = None,
    round_index: int = 0,
) -> State:
    """A game before its next deal; `scores` and `round_index` start it mid-game (R-3.8)."""
    if num_players != NUM_PLAYERS:
        raise GameError(f"{GAME_ID} is played by {NUM_PLAYERS} players, not {num_players}")
    if options:
        raise GameError(f"{GAME_ID} has no options, got {sorted(options)}")
    totals = tuple(scores) if scores is not None else (0,) * NUM_PLAYERS
    if len(totals) != NUM_PLAYERS or not all(type(score) is int for score in totals):
        raise GameError(f"{GAME_ID} scores must be {NUM_PLAYERS} ints, got {scores!r}")
    if type(round_index) is not int or not 0 <= round_index < ROUNDS:
        raise GameError(f"{GAME_ID} round_index must be 0..{ROUNDS - 1}, got {round_index!r}")
    empty = ((),) * NUM_PLAYERS
    return State(
        round_index, totals, empty, False, None, False, empty, empty, (0,) * NUM_PLAYERS,
        (), 0, 0, 0, (), 0, (),
    )  # fmt: skip


def out_of_play(table: tuple[tuple[Card, ...], ...]) -> frozenset[Card]:
    """The last cards on the table: out of the deck until the game is over (R-3.9)."""
    return frozenset(card for cards in table for card in cards)


def sample_chance(state: State, rng: random.Random) -> ChanceOutcome:
    """A shuffled deal of 7 cards per seat from the cards not on the table (R-3.9), and the
    first leader when it is drawn. Round 1 shuffles the whole deck; round 7 deals all 28 left."""
    table = out_of_play(state.table)
    left = [card for card in DECK_52 if card not in table]
    deck = [left[index] for index in shuffled_order(len(left), rng)]  # as rng.shuffle(left)
    outcome: ChanceOutcome = {
        "hands": [deck[seat * HAND_SIZE : (seat + 1) * HAND_SIZE] for seat in range(NUM_PLAYERS)]
    }
    if state.round_leader is None:
        outcome["leader"] = rng.randrange(NUM_PLAYERS)
    return outcome


def _deal(state: State, outcome: Any) -> State:  # Any: a malformed one gets a GameError
    if not isinstance(outcome, dict) or set(outcome) - {"hands", "leader"}:
        raise GameError(f"{GAME_ID} deal must be a dict with 'hands' (and 'leader'): {outcome!r}")
    hands = outcome.get("hands")
    if not isinstance(hands, list | tuple) or len(hands) != NUM_PLAYERS:
        raise GameError(f"{GAME_ID} deal needs {NUM_PLAYERS} hands, got {hands!r}")
    seen: set[str] = set()
    table = out_of_play(state.table)
    for seat, hand in enumerate(hands):
        if not isinstance(hand, list | tuple) or len(hand) != HAND_SIZE:
            raise GameError(f"{GAME_ID} deal: seat {seat} needs {HAND_SIZE} cards, got {hand!r}")
        for card in hand:
            if not isinstance(card, str) or card not in ORDER:
                raise GameError(f"{GAME_ID} deal: seat {seat} has an unknown card {card!r}")
            if card in seen:
                raise GameError(f"{GAME_ID} deal: card {card} is dealt twice")
            if card in table:
                raise GameError(
                    f"{GAME_ID} deal: card {card} is a last card on the table, out of the deck until"
                    " the game is over (R-3.9; before this ruling each round was dealt from a full deck)"
                )
            seen.add(card)
    leader = outcome.get("leader", state.round_leader)
    if leader is None:
        raise GameError(f"{GAME_ID} deal of round {state.round_index + 1} must draw a 'leader'")
    if type(leader) is not int or not 0 <= leader < NUM_PLAYERS:
        raise GameError(f"{GAME_ID} deal: leader must be a seat 0..3, got {leader!r}")
    if state.round_leader is not None and leader != state.round_leader:
        raise GameError(f"{GAME_ID} deal: seat {state.round_leader} leads by R-3.1, not {leader}")
    new = state._copy()
    new.dealt = True
    new.hands = tuple(sort_cards(hand) for hand in hands)
    new.round_leader = new.leader = new.turn = new.standing_seat = leader
    new.hand_size = HAND_SIZE
    new.events = (
        {
            "type": "deal",
            "round": state.round_index,
            "hands": [list(hand) for hand in new.hands],
            "leader": leader,
        },
    )
    return new


# 2. A hand

_DEAL = Decision(DecisionKind.DEAL, ())
_NEXT = tuple((seat + 1) % NUM_PLAYERS for seat in range(NUM_PLAYERS))
_PLAY = tuple(Decision(DecisionKind.PLAY, (seat,)) for seat in range(NUM_PLAYERS))


def to_move(state: State) -> Decision | None:
    """The deal, then the seat whose turn it is; None once the game is over."""
    if state.over:
        return None
    return _PLAY[state.turn] if state.dealt else _DEAL


def legal_actions(state: State, seat: int) -> tuple[Action, ...]:
    """The sets `seat` may play: every lead, else every beating set, else its k lowest (R-3.4)."""
    if state.over or not state.dealt or seat != state.turn:
        return ()
    hand = state.hands[seat]
    if not state.plays:
        return lead_sets(hand)
    return beating_sets(hand, state.standing) or (hand[: len(state.standing)],)


def lead_sets(hand: tuple[Card, ...]) -> tuple[tuple[Card, ...], ...]:
    """Every set of 1..len(hand)-1 cards of equal value (R-3.2, R-3.3): the singles, then each
    value's pairs, triples and quadruples (values ascending)."""
    values = [VALUE[card] for card in hand]
    singles = tuple(map(_SINGLE.__getitem__, hand))
    count = len(hand)
    if len(set(values)) == count:
        return singles
    leads: list[tuple[Card, ...]] = list(singles)
    start = 0
    while start < count - 1:
        end = start + 1
        while end < count and values[end] == values[start]:
            end += 1
        for size in range(2, min(end - start, count - 1) + 1):
            leads.extend(combinations(hand[start:end], size))
        start = end
    return tuple(leads)


def beating_sets(hand: tuple[Card, ...], standing: tuple[Card, ...]) -> tuple[tuple[Card, ...], ...]:
    """Every set of the hand that beats the standing set, in hand order (both sorted)."""
    if len(standing) == 1:
        need = VALUE[standing[0]]
        return tuple([_SINGLE[card] for card in hand if VALUE[card] >= need])
    values = [VALUE[card] for card in hand]
    size = len(standing)
    last = len(hand) - size
    firsts = [bisect_left(values, VALUE[card]) for card in standing]
    if any(first > last + position for position, first in enumerate(firsts)):
        return ()
    found: list[tuple[Card, ...]] = []
    for indexes in combinations(range(firsts[0], len(hand)), size):
        if all(index >= first for index, first in zip(indexes, firsts, strict=True)):
            found.append(tuple([hand[index] for index in indexes]))
    return tuple(found)


def apply(state: State, seat: int, action: Any) -> State:
    """The state after `seat` plays the set `action` (or after the deal when seat is CHANCE)."""
    if seat == CHANCE:
        if state.over or state.dealt:
            raise GameError(f"{GAME_ID}: no deal is pending")
        return _deal(state, action)
    cards: tuple[Card, ...] = tuple(action)
    hands = list(state.hands)
    hands[seat] = tuple([card for card in hands[seat] if card not in cards])
    played = list(state.played)
    played[seat] += cards
    standing, owner = state.standing, state.standing_seat
    if not state.plays or beats(cards, standing):
        standing, owner = cards, seat
    turn = _NEXT[seat]
    event: Event = {"type": "play", "seat": seat, "cards": list(cards)}
    new = State(
        state.round_index, state.scores, state.table, False, state.round_leader, True,
        tuple(hands), tuple(played), state.hands_won, state.history, state.leader, turn,
        state.hand_size, standing, owner, (*state.plays, (seat, cards)), (event,),
    )  # fmt: skip
    if turn == state.leader:
        events = [event]
        _end_hand(new, events)
        new.events = tuple(events)
    return new


def _end_hand(new: State, events: list[Event]) -> None:
    winner = new.standing_seat
    events.append(
        {
            "type": "hand",
            "winner": winner,
            "cards": list(new.standing),
            "plays": [[seat, list(cards)] for seat, cards in new.plays],
        }
    )
    won = list(new.hands_won)
    won[winner] += 1
    new.hands_won = tuple(won)
    new.history += ((winner, new.plays),)
    new.hand_size -= len(new.standing)
    new.leader = new.turn = winner
    new.standing, new.plays = (), ()
    if new.hand_size == 1:
        _end_round(new, events)


# 3. Round end


def _end_round(new: State, events: list[Event]) -> None:
    last_cards = [hand[0] for hand in new.hands]
    points = [VALUE[card] for card in last_cards]
    new.scores = tuple(total + gain for total, gain in zip(new.scores, points, strict=True))
    new.table = tuple((*cards, card) for cards, card in zip(new.table, last_cards, strict=True))
    event: Event = {
        "type": "round_end",
        "round": new.round_index,
        "last_cards": last_cards,
        "points": points,
        "scores": list(new.scores),
        "hands_won": list(new.hands_won),
    }
    events.append(event)
    new.round_index += 1
    new.dealt = False
    empty = ((),) * NUM_PLAYERS
    new.hands, new.played, new.history = empty, empty, ()
    new.hands_won = (0,) * NUM_PLAYERS
    if new.round_index == ROUNDS:
        new.over = True
        ranks = _ranks(new)
        events.append(
            {"type": "game_end", "scores": list(new.scores), "ranks": list(ranks), "aborted": False}
        )
        return
    previous = new.round_leader
    assert previous is not None
    new.round_leader = event["next_leader"] = next_leader(new.scores, new.table, previous)
    new.leader = new.turn = new.standing_seat = new.round_leader


def next_leader(scores: tuple[int, ...], table: tuple[tuple[Card, ...], ...], previous: int) -> int:
    """R-3.1: the fewest points leads; ties: the lower latest last card, then the one before;
    still tied, the first of them clockwise after the previous leader (R-3.7)."""
    best = min(_standing_key(scores, table, seat) for seat in range(NUM_PLAYERS))
    for step in range(1, NUM_PLAYERS + 1):
        seat = (previous + step) % NUM_PLAYERS
        if _standing_key(scores, table, seat) == best:
            return seat
    raise AssertionError("unreachable")


def _standing_key(
    scores: tuple[int, ...], table: tuple[tuple[Card, ...], ...], seat: int
) -> tuple[int, tuple[int, ...]]:
    """Lower is better: the total, then the last cards' values from the latest back."""
    return scores[seat], tuple(VALUE[card] for card in reversed(table[seat]))


# 4. Game end


def _ranks(state: State) -> tuple[int, ...]:
    # competition_ranks ranks larger keys first, so negate the lower-is-better key.
    keys = []
    for seat in range(NUM_PLAYERS):
        total, lasts = _standing_key(state.scores, state.table, seat)
        keys.append((-total, tuple(-value for value in lasts)))
    return competition_ranks(keys)


def result(state: State) -> Result | None:
    """Totals and ranks (lowest total first, R-3.5) once the seventh round is over."""
    if not state.over:
        return None
    return Result(state.scores, _ranks(state))


# Information state (RULES.md §5)


@dataclass(slots=True)
class InfoState:
    """What one seat knows: the public table and its own hand, nothing else."""

    # The game: id, this seat, players, options, totals so far, and the last cards on the
    # table per seat (earlier rounds, oldest first; their values are the points).
    game: str
    seat: int
    num_players: int
    options: tuple[tuple[str, Any], ...]
    scores: tuple[int, ...]
    table: tuple[tuple[Card, ...], ...]
    # The round: its index (0-based, of 7), who led its first hand, the hands so far as
    # (winner, ((seat, set), ...)), hands won per seat, and every card each seat played in it.
    round_index: int
    round_leader: int | None
    history: tuple[tuple[int, tuple[Play, ...]], ...]
    hands_won: tuple[int, ...]
    played: tuple[tuple[Card, ...], ...]
    # The hand being played: its leader, the cards each seat held when it began, the set size
    # (0 before the lead), the standing set and its owner (None before the lead), the plays.
    leader: int
    hand_size: int
    set_size: int
    standing: tuple[Card, ...]
    standing_seat: int | None
    plays: tuple[Play, ...]
    # This seat's own cards, sorted by (value, suit order).
    hand: tuple[Card, ...]


def information_state(state: State, seat: int) -> InfoState:
    """The seat's view (RULES.md §5): its own hand and everything public."""
    return InfoState(
        GAME_ID, seat, NUM_PLAYERS, (), state.scores, state.table, state.round_index,
        state.round_leader, state.history, state.hands_won, state.played, state.leader,
        state.hand_size, len(state.standing), state.standing,
        state.standing_seat if state.plays else None, state.plays, state.hands[seat],
    )  # fmt: skip


# Greedy policy


def greedy(info: InfoState, legal: tuple[Action, ...]) -> Action:
    """Keep the lowest card for the end; lead the biggest, highest set; beat as cheaply as able."""
    if len(legal) == 1:
        return legal[0]
    # The last card is the points, so the lowest card is kept. Laying low would give it up: a
    # big, high lead makes the others lay low (they lose their lowest cards), and beating
    # cheaply keeps the high cards that beat later hands. Measured against random, against
    # low leads and against itself, this beats the variants tried (leading low, beating high).
    lowest = info.hand[0]
    sets = [action for action in legal if isinstance(action, tuple) and lowest not in action]
    sets = sets or [action for action in legal if isinstance(action, tuple)]
    if not info.plays:
        return max(sets, key=lambda cards: (len(cards), VALUE[cards[0]]))
    return min(sets, key=lambda cards: sum(VALUE[card] for card in cards))


GAME = Game.of_module(
    sys.modules[__name__], id=GAME_ID, title="Black Sevens", players=PLAYERS, higher_is_better=False
)
