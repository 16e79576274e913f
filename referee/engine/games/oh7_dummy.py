"""The Dummy of Oh 7? for two (`oh7-duel`, RULES.md §1.4): seat 2, played by the game itself.

1. It always bets 2, with no card, and is never first leader.
2. Its pile is the 10 undealt cards, face down in shuffled order; after the bets, before the
   first trick, the top 2 are turned face up beside it (public).
3. Order: after winning a trick it leads the next, playing its pile's top card (its face-up cards
   stay), followed by the round's first leader, then the other player. Otherwise it plays last.
4. Playing last, it turns one more pile card up and plays one of its three face-up cards. Its
   candidates are the ones that follow suit like any player's (R-1.9), ordered low to high by
   (is trump, value, suit priority) (R-1.10):
   - it has won fewer than 2 tricks: the lowest winning candidate when it has won none, the
     highest when it has won one; if none wins, the lowest candidate;
   - it has won 2 or more: the highest losing candidate; if none loses, the highest.
5. R-1.11 Its loss |2 - its tricks| counts in the basket; it scores nothing and has no rank.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from referee.engine.games.base import Card

SEAT = 2
BET = 2
FACE_UP = 2
"""Pile cards turned face up after the bets; each trick then uses one more, so 2 + 7 <= 10."""

_PRIORITY = {"S": 4, "H": 3, "C": 2, "D": 1, "F": 0}


def trick_order(leader: int, first_leader: int) -> tuple[int, int, int]:
    """The seats in playing order of a trick led by `leader` (players are seats 0 and 1)."""
    if leader == SEAT:
        return (SEAT, first_leader, 1 - first_leader)
    return (leader, 1 - leader, SEAT)


def choose(candidates: Sequence[Card], wins: Collection[Card], trump: str | None, won: int) -> Card:
    """The card the Dummy plays last: `candidates` are its legal face-up cards, `wins` those of
    them that would win the trick, `won` the tricks it has won this round."""

    def low_to_high(card: Card) -> tuple[bool, int, int]:
        return (card[1] == trump, int(card[0]), _PRIORITY[card[1]])

    if won < BET:
        winning = [card for card in candidates if card in wins]
        if winning:
            return (min if won == 0 else max)(winning, key=low_to_high)
        return min(candidates, key=low_to_high)
    losing = [card for card in candidates if card not in wins]
    return max(losing or candidates, key=low_to_high)
