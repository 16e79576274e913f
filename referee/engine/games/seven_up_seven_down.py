"""7Up7Down (RULES.md §4): 14 rounds of 7 cards down to 1 and back up; bid your exact tricks.

1. Deal: 2-7 players (R-4.1); hand sizes 7 6 5 4 3 2 1 1 2 3 4 5 6 7. The first dealer is drawn,
   then the deal rotates clockwise. One card drawn at random from the undealt cards is turned up:
   its suit is trump (R-4.2).
2. Bid: from the dealer's left, clockwise, the dealer last; the bids may not total the hand size.
   In the one-card rounds each player sees every other player's card but not their own (R-4.4).
3. Play: the player to the dealer's left leads the first trick. Follow suit if able, else any
   card. Highest trump, else highest card of the led suit, wins and leads the next trick. A
   one-card round's single trick is forced (R-0.2). R-4.6 The card stays on the forehead until it
   is played: its owner's information state never shows it before it is in the trick.
4. Score: an exact bid b > 0 scores 15 x b, an exact 0 scores 10 (R-4.3); a miss scores 0.
   After round 14 the highest total wins; tied players share the rank (R-4.5).
"""

from __future__ import annotations

import random
import sys
from typing import Any

from referee.engine.cards import DECK_52
from referee.engine.games import bidding
from referee.engine.games.base import Action, ChanceOutcome, Game, Options
from referee.engine.games.bidding import BiddingInfo, State
from referee.engine.tricks import trick_winner

GAME_ID = "seven-up-seven-down"
PLAYERS = range(2, 8)
HAND_SIZES = (7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7)

InfoState = BiddingInfo


# 1. Deal


def hand_sizes(num_players: int) -> tuple[int, ...]:
    """The 14 rounds' hand sizes, whatever the number of players."""
    return HAND_SIZES


def score(bid: int, tricks: int) -> int:
    """15 per trick of an exact bid, 10 for an exact 0 (R-4.3); a miss scores nothing."""
    if bid != tricks:
        return 0
    return 15 * bid if bid else 10


RULES = bidding.Rules(
    game_id=GAME_ID,
    players=PLAYERS,
    hand_sizes=hand_sizes,
    first_leader=1,  # the player to the dealer's left leads the first trick
    score=score,
    blind_one_card_rounds=True,
)


def new_game(num_players: int, options: Options, *, scores: Any = None, round_index: int = 0) -> State:
    """A game waiting for its first deal (which draws the first dealer)."""
    return bidding.new_game(RULES, num_players, options, scores, round_index)


def sample_chance(state: State, rng: random.Random) -> ChanceOutcome:
    """Shuffle and deal, then draw the trump card at random from the undealt cards (R-4.2).

    `{"dealer": 2, "hands": [["TH", ...], ...], "trump_card": "4C"}`; "dealer" only in the
    game's first deal, later deals rotate it.
    """
    outcome, undealt = bidding.shuffled_deal(state, rng)
    outcome["trump_card"] = undealt[rng.randrange(len(undealt))]
    return outcome


# 2. Bid and 3. Play: the shared exact-bid engine.
to_move = bidding.to_move
legal_actions = bidding.legal_actions
apply = bidding.apply
information_state = bidding.information_state

# 4. Score
result = bidding.result


def blind_win_chance(info: BiddingInfo) -> float:
    """R-4.4: the chance that the seat's unseen card wins the one trick, given the others' cards.

    The unseen card is any card the seat cannot see (not the others' cards, not the trump card);
    each is tried in the seat's place in the trick, which the player left of the dealer leads.
    """
    others = dict(info.visible_cards)
    seen = {*others.values(), info.trump_card}
    order = [(info.leader + offset) % info.num_players for offset in range(info.num_players)]
    place = order.index(info.seat)
    cards = [others.get(seat, "") for seat in order]
    unseen = [card for card in DECK_52 if card not in seen]
    wins = 0
    for card in unseen:
        cards[place] = card
        wins += trick_winner(cards, info.trump) == place
    return wins / len(unseen)


def greedy(info: BiddingInfo, legal: tuple[Action, ...]) -> Action:
    """Bid expected tricks (one-card rounds: from the others' cards), then play to make it."""
    if isinstance(legal[0], int) and info.visible_cards and not info.hand:
        return bidding.nearest_bid(blind_win_chance(info), legal)
    return bidding.greedy(info, legal)


GAME = Game.of_module(sys.modules[__name__], id=GAME_ID, title="7Up7Down", players=PLAYERS)
