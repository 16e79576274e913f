"""What the other players' bids say of their hands: a likelihood for each placement of the unseen cards.

The constraints of a world are facts (a seat that did not follow has none of the suit); a bid is
a choice, and says only what a player of some kind would likely bid with that hand. The model
here is the engine's own estimate of a hand's tricks (the one the greedy policy bids by): a seat
that bid `b` with a hand worth `e` tricks did so with likelihood exp(-(b - e)^2 / (2 spread^2)).
It fits the built-in bots well and sensible players roughly; a bot that knows better of its
opponents writes its own `Belief` (a placement -> a weight in (0, 1]).

Each hand is taken as it was when bid: what the seat holds in the world plus what it has played
this round.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from referee.botkit.worlds import bidding, oh7
from referee.botkit.worlds.base import Belief, Placement
from referee.engine.games import bidding as bidding_rules
from referee.engine.games import oh7 as oh7_rules

SPREAD = 1.0
"""How far (in tricks) a bid strays from the hand's estimate, typically."""


def bid_belief(info: Any, spread: float = SPREAD) -> Belief | None:
    """The likelihood of the others' bids (Oh Hell!, 7Up7Down) or bet cards (Oh 7?) in a placement;
    None when no other player has bid yet, in a blind round, or in a game without bids."""
    if info.game in ("oh-hell", "seven-up-seven-down"):
        return _bidding_belief(info, spread)
    if info.game.startswith("oh7"):
        return _oh7_belief(info, spread)
    return None


def _gaussian(spread: float) -> Callable[[float], float]:
    scale = -1.0 / (2.0 * spread * spread)
    return lambda miss: math.exp(scale * miss * miss)


def _bidding_belief(info: Any, spread: float) -> Belief | None:
    if info.visible_cards:  # a blind round: bids follow the others' cards, not one's own
        return None
    bidders = [(seat, bid) for seat, bid in enumerate(info.bids) if bid is not None and seat != info.seat]
    if not bidders:
        return None
    played: list[list[str]] = [[] for _ in range(info.num_players)]
    for seat, card in bidding.round_plays(info):
        played[seat].append(card)
    likelihood, trump, n = _gaussian(spread), info.trump, info.num_players
    strength = bidding_rules.hand_strength

    def belief(placement: Placement) -> float:
        weight = 1.0
        for seat, bid in bidders:
            hand = (*placement.hands[seat], *played[seat])
            weight *= likelihood(bid - strength(hand, trump, n))
        return weight

    return belief


def _oh7_belief(info: Any, spread: float) -> Belief | None:
    bettors = [
        (seat, tuple(oh7_rules.VALUE[card] for card in cards))
        for seat, cards in enumerate(info.bet_cards)
        if cards and seat != info.seat
    ]
    if not bettors:
        return None
    played: list[list[str]] = [[] for _ in range(info.num_seats)]
    for seat, card in oh7.round_plays(info):
        played[seat].append(card)
    likelihood, seats = _gaussian(spread), info.num_seats
    estimate = oh7_rules.estimate_tricks

    def belief(placement: Placement) -> float:
        weight = 1.0
        for seat, values in bettors:
            worth = estimate((*placement.hands[seat], *played[seat]), seats)
            for value in values:
                weight *= likelihood(value - worth)
        return weight

    return belief
