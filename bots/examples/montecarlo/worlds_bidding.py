"""Worlds of the exact-bid games (Oh Hell!, 7Up7Down) consistent with one seat's view.

Public: the seat's own hand (in a blind one-card round, the others' cards instead, R-4.4), the
trump card, the bids, and every card played this round with who played it. Unseen: the other
hands (or, blind, the seat's own card) and the undealt deck. A seat that did not follow the led
suit has none of it left.
"""

from __future__ import annotations

import random

from deal import deal_hidden

from referee.engine.cards import DECK_52
from referee.games import oh_hell, seven_up_seven_down
from referee.games.bidding import DECK_ORDER, BiddingInfo, Phase, State

RULES = {oh_hell.GAME_ID: oh_hell.RULES, seven_up_seven_down.GAME_ID: seven_up_seven_down.RULES}


def voids(info: BiddingInfo) -> dict[int, set[str]]:
    """Seat -> the suits it has shown it no longer holds (it played another suit on their lead)."""
    shown: dict[int, set[str]] = {seat: set() for seat in range(info.num_players)}
    for trick in (*info.tricks, info.trick):
        if not trick:
            continue
        led = trick[0][1][1]
        for seat, card in trick[1:]:
            if card[1] != led:
                shown[seat].add(led)
    return shown


def sample_world(info: BiddingInfo, rng: random.Random) -> State:
    """A full state of this round whose information state for `info.seat` is `info`."""
    n, seat = info.num_players, info.seat
    plays = [play for trick in (*info.tricks, info.trick) for play in trick]
    played_by = [sum(1 for who, _ in plays if who == other) for other in range(n)]
    hands: list[list[str]] = [list(info.hand) if other == seat else [] for other in range(n)]
    for other, card in info.visible_cards:  # a blind round: the others' cards are known
        hands[other] = [card]
    seen = {card for _, card in plays} | {info.trump_card} | {card for hand in hands for card in hand}
    counts = {
        other: info.hand_size - played_by[other]
        for other in range(n)
        if not hands[other] and info.hand_size > played_by[other]
    }
    shown = voids(info)
    forbidden = {
        other: {card for card in DECK_52 if card[1] in shown[other]} for other in counts if shown[other]
    }
    pool = [card for card in DECK_52 if card not in seen]
    dealt, _ = deal_hidden(pool, counts, rng, forbidden=forbidden)
    for other, cards in dealt.items():
        hands[other] = cards
    rules = RULES[info.game]
    return State(
        rules,
        n,
        rules.hand_sizes(n),
        info.scores,
        info.round,
        Phase.BID if None in info.bids else Phase.PLAY,
        info.dealer,
        info.hand_size,
        info.trump_card,
        info.trump,
        tuple(tuple(sorted(hand, key=DECK_ORDER.__getitem__)) for hand in hands),
        info.bids,
        seat,
        info.leader,
        info.trick,
        info.tricks,
        info.tricks_won,
    )
