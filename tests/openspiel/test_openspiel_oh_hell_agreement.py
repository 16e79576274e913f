"""Septet's oh-hell through the adapter and OpenSpiel's built-in `oh_hell` agree, hand by hand.

The hand shapes both support are the first hands of Septet's games: 10 tricks with 3-5 players, 8
with 6, 7 with 7 (OpenSpiel's `num_tricks_fixed`). The two rulebooks differ in three ways, which
the comparison translates and nothing else:

- who leads the first trick: Septet's dealer (RULES.md §2), OpenSpiel's player left of its dealer.
  So Septet's dealer is drawn as the seat left of OpenSpiel's, and the same seat leads in both;
- hence the bidding order (each starts left of its own dealer). Both refuse the last bid that
  makes the bids total the hand size, so a set of bids is legal in one exactly when it is in the
  other: the same bids are made, each game in its own order, and each bid must be legal in both;
- the score: Septet's 10 x bid for an exact bid (10 for a made 0), -10 per trick missed by;
  OpenSpiel's (defaults) 1 per trick won plus 10 for an exact bid. Both come from the same bid
  and tricks won, which OpenSpiel's return tells.

Cards are dealt identically (card k to player k mod n, then the trump card), with OpenSpiel's card
ids (rank x 4 + suit, suits C D S H) translated to Septet's. Then at every card played: the same
player to move (so the same trick winners) and the same legal cards.
"""

from __future__ import annotations

import random

import pyspiel
import pytest

import referee.openspiel  # noqa: F401  (registers septet_oh_hell)
from referee.engine.games import oh_hell
from referee.pettingzoo.encoding import CARD_INDEX

OPENSPIEL_SUITS = "CDSH"
RANKS = "23456789TJQKA"
BID = 52
"""Both games' action id of bid 0 (a bid b is BID + b)."""
SHAPES = [(players, oh_hell.hand_sizes(players)[0]) for players in range(3, 8)]


def septet_card(openspiel_card: int) -> int:
    """OpenSpiel's `oh_hell` card id -> the adapter's (the PettingZoo encoding's card column)."""
    rank, suit = divmod(openspiel_card, len(OPENSPIEL_SUITS))
    return CARD_INDEX[RANKS[rank] + OPENSPIEL_SUITS[suit]]


def septet_score(bid: int, openspiel_return: float) -> int:
    """Septet's points of a hand from OpenSpiel's return for it (tricks won + 10 if exact)."""
    exact = openspiel_return >= 10
    tricks = int(openspiel_return) - 10 * exact
    assert (bid == tricks) == exact
    return oh_hell.score(bid, tricks)


def bid_vector(rng: random.Random, players: int, tricks: int) -> list[int]:
    """Random bids whose total is not the hand size (the only total both games refuse)."""
    while True:
        bids = [rng.randint(0, tricks) for _ in range(players)]
        if sum(bids) != tricks:
            return bids


@pytest.mark.parametrize(("players", "tricks"), SHAPES)
def test_septet_and_openspiel_play_the_same_hands_alike(players: int, tricks: int) -> None:
    theirs_game = pyspiel.load_game("oh_hell", {"players": players, "num_tricks_fixed": tricks})
    ours_game = pyspiel.load_game("septet_oh_hell", {"players": players, "returns": "scores"})
    for seed in range(6):
        rng = random.Random(f"{players}/{seed}")
        theirs, ours = theirs_game.new_initial_state(), ours_game.new_initial_state()
        theirs.apply_action(theirs.chance_outcomes()[0][0])  # the fixed number of tricks
        dealer = rng.randrange(players)
        theirs.apply_action(dealer)
        ours.apply_action((dealer + 1) % players)
        while theirs.is_chance_node():  # every card, then the trump card
            outcomes = [card for card, _ in theirs.chance_outcomes()]
            assert sorted(map(septet_card, outcomes)) == [card for card, _ in ours.chance_outcomes()]
            card = rng.choice(outcomes)
            theirs.apply_action(card)
            ours.apply_action(septet_card(card))
        assert not ours.is_chance_node()

        bids = bid_vector(rng, players, tricks)
        for state in (theirs, ours):
            for _ in range(players):
                bid = BID + bids[state.current_player()]
                assert bid in state.legal_actions()
                state.apply_action(bid)

        while not theirs.is_terminal():
            assert ours.current_player() == theirs.current_player()
            legal = sorted(septet_card(card) for card in theirs.legal_actions())
            assert ours.legal_actions() == legal
            card = rng.choice(theirs.legal_actions())
            theirs.apply_action(card)
            ours.apply_action(septet_card(card))
        assert ours.is_chance_node(), "the hand is over: Septet's game deals the next one"
        scores = ours.information_state_of(0).scores
        assert list(scores) == [septet_score(bids[seat], theirs.returns()[seat]) for seat in range(players)]
