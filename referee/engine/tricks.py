"""Follow-suit and trick-winner rules of the plain trick games (Oh Hell!, 7Up7Down).

Both games use the same two rules on a 52-card deck, aces high: follow the led suit if able,
else play any card; the highest trump wins, else the highest card of the led suit.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.engine.cards import RANK_VALUE
from referee.engine.games.base import Card


def playable_cards(hand: Sequence[Card], led_suit: str | None) -> tuple[Card, ...]:
    """The cards of `hand` that may be played when `led_suit` was led (None: leading)."""
    if type(hand) is tuple:
        return playable_in(hand, led_suit)
    return playable_in(tuple(hand), led_suit)


def playable_in(hand: tuple[Card, ...], led_suit: str | None) -> tuple[Card, ...]:
    """`playable_cards` of a hand kept as a tuple (the games' own), without copying it when the
    whole hand may be played."""
    if led_suit is None:
        return hand
    following = [card for card in hand if card[1] == led_suit]
    if not following or len(following) == len(hand):
        return hand
    return tuple(following)


def trick_winner(cards: Sequence[Card], trump: str | None) -> int:
    """Index in `cards` (in play order) of the card that wins the trick."""
    best = 0
    best_card = cards[0]
    for index in range(1, len(cards)):
        card = cards[index]
        suit = card[1]
        best_suit = best_card[1]
        if suit == best_suit:
            if RANK_VALUE[card] > RANK_VALUE[best_card]:
                best, best_card = index, card
        elif suit == trump:  # the best card so far is of the led suit
            best, best_card = index, card
    return best


def play_winner(plays: tuple[tuple[int, Card], ...], trump: str | None) -> int:
    """The seat whose play wins a finished trick of (seat, card) plays in play order."""
    seat, best_card = plays[0]
    best_value = RANK_VALUE[best_card]
    for index in range(1, len(plays)):  # as trick_winner
        who, card = plays[index]
        suit = card[1]
        if suit == best_card[1]:
            value = RANK_VALUE[card]
            if value > best_value:
                seat, best_card, best_value = who, card, value
        elif suit == trump:  # the best card so far is of the led suit
            seat, best_card, best_value = who, card, RANK_VALUE[card]
    return seat
