"""Worlds of Oh 7? (`oh7`, `oh7-advanced`, `oh7-duel`) consistent with one seat's view.

Public: the seat's own hand, every card bet with this round (R-1.1: bet cards stay in their
owners' hands until played), the Interrobang once revealed (R-1.4), the Dummy's face-up cards,
and every card played this round with who played it. Unseen: the other hands, the discard, and
the Dummy's face-down pile (whose order matters: the Dummy plays from its top). A player who
played a card that is neither special nor of the lead suit has no card of the lead suit left
(specials may always be played, so they show nothing).

While bets are being made, the others' bets of the current attempt are hidden: in a world every
player bets again.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

from referee.botkit.worlds.base import Placement, Worlds
from referee.botkit.worlds.dealing import Constraints
from referee.engine.games import oh7
from referee.engine.games import oh7_dummy as dummy
from referee.engine.games.base import Card, Decision, DecisionKind
from referee.engine.games.oh7 import ORDER, SPECIAL, SUIT, InfoState, Phase, Setup, State


@cache
def _setup(game: str, num_players: int, target: int) -> Setup:
    return oh7.new_game(num_players, {"variant": game, "target": target}).setup


def round_plays(info: InfoState) -> list[tuple[int, Card]]:
    """Every card played this round, in order, with who played it (the Dummy's too)."""
    return [play for trick in (*info.tricks, info.trick) for play in trick]


def voids(info: InfoState) -> list[str]:
    """Per player: the suits it has shown it no longer holds, in the order first shown."""
    shown = [""] * info.num_players
    for trick in (*info.tricks, info.trick):
        lead: str | None = None
        for seat, card in trick:
            if card in SPECIAL:
                continue
            if lead is None:
                lead = SUIT[card]
            elif SUIT[card] != lead and seat != info.dummy and lead not in shown[seat]:
                shown[seat] += lead
    return shown


def known_cards(info: InfoState) -> list[tuple[Card, ...]]:
    """Per player: the cards it holds for certain. The seat's own hand; for the others the cards
    bet with this round (and a revealed `?`) that they have not played yet."""
    plays = round_plays(info)
    known: list[tuple[Card, ...]] = []
    for player in range(info.num_players):
        if player == info.seat:
            known.append(info.hand)
            continue
        holds = Counter(info.bet_cards[player])
        if info.revealer == player:
            holds["?"] = max(holds["?"], 1)
        holds.subtract(card for who, card in plays if who == player)
        known.append(tuple(sorted((+holds).elements(), key=ORDER.__getitem__)))
    return known


def constraints(info: InfoState) -> Constraints:
    """The unseen cards, how many each player holds, and the suits each has shown it lacks."""
    setup = _setup(info.game, info.num_players, info.target)
    plays = round_plays(info)
    known = known_cards(info)
    unseen = Counter(setup.counts)
    unseen.subtract(card for _, card in plays)
    unseen.subtract(info.dummy_up)
    for cards in known:
        unseen.subtract(cards)
    pool = tuple(sorted(unseen.elements(), key=ORDER.__getitem__))
    played_by = Counter(who for who, _ in plays)
    counts = tuple(
        0 if player == info.seat else oh7.HAND_SIZE - played_by[player] - len(known[player])
        for player in range(info.num_players)
    )
    forbidden = tuple(  # specials (suit "*" or none) are never ruled out
        frozenset(card for card in pool if card not in SPECIAL and SUIT[card] in lacking)
        for lacking in voids(info)
    )
    if info.dummy is not None:  # the Dummy holds nothing: its cards are the pile and face up
        counts, forbidden, known = (*counts, 0), (*forbidden, frozenset()), [*known, ()]
    return Constraints(pool, counts, forbidden, tuple(known))


def build(info: InfoState, placement: Placement) -> State:
    """The state of this round in which the players hold `placement.hands`, at the seat's decision."""
    setup = _setup(info.game, info.num_players, info.target)
    key = ORDER.__getitem__
    hands = tuple(tuple(sorted(hand, key=key)) for hand in placement.hands)
    # The Dummy's face-down pile keeps its order (top first); a discard is kept sorted.
    pile = placement.rest if setup.dummy is not None else tuple(sorted(placement.rest, key=key))
    return State(
        setup=setup,
        scores=info.scores,
        bets_made=info.bets_made,
        round_index=info.round,
        redeals=info.redeals,
        phase=info.phase,
        decision=_decision(info),
        hands=hands,
        pile=pile,
        dummy_up=info.dummy_up,
        attempt=info.attempt,
        bet_cards=info.bet_cards,
        pending=(None,) * info.num_players,
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
    """The decision pending in the world: in a bet every player's (the others' hidden bets of
    this attempt are unknown, so they bet again), the seat's reveal, else the next player's card."""
    if info.phase == Phase.BET:
        return Decision(DecisionKind.BET, tuple(range(info.num_players)))
    if info.phase == Phase.REVEAL:
        return Decision(DecisionKind.REVEAL, (info.seat,))
    return oh7.PLAY_DECISIONS[_order(info)[len(info.trick)]]


def _order(info: InfoState) -> tuple[int, ...]:
    if info.phase != Phase.PLAY or info.leader is None:
        return ()
    if info.dummy is None:
        return oh7.CLOCKWISE[info.num_seats][info.leader]
    return dummy.trick_order(info.leader, info.first_leader or 0)


def worlds(info: InfoState) -> Worlds:
    """The worlds of an Oh 7? seat (any variant) at its decision."""
    return Worlds(info, constraints(info), lambda placement: build(info, placement))
