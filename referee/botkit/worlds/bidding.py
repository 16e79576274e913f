"""Worlds of the exact-bid games (Oh Hell!, 7Up7Down) consistent with one seat's view.

Public: the seat's own hand (in a blind one-card round, the others' cards instead, R-4.4), the
trump card, the bids, and every card played this round with who played it. Unseen: the other
hands (or, blind, the seat's own card) and the undealt deck. A seat that did not follow the led
suit has none of it left.
"""

from __future__ import annotations

from referee.botkit.worlds.base import Placement, Worlds
from referee.botkit.worlds.dealing import Constraints
from referee.engine.cards import DECK_52
from referee.engine.games import oh_hell, seven_up_seven_down
from referee.engine.games.base import Card
from referee.engine.games.bidding import DECK_ORDER, BiddingInfo, Phase, Play, State

RULES = {oh_hell.GAME_ID: oh_hell.RULES, seven_up_seven_down.GAME_ID: seven_up_seven_down.RULES}
_SUIT_CARDS = {suit: frozenset(card for card in DECK_52 if card[1] == suit) for suit in "SHDC"}


def round_plays(info: BiddingInfo) -> list[Play]:
    """Every card played this round, in order, with who played it."""
    return [play for trick in (*info.tricks, info.trick) for play in trick]


def voids(info: BiddingInfo) -> list[str]:
    """Per seat: the suits it has shown it no longer holds (it played another on their lead), in
    the order first shown."""
    shown: list[str] = [""] * info.num_players
    for trick in (*info.tricks, info.trick):
        if not trick:
            continue
        led = trick[0][1][1]
        for seat, card in trick[1:]:
            if card[1] != led and led not in shown[seat]:
                shown[seat] += led
    return shown


def constraints(info: BiddingInfo) -> Constraints:
    """The unseen cards, how many each seat holds, and the suits each has shown it lacks."""
    n, seat = info.num_players, info.seat
    played_by = [0] * n
    for who, _ in round_plays(info):
        played_by[who] += 1
    known: list[tuple[Card, ...]] = [() for _ in range(n)]
    known[seat] = info.hand
    for other, card in info.visible_cards:  # a blind round: the others' cards are known
        known[other] = (card,)
    held = info.hand_size
    counts = tuple(
        0 if known[other] or held == played_by[other] else held - played_by[other] for other in range(n)
    )
    seen = {card for _, card in round_plays(info)} | {info.trump_card}
    seen.update(card for cards in known for card in cards)
    pool = tuple(card for card in DECK_52 if card not in seen)
    forbidden = tuple(
        frozenset().union(*(_SUIT_CARDS[suit] for suit in lacking)) if counts[other] else frozenset()
        for other, lacking in enumerate(voids(info))
    )
    return Constraints(pool, counts, forbidden, tuple(known))


def build(info: BiddingInfo, placement: Placement) -> State:
    """The state of this round in which the seats hold `placement.hands`, at the seat's decision."""
    rules = RULES[info.game]
    key = DECK_ORDER.__getitem__
    return State(
        rules=rules,
        num_players=info.num_players,
        hand_sizes=rules.hand_sizes(info.num_players),
        scores=info.scores,
        round_index=info.round,
        phase=Phase.BID if None in info.bids else Phase.PLAY,
        dealer=info.dealer,
        hand_size=info.hand_size,
        trump_card=info.trump_card,
        trump=info.trump,
        hands=tuple(tuple(sorted(hand, key=key)) for hand in placement.hands),
        bids=info.bids,
        to_act=_to_act(info),
        leader=info.leader,
        trick=info.trick,
        tricks=info.tricks,
        tricks_won=info.tricks_won,
    )


def _to_act(info: BiddingInfo) -> int:
    """Who is to act: the next bidder from the dealer's left, else the next player of the trick."""
    n = info.num_players
    if None in info.bids:
        return (info.dealer + 1 + sum(bid is not None for bid in info.bids)) % n
    return (info.leader + len(info.trick)) % n


def worlds(info: BiddingInfo) -> Worlds:
    """The worlds of an Oh Hell! or 7Up7Down seat at its decision."""
    return Worlds(info, constraints(info), lambda placement: build(info, placement))
