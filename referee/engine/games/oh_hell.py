"""Oh Hell! (RULES.md §2): bid the exact number of tricks you will take.

1. Deal: 10 cards each with 3-5 players, 8 with 6, 7 with 7; one fewer each hand down to 1, then
   back up to the start. The first dealer is drawn (R-2.1), then the deal rotates clockwise. The
   top card left on the deck is turned up: its suit is trump; the card itself is not in play.
2. Bid: from the dealer's left, clockwise, the dealer last; bids 0..hand size, final once made
   (R-2.2). The dealer may not bid the number that makes the bids total the hand size.
3. Play: the dealer leads the first trick. Follow suit if able, else any card (trump need not be
   broken). Highest trump, else highest card of the led suit, wins and leads the next trick.
4. Score: an exact bid b scores 10 x b, and a made 0 bid scores 10; a miss loses 10 per trick of
   difference. After the last hand the highest total wins. A tie for the top deals extra hands at
   the starting size until one leader remains; after 10 extra hands the tied players share rank 1
   (R-2.3). R-2.4 Every player plays the extra hands, scored as usual (any player can still win),
   and the deal keeps rotating; the totals are checked again after each one.
"""

from __future__ import annotations

import random
import sys
from typing import Any

from referee.engine.games import bidding
from referee.engine.games.base import Action, ChanceOutcome, Game, Options
from referee.engine.games.bidding import BiddingInfo, State

GAME_ID = "oh-hell"
PLAYERS = range(3, 8)
EXTRA_HANDS = 10

InfoState = BiddingInfo


# 1. Deal


def hand_sizes(num_players: int) -> tuple[int, ...]:
    """The hands of a game: 10..1..10 with 3-5 players (19 hands), 8..1..8 (15), 7..1..7 (13)."""
    start = {6: 8, 7: 7}.get(num_players, 10)
    return (*range(start, 0, -1), *range(2, start + 1))


def score(bid: int, tricks: int) -> int:
    """10 per trick of an exact bid (a made 0 scores 10); minus 10 per trick missed by."""
    if bid == tricks:
        return 10 * bid if bid else 10
    return -10 * abs(bid - tricks)


RULES = bidding.Rules(
    game_id=GAME_ID,
    players=PLAYERS,
    hand_sizes=hand_sizes,
    first_leader=0,  # the dealer leads the first trick
    score=score,
    extra_hands=EXTRA_HANDS,
)


def new_game(num_players: int, options: Options, *, scores: Any = None, round_index: int = 0) -> State:
    """A game waiting for its first deal (which draws the first dealer, R-2.1)."""
    return bidding.new_game(RULES, num_players, options, scores, round_index)


def sample_chance(state: State, rng: random.Random) -> ChanceOutcome:
    """Shuffle and deal; the top card left on the deck is the trump card.

    `{"dealer": 2, "hands": [["TH", ...], ...], "trump_card": "4C"}`; "dealer" only in the
    game's first deal (R-2.1), later deals rotate it.
    """
    outcome, deck = bidding.shuffled_deal(state, rng)
    outcome["trump_card"] = deck[0]
    return outcome


# 2. Bid and 3. Play: the shared exact-bid engine.
to_move = bidding.to_move
legal_actions = bidding.legal_actions
apply = bidding.apply
information_state = bidding.information_state

# 4. Score
result = bidding.result


def greedy(info: BiddingInfo, legal: tuple[Action, ...]) -> Action:
    """Bid the hand's expected tricks (the nearest allowed bid), then play to make it exactly."""
    return bidding.greedy(info, legal)


GAME = Game.of_module(sys.modules[__name__], id=GAME_ID, title="Oh Hell!", players=PLAYERS)
