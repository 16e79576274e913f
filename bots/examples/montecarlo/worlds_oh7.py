"""Worlds of Oh 7? (`oh7`, `oh7-advanced`, `oh7-duel`) consistent with one seat's view.

Public: the seat's own hand, every card bet with this round (R-1.1: bet cards stay in their
owners' hands until played), the Interrobang once revealed (R-1.4), the Dummy's face-up cards,
and every card played this round with who played it. Unseen: the other hands, the discard, and
the Dummy's face-down pile (whose order matters: the Dummy plays from its top). A player who
played a card that is neither special nor of the lead suit has no card of the lead suit left
(specials may always be played, so they show nothing).
"""

from __future__ import annotations

import random
from collections import Counter
from functools import cache

from deal import deal_hidden

from referee.games import oh7
from referee.games import oh7_dummy as dummy
from referee.games.base import Decision, DecisionKind
from referee.games.oh7 import ORDER, SPECIAL, SUIT, InfoState, Phase, Setup, State


@cache
def _setup(game: str, num_players: int, target: int) -> Setup:
    return oh7.new_game(num_players, {"variant": game, "target": target}).setup


def voids(info: InfoState) -> dict[int, set[str]]:
    """Player -> the suits it has shown it no longer holds."""
    shown: dict[int, set[str]] = {player: set() for player in range(info.num_players)}
    for trick in (*info.tricks, info.trick):
        lead: str | None = None
        for seat, card in trick:
            if card in SPECIAL:
                continue
            if lead is None:
                lead = SUIT[card]
            elif SUIT[card] != lead and seat != info.dummy:
                shown[seat].add(lead)
    return shown


def known_cards(info: InfoState) -> dict[int, Counter[str]]:
    """Other player -> the cards it is known to hold: bet cards (and a revealed `?`) not yet played."""
    plays = [play for trick in (*info.tricks, info.trick) for play in trick]
    known: dict[int, Counter[str]] = {}
    for player in range(info.num_players):
        if player == info.seat:
            continue
        holds = Counter(info.bet_cards[player])
        if info.revealer == player:
            holds["?"] = max(holds["?"], 1)
        holds.subtract(card for who, card in plays if who == player)
        known[player] = +holds
    return known


def sample_world(info: InfoState, rng: random.Random) -> State:
    """A full state of this round whose information state for `info.seat` is `info`."""
    setup = _setup(info.game, info.num_players, info.target)
    seat, n = info.seat, info.num_players
    plays = [play for trick in (*info.tricks, info.trick) for play in trick]
    known = known_cards(info)
    unseen = Counter(setup.counts)
    unseen.subtract(info.hand)
    unseen.subtract(card for _, card in plays)
    unseen.subtract(info.dummy_up)
    for holds in known.values():
        unseen.subtract(holds)
    pool = sorted(unseen.elements(), key=ORDER.__getitem__)
    played_by = Counter(who for who, _ in plays)
    counts = {player: oh7.HAND_SIZE - played_by[player] - holds.total() for player, holds in known.items()}
    shown = voids(info)
    forbidden = {player: {card for card in pool if SUIT[card] in shown[player]} for player in counts}
    dealt, rest = deal_hidden(pool, counts, rng, forbidden=forbidden)
    hands = [
        info.hand
        if player == seat
        else tuple(sorted([*known[player].elements(), *dealt[player]], key=ORDER.__getitem__))
        for player in range(n)
    ]
    if setup.dummy is not None:
        hands.append(())
        pile = tuple(rest)  # shuffled: the Dummy's face-down pile, top first
    else:
        pile = tuple(sorted(rest, key=ORDER.__getitem__))
    return State(
        setup=setup,
        scores=info.scores,
        bets_made=info.bets_made,
        round_index=info.round,
        redeals=info.redeals,
        phase=info.phase,
        decision=_decision(info),
        hands=tuple(hands),
        pile=pile,
        dummy_up=info.dummy_up,
        attempt=info.attempt,
        bet_cards=info.bet_cards,
        pending=(None,) * n,
        bets=info.bets,
        revealer=info.revealer,
        first_leader=info.first_leader,
        trump=info.trump,
        leader=info.leader,
        order=_order(info),
        lead_suit=info.lead_suit,
        trick=info.trick,
        tricks=info.tricks,
        trick_winners=info.trick_winners,
        tricks_won=info.tricks_won,
        ranks=None,
        aborted=False,
        reason="",
        events=(),
    )


def _decision(info: InfoState) -> Decision:
    """The decision pending in the world: our play or reveal; in a bet, every player's (the
    others' hidden bets for this attempt are unknown, so they bet again in the world)."""
    if info.phase == Phase.BET:
        return Decision(DecisionKind.BET, tuple(range(info.num_players)))
    if info.phase == Phase.REVEAL:
        return Decision(DecisionKind.REVEAL, (info.seat,))
    return oh7.PLAY_DECISIONS[info.seat]


def _order(info: InfoState) -> tuple[int, ...]:
    if info.phase != Phase.PLAY or info.leader is None:
        return ()
    if info.dummy is None:
        return oh7.CLOCKWISE[info.num_seats][info.leader]
    return dummy.trick_order(info.leader, info.first_leader or 0)
