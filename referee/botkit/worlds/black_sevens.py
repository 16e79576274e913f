"""Worlds of Black Sevens consistent with one seat's view.

Public: the seat's own hand, every set played this round with who played it, and the last cards
on the table, which stay out of the deck until the game is over (R-3.9). Unseen: the other hands
and the cards left undealt (24 in round 1, none in round 7).

A seat that laid low (R-3.4) could not beat the standing set and gave up its lowest cards: every
card it still holds ranks above them, and against a single card it held no card of that value or
more (both constraints on the deal); against a larger set, the hand it held then had no beating
set (a check of the whole hand: a deal breaking it is dealt again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from referee.botkit.worlds.base import Placement, Worlds
from referee.botkit.worlds.dealing import Constraints
from referee.engine.cards import DECK_52
from referee.engine.games.base import Card
from referee.engine.games.black_sevens import (
    HAND_SIZE,
    ORDER,
    VALUE,
    InfoState,
    Play,
    State,
    beating_sets,
    beats,
    sort_cards,
)


@dataclass(frozen=True, slots=True)
class LayLow:
    """A lay-low of this round: who, the standing set it could not beat, the cards it gave up,
    and every card it played from then on (those included)."""

    seat: int
    standing: tuple[Card, ...]
    laid: tuple[Card, ...]
    played_since: tuple[Card, ...]


def round_plays(info: InfoState) -> list[Play]:
    """Every set played this round, in order, with who played it."""
    return [play for _, plays in info.history for play in plays] + list(info.plays)


def lay_lows(info: InfoState) -> list[LayLow]:
    """Every lay-low of this round, in order."""
    plays = round_plays(info)
    found: list[LayLow] = []
    index = 0
    for hand_plays in [plays for _, plays in info.history] + [info.plays]:
        standing: tuple[Card, ...] = ()
        for seat, cards in hand_plays:
            if not standing or beats(cards, standing):
                standing = cards
            else:
                since = tuple(card for who, later in plays[index:] if who == seat for card in later)
                found.append(LayLow(seat, standing, cards, since))
            index += 1
    return found


def constraints(info: InfoState) -> Constraints:
    """The unseen cards (never a last card on the table), how many each seat holds, and the cards
    a lay-low rules out."""
    seat = info.seat
    seen = set(info.hand) | {card for cards in info.played for card in cards}
    seen |= {card for cards in info.table for card in cards}  # out of play until the game ends
    pool = tuple(card for card in DECK_52 if card not in seen)
    counts = tuple(
        0 if other == seat else HAND_SIZE - len(info.played[other]) for other in range(info.num_players)
    )
    floors = [0] * info.num_players
    ceilings = [10**6] * info.num_players
    for low in lay_lows(info):
        floors[low.seat] = max(floors[low.seat], *(ORDER[card] for card in low.laid))
        if len(low.standing) == 1:  # it held no single card of the standing value or above
            ceilings[low.seat] = min(ceilings[low.seat], VALUE[low.standing[0]])
    forbidden = tuple(
        frozenset(card for card in pool if ORDER[card] < floors[other] or VALUE[card] >= ceilings[other])
        if counts[other]
        else frozenset()
        for other in range(info.num_players)
    )
    known = tuple(info.hand if other == seat else () for other in range(info.num_players))
    return Constraints(pool, counts, forbidden, known)


def hand_check(info: InfoState) -> tuple[LayLow, ...]:
    """The lay-lows against sets of two or more cards by seats other than this one: the ones whose
    whole hand a world must check."""
    return tuple(low for low in lay_lows(info) if low.seat != info.seat and len(low.standing) > 1)


def explains(lows: Sequence[LayLow], seat: int, hand: Sequence[Card]) -> bool:
    """Whether `hand` (a seat's cards now) could not have beaten any set that seat laid low to."""
    for low in lows:
        if low.seat == seat and beating_sets(sort_cards([*hand, *low.played_since]), low.standing):
            return False
    return True


def build(info: InfoState, placement: Placement) -> State:
    """The state of this round in which the seats hold `placement.hands`, at the seat's decision."""
    return State(
        round_index=info.round_index,
        scores=info.scores,
        table=info.table,
        over=False,
        round_leader=info.round_leader,
        dealt=True,
        hands=tuple(sort_cards(hand) for hand in placement.hands),
        played=info.played,
        hands_won=info.hands_won,
        history=info.history,
        leader=info.leader,
        turn=(info.leader + len(info.plays)) % info.num_players,
        hand_size=info.hand_size,
        standing=info.standing,
        standing_seat=info.leader if info.standing_seat is None else info.standing_seat,
        plays=info.plays,
    )


def worlds(info: InfoState) -> Worlds:
    """The worlds of a Black Sevens seat at its decision."""
    lows = hand_check(info)
    check = (lambda seat, hand: explains(lows, seat, hand)) if lows else None
    return Worlds(info, constraints(info), lambda placement: build(info, placement), check)
