"""Worlds of Black Sevens consistent with one seat's view.

Public: the seat's own hand, every set played this round with who played it, and the last cards
on the table, which stay out of the deck until the game is over (R-3.9). Unseen: the other hands
and the cards left undealt (24 in round 1, none in round 7). A seat that laid low (R-3.4) could
not beat the standing set and gave up its lowest cards: every card it still holds ranks above
them, and the hand it held then had no beating set. The first is a constraint on the deal; the
second is checked after it, and a world that breaks it is drawn again.
"""

from __future__ import annotations

import random

from deal import deal_hidden

from referee.engine.cards import DECK_52
from referee.games.black_sevens import (
    ORDER,
    VALUE,
    InfoState,
    Play,
    State,
    beating_sets,
    beats,
    sort_cards,
)

REDRAWS = 200
"""Worlds drawn again when a lay-low could have beaten in them; then the last one is kept."""


def lay_lows(info: InfoState) -> list[tuple[int, int, tuple[str, ...]]]:
    """Every lay-low of this round as (index of the play this round, seat, standing set it faced)."""
    found = []
    index = 0
    for plays in [hand_plays for _, hand_plays in info.history] + [info.plays]:
        standing: tuple[str, ...] = ()
        for seat, cards in plays:
            if not standing or beats(cards, standing):
                standing = cards
            else:
                found.append((index, seat, standing))
            index += 1
    return found


def _round_plays(info: InfoState) -> list[Play]:
    return [play for _, plays in info.history for play in plays] + list(info.plays)


def consistent(info: InfoState, hands: list[tuple[str, ...]]) -> bool:
    """Whether no lay-low of this round could have beaten with the hand this world gives it."""
    plays = _round_plays(info)
    for index, other, standing in lay_lows(info):
        later = [card for who, cards in plays[index:] if who == other for card in cards]
        if other != info.seat and beating_sets(sort_cards([*hands[other], *later]), standing):
            return False
    return True


def sample_world(info: InfoState, rng: random.Random) -> State:
    """A full state of this round whose information state for `info.seat` is `info`."""
    seat = info.seat
    seen = set(info.hand) | {card for cards in info.played for card in cards}
    seen |= {card for cards in info.table for card in cards}  # out of play: never sampled
    pool = [card for card in DECK_52 if card not in seen]
    counts = {other: 7 - len(info.played[other]) for other in range(info.num_players) if other != seat}
    forbidden: dict[int, set[str]] = {other: set() for other in counts}
    plays = _round_plays(info)
    for index, other, standing in lay_lows(info):
        if other == seat:
            continue
        laid = plays[index][1]
        floor = max(ORDER[card] for card in laid)
        forbidden[other] |= {card for card in pool if ORDER[card] < floor}
        if len(standing) == 1:  # it held no single card of the standing value or above
            forbidden[other] |= {card for card in pool if VALUE[card] >= VALUE[standing[0]]}
    hands: list[tuple[str, ...]] = []
    for _ in range(REDRAWS):
        dealt, _ = deal_hidden(pool, counts, rng, forbidden=forbidden)
        hands = [
            info.hand if other == seat else sort_cards(dealt[other]) for other in range(info.num_players)
        ]
        if consistent(info, hands):
            break
    return State(
        info.round_index,
        info.scores,
        info.table,
        False,
        info.round_leader,
        True,
        tuple(hands),
        info.played,
        info.hands_won,
        info.history,
        info.leader,
        seat,
        info.hand_size,
        info.standing,
        info.leader if info.standing_seat is None else info.standing_seat,
        info.plays,
    )
