"""Oh 7? (RULES.md §1): bet with a card from your hand the exact number of tricks you will win.

1. Deal: shuffle the whole deck, 7 cards to each player; the rest is the discard (`oh7-duel`: the
   Dummy's face-down pile, see `referee.engine.games.oh7_dummy`).
2. Bet: everyone picks a card at once (never `?`); its value is the bet (`k*` is k, `N` is 0).
   Bets summing to 7 (duel: + the Dummy's 2) are made again with a card not yet bet with; a
   third sum of 7 redeals (R-1.2: the 11th redeal in a row aborts). R-1.1 bet cards stay in the
   hand and are public for the round.
3. First leader: the highest bet that is not a `k*`, ties by suit priority S > H > C > D > F
   (R-1.3: `N` loses every tie, the lowest seat among `N`s); a tied player holding `?` may
   reveal it to win the tie (R-1.4, R-1.12). All `k*`: the highest `k*` leads, no trump (R-1.5).
   The leader's bet card's suit is trump (R-1.6: none for `N`). The Dummy never leads first.
4. Tricks: 7; the lead suit is the suit of the first non-special card; follow it if able;
   specials (`k*`, `N`, `?`) are always playable. Winner: the highest trump (R-1.7: `k*` are trump
   when trump is led), else `?`, else the highest lead-suit card (`k*` count as value k, below the
   real card), else `?` > the highest `k*` > `N`. `N` never wins.
5. Score: loss = |bet - tricks|, basket = the sum of all losses (R-1.11: the Dummy's too); a
   missed bet scores basket - loss, a made bet 2 x basket + 2 + tricks (no + 2 for an `N` bet).
6. End: the players who made their bet and reached the target are candidates; the most bets
   made, then the most points wins, shared if still tied (R-1.8: at most 200 rounds).

Rulings made here (nothing else decided them):
- R-1.12 The Interrobang question is asked only when it changes the outcome: of a tied top
  bettor holding `?` who would not already win the tie by suit priority (R-1.3).
- R-1.13 Redeals are not rounds (R-1.8 counts played rounds); the R-1.2 count restarts each round.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from referee.engine.cards import shuffled_order
from referee.engine.games import oh7_dummy as dummy
from referee.engine.games.base import (
    Action,
    Card,
    ChanceOutcome,
    Decision,
    DecisionKind,
    Event,
    Game,
    GameError,
    Options,
    OptionSpec,
    Result,
    competition_ranks,
    module_docstring,
    rebuilt_by_init,
)

SUITS = "SHCDF"
"""The five suits in priority order, S highest (RULES.md §1)."""
STARS: tuple[Card, ...] = ("1*", "2*", "3*", "4*")
SPECIALS: tuple[Card, ...] = (*STARS, "N", "N", "?")
HAND_SIZE = 7
TRICKS = 7
FORBIDDEN_TOTAL = 7
MAX_ATTEMPTS = 3
MAX_REDEALS = 10
MAX_ROUNDS = 200

VALUE: dict[Card, int] = {f"{v}{s}": v for s in SUITS for v in range(8)}
VALUE.update({"1*": 1, "2*": 2, "3*": 3, "4*": 4, "N": 0, "?": 0})
SUIT: dict[Card, str] = {f"{v}{s}": s for s in SUITS for v in range(8)}
SUIT.update({star: "*" for star in STARS} | {"N": "", "?": ""})
SPECIAL = frozenset(SPECIALS)
PRIORITY: dict[str, int] = {suit: 4 - i for i, suit in enumerate(SUITS)} | {"*": -1, "": -1}
ORDER: dict[Card, int] = {card: i for i, card in enumerate(VALUE)}
"""The canonical order of hands: suits by priority, values up, then the specials."""


def deck(variant: str, num_players: int) -> tuple[Card, ...]:
    """The deck of a game (RULES.md §1.1) in canonical order; oh7-advanced holds `N` twice."""
    if variant == "oh7-advanced":
        return tuple(f"{v}{s}" for s in SUITS[: num_players - 1] for v in range(8)) + SPECIALS
    suits = SUITS[:3] if variant == "oh7-duel" else SUITS[:num_players]
    return tuple(f"{v}{s}" for s in suits for v in range(8))


def trick_strength(card: Card, trump: str | None, lead_suit: str | None) -> int:
    """A key whose highest card in a finished trick wins it (winner rules 1-4, R-1.7)."""
    suit = SUIT[card]
    if suit == "*":
        if lead_suit is None:
            return 50 + VALUE[card]  # rule 4
        return (300 if lead_suit == trump else 100) + 2 * VALUE[card]  # rule 3
    if suit == trump:
        return 301 + 2 * VALUE[card]
    if card == "?":
        return 200
    if suit == lead_suit:
        return 101 + 2 * VALUE[card]
    return 0  # `N` and off-suit cards never win


STRENGTH: dict[tuple[str | None, str | None], dict[Card, int]] = {
    (trump, lead): {card: trick_strength(card, trump, lead) for card in VALUE}
    for trump in (*SUITS, None)
    for lead in (*SUITS, None)
}
"""(trump, lead suit) -> card -> `trick_strength`, precomputed for speed."""


def lead_suit_of(cards: list[Card]) -> str | None:
    """The lead suit of a trick: the suit of its first non-special card (None: only specials)."""
    for card in cards:
        if card not in SPECIAL:
            return SUIT[card]
    return None


def trick_winner(cards: list[Card], trump: str | None, lead_suit: str | None) -> int:
    """Index in `cards` (in play order) of the card that wins the finished trick."""
    strength = STRENGTH[trump, lead_suit]
    keys = [strength[card] for card in cards]
    return keys.index(max(keys))


def playable(hand: tuple[Card, ...], lead_suit: str | None) -> tuple[Card, ...]:
    """The cards of `hand` one may play (one action `N` for two `N`s)."""
    cards = hand
    if lead_suit is not None:
        for card in hand:
            if SUIT[card] == lead_suit:
                cards = tuple(c for c in hand if SUIT[c] == lead_suit or c in SPECIAL)
                break
    if cards.count("N") > 1:
        i = cards.index("N")
        cards = cards[:i] + cards[i + 1 :]
    return cards


class Phase(StrEnum):
    """What a state waits for; an information state's `phase` is one of these."""

    DEAL = "deal"
    BET = "bet"
    REVEAL = "reveal"
    PLAY = "play"
    OVER = "over"


@dataclass(slots=True)
class Setup:
    """The facts fixed for a whole game; `dummy` is the Dummy's seat (oh7-duel) or None."""

    game: str
    num_players: int
    num_seats: int
    target: int
    options: tuple[tuple[str, Any], ...]
    deck: tuple[Card, ...]
    counts: dict[Card, int]
    dummy: int | None


@dataclass(slots=True)
class State:
    """One game in progress; every field is immutable, `apply` copies and edits."""

    setup: Setup
    scores: tuple[int, ...]  # per player
    bets_made: tuple[int, ...]  # per player, over the game
    round_index: int
    redeals: int  # in a row, this round
    phase: Phase
    decision: Decision | None
    hands: tuple[tuple[Card, ...], ...]  # per seat, canonical order (the Dummy's is empty)
    pile: tuple[Card, ...]  # the discard, or the Dummy's face-down pile (top first)
    dummy_up: tuple[Card, ...]
    attempt: int  # 0, 1, 2
    bet_cards: tuple[tuple[Card, ...], ...]  # per player, revealed attempts only
    pending: tuple[Card | None, ...]  # per player, this attempt's hidden bet
    bets: tuple[int, ...] | None  # final bets per seat (the Dummy's 2 included)
    revealer: int | None
    first_leader: int | None
    trump: str | None
    leader: int | None
    order: tuple[int, ...]  # seats in playing order for the current trick
    lead_suit: str | None
    trick: tuple[tuple[int, Card], ...]
    tricks: tuple[tuple[tuple[int, Card], ...], ...]  # earlier tricks of this round
    trick_winners: tuple[int, ...]
    tricks_won: tuple[int, ...]  # per seat
    ranks: tuple[int, ...] | None
    aborted: bool
    reason: str
    events: tuple[Event, ...]

    # Written out, not generated by @dataclass (which keeps it): compiled, this one is native and
    # a state is made in a fraction of the time the generated one takes, every `apply`.
    def __init__(
        self,
        setup: Setup,
        scores: tuple[int, ...],
        bets_made: tuple[int, ...],
        round_index: int,
        redeals: int,
        phase: Phase,
        decision: Decision | None,
        hands: tuple[tuple[Card, ...], ...],
        pile: tuple[Card, ...],
        dummy_up: tuple[Card, ...],
        attempt: int,
        bet_cards: tuple[tuple[Card, ...], ...],
        pending: tuple[Card | None, ...],
        bets: tuple[int, ...] | None,
        revealer: int | None,
        first_leader: int | None,
        trump: str | None,
        leader: int | None,
        order: tuple[int, ...],
        lead_suit: str | None,
        trick: tuple[tuple[int, Card], ...],
        tricks: tuple[tuple[tuple[int, Card], ...], ...],
        trick_winners: tuple[int, ...],
        tricks_won: tuple[int, ...],
        ranks: tuple[int, ...] | None,
        aborted: bool,
        reason: str,
        events: tuple[Event, ...],
    ) -> None:
        self.setup = setup
        self.scores = scores
        self.bets_made = bets_made
        self.round_index = round_index
        self.redeals = redeals
        self.phase = phase
        self.decision = decision
        self.hands = hands
        self.pile = pile
        self.dummy_up = dummy_up
        self.attempt = attempt
        self.bet_cards = bet_cards
        self.pending = pending
        self.bets = bets
        self.revealer = revealer
        self.first_leader = first_leader
        self.trump = trump
        self.leader = leader
        self.order = order
        self.lead_suit = lead_suit
        self.trick = trick
        self.tricks = tricks
        self.trick_winners = trick_winners
        self.tricks_won = tricks_won
        self.ranks = ranks
        self.aborted = aborted
        self.reason = reason
        self.events = events

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)  # copy, deepcopy, pickle (compiled, `__new__` runs `__init__`)

    def _copy(self) -> State:
        return State(
            self.setup, self.scores, self.bets_made, self.round_index, self.redeals, self.phase,
            self.decision, self.hands, self.pile, self.dummy_up, self.attempt, self.bet_cards,
            self.pending, self.bets, self.revealer, self.first_leader, self.trump, self.leader,
            self.order, self.lead_suit, self.trick, self.tricks, self.trick_winners, self.tricks_won,
            self.ranks, self.aborted, self.reason, (),
        )  # fmt: skip


CLOCKWISE = {n: tuple(tuple((lead + i) % n for i in range(n)) for lead in range(n)) for n in range(2, 7)}
"""Seats in playing order: CLOCKWISE[seats][leader]."""
DEAL_DECISION = Decision(DecisionKind.DEAL, ())
PLAY_DECISIONS = tuple(Decision(DecisionKind.PLAY, (seat,)) for seat in range(6))
_BET_DECISIONS: dict[tuple[int, ...], Decision] = {}


def _bet_decision(seats: tuple[int, ...]) -> Decision:
    decision = _BET_DECISIONS.get(seats)
    if decision is None:
        decision = _BET_DECISIONS[seats] = Decision(DecisionKind.BET, seats)
    return decision


# 1. Deal


def new_game(num_players: int, options: Options, *, scores: Any = None, round_index: int = 0) -> State:
    """A game of `num_players` players waiting for its first deal (options: variant, target)."""
    variant = options.get("variant", "oh7")
    target = int(options.get("target", 35))
    seat = dummy.SEAT if variant == "oh7-duel" else None
    num_seats = num_players + (seat is not None)
    scores = (0,) * num_players if scores is None else tuple(int(s) for s in scores)
    if len(scores) != num_players:
        raise GameError(f"{variant}: {len(scores)} scores given for {num_players} players")
    cards = deck(variant, num_players)
    counts = {card: cards.count(card) for card in cards}
    fixed = (("target", target), ("variant", variant))
    setup = Setup(variant, num_players, num_seats, target, fixed, cards, counts, seat)
    return State(
        setup=setup,
        scores=scores,
        bets_made=(0,) * num_players,
        round_index=round_index,
        redeals=0,
        phase=Phase.DEAL,
        decision=DEAL_DECISION,
        hands=((),) * num_seats,
        pile=(),
        dummy_up=(),
        attempt=0,
        bet_cards=((),) * num_players,
        pending=(None,) * num_players,
        bets=None,
        revealer=None,
        first_leader=None,
        trump=None,
        leader=None,
        order=(),
        lead_suit=None,
        trick=(),
        tricks=(),
        trick_winners=(),
        tricks_won=(0,) * num_seats,
        ranks=None,
        aborted=False,
        reason="",
        events=(),
    )


def sample_chance(state: State, rng: random.Random) -> ChanceOutcome:
    """A shuffle of the whole deck: 7 cards per player, the rest as the discard or the pile."""
    deck = state.setup.deck
    cards = [deck[index] for index in shuffled_order(len(deck), rng)]  # as rng.shuffle(list(deck))
    n = state.setup.num_players
    key = ORDER.__getitem__
    hands = [sorted(cards[i * HAND_SIZE : (i + 1) * HAND_SIZE], key=key) for i in range(n)]
    rest = cards[n * HAND_SIZE :]
    if state.setup.dummy is not None:
        return {"hands": hands, "pile": rest}
    return {"hands": hands, "discard": sorted(rest, key=key)}


def _check_deal(setup: Setup, outcome: Any) -> tuple[list[list[Card]], list[Card]]:
    """The hands and the rest of a deal outcome; anything malformed raises GameError."""
    game, n = setup.game, setup.num_players
    hands = outcome.get("hands") if isinstance(outcome, dict) else None
    if not isinstance(hands, list):
        raise GameError(f"{game} deal: expected {{'hands': [{n} lists of 7 cards], ...}}")
    if len(hands) != n:
        raise GameError(f"{game} deal: {len(hands)} hands given for {n} players")
    for seat, hand in enumerate(hands):
        if not isinstance(hand, list) or len(hand) != HAND_SIZE:
            size = len(hand) if isinstance(hand, list) else "no"
            raise GameError(f"{game} deal: seat {seat}'s hand has {size} cards, expected 7")
    rest_key = "pile" if setup.dummy is not None else "discard"
    rest = outcome.get(rest_key)
    rest_size = len(setup.deck) - n * HAND_SIZE
    if rest is None and setup.dummy is not None:
        raise GameError(f"{game} deal: the Dummy's 'pile' of {rest_size} cards is missing")
    if rest is not None and (not isinstance(rest, list) or len(rest) != rest_size):
        size = len(rest) if isinstance(rest, list) else "no"
        raise GameError(f"{game} deal: '{rest_key}' has {size} cards, expected {rest_size}")
    left = dict(setup.counts)
    for card in [card for hand in hands for card in hand] + (rest or []):
        if not isinstance(card, str) or card not in left:
            raise GameError(f"{game} deal: {card!r} is not a card of this deck")
        if left[card] == 0:
            raise GameError(f"{game} deal: {card!r} is dealt more often than the deck holds it")
        left[card] -= 1
    if rest is None:
        rest = [card for card, count in left.items() for _ in range(count)]
    return hands, rest


def _deal(state: State, outcome: Any) -> State:
    setup = state.setup
    hands, rest = _check_deal(setup, outcome)
    s = state._copy()
    key = ORDER.__getitem__
    s.hands = tuple(tuple(sorted(hand, key=key)) for hand in hands)
    if setup.dummy is not None:
        s.hands += ((),)
    s.pile = tuple(rest)
    s.phase, s.attempt, s.dummy_up = Phase.BET, 0, ()
    s.bet_cards = ((),) * setup.num_players
    s.bets = s.revealer = s.first_leader = s.trump = s.leader = s.lead_suit = None
    s.order, s.trick, s.tricks, s.trick_winners = (), (), (), ()
    s.tricks_won = (0,) * setup.num_seats
    s.decision = _bet_decision(tuple(range(setup.num_players)))
    event: Event = {"type": "deal", "round": s.round_index, "hands": [list(h) for h in s.hands]}
    if setup.dummy is not None:
        event["hands"].pop()
    event["pile" if setup.dummy is not None else "discard"] = list(rest)
    if s.redeals:
        event["redeals"] = s.redeals
    s.events = (event,)
    return s


# 2. Bet


def _bet(state: State, seat: int, card: Card) -> State:
    s = state._copy()
    pending = list(state.pending)
    pending[seat] = card
    s.pending = tuple(pending)
    waiting = tuple([p for p, c in enumerate(pending) if c is None])
    if waiting:
        s.decision = _bet_decision(waiting)
        return s
    setup = state.setup
    cards = [c for c in pending if c is not None]
    s.bet_cards = tuple((*before, c) for before, c in zip(state.bet_cards, cards, strict=True))
    s.pending = (None,) * setup.num_players
    values = [VALUE[c] for c in cards] + ([dummy.BET] if setup.dummy is not None else [])
    total = sum(values)
    events: list[Event] = [
        {"type": "bets", "attempt": s.attempt, "cards": cards, "bets": values, "total": total}
    ]
    if total != FORBIDDEN_TOTAL:
        s.bets = tuple(values)
        _choose_leader(s, events, cards)
    elif s.attempt + 1 < MAX_ATTEMPTS:
        s.attempt += 1
        s.decision = _bet_decision(tuple(range(setup.num_players)))
    else:
        s.redeals += 1
        events.append({"type": "redeal", "round": s.round_index, "redeals": s.redeals})
        if s.redeals > MAX_REDEALS:
            _end(s, events, None, f"{s.redeals} redeals in a row (R-1.2)")
        else:
            s.phase, s.decision = Phase.DEAL, DEAL_DECISION
    s.events = tuple(events)
    return s


# 3. First leader and trump


def _top_bettors(cards: list[Card]) -> tuple[list[int], int]:
    """The tied top bettors among the eligible (no `k*`), and who wins their tie by suit.

    R-1.3: `N` loses every suit tie-break; among `N`s only, the lowest seat wins.
    """
    eligible = [p for p, card in enumerate(cards) if SUIT[card] != "*"]
    top = max(VALUE[cards[p]] for p in eligible)
    tied = [p for p in eligible if VALUE[cards[p]] == top]
    return tied, max(tied, key=lambda p: (PRIORITY[SUIT[cards[p]]], -p))


def _choose_leader(s: State, events: list[Event], cards: list[Card]) -> None:
    if all(SUIT[card] == "*" for card in cards):
        _start_tricks(s, events, max(range(len(cards)), key=lambda p: VALUE[cards[p]]))
        return
    tied, winner = _top_bettors(cards)
    holder = next((p for p in tied if "?" in s.hands[p]), None)
    if holder is not None and holder != winner:
        s.phase, s.decision = Phase.REVEAL, Decision(DecisionKind.REVEAL, (holder,))
        return
    _start_tricks(s, events, winner)


def _reveal(state: State, seat: int, reveal: bool) -> State:
    s = state._copy()
    events: list[Event] = []
    if reveal:
        s.revealer = seat
        events.append({"type": "reveal", "seat": seat})
        _start_tricks(s, events, seat)
    else:
        _start_tricks(s, events, _top_bettors([cards[-1] for cards in s.bet_cards])[1])
    s.events = tuple(events)
    return s


def _start_tricks(s: State, events: list[Event], leader: int) -> None:
    suit = SUIT[s.bet_cards[leader][-1]]
    s.first_leader, s.trump = leader, suit if suit not in ("*", "") else None
    event: Event = {"type": "leader", "seat": leader, "trump": s.trump, "bets": list(s.bets or ())}
    if s.setup.dummy is not None:
        s.dummy_up, s.pile = s.pile[: dummy.FACE_UP], s.pile[dummy.FACE_UP :]
        event["dummy_up"] = list(s.dummy_up)
    events.append(event)
    s.phase = Phase.PLAY
    _start_trick(s, events, leader)


# 4. Tricks


def _start_trick(s: State, events: list[Event], leader: int) -> None:
    s.leader, s.trick, s.lead_suit = leader, (), None
    if s.setup.dummy is None:
        s.order = CLOCKWISE[s.setup.num_seats][leader]
        s.decision = PLAY_DECISIONS[leader]
        return
    s.order = dummy.trick_order(leader, s.first_leader or 0)
    if leader == dummy.SEAT:  # it leads its pile's top card
        card, s.pile = s.pile[0], s.pile[1:]
        _add_play(s, events, dummy.SEAT, card, ("from_pile", True))
    else:
        s.decision = PLAY_DECISIONS[leader]


def _play(state: State, seat: int, card: Card) -> State:
    s = state._copy()
    hand = state.hands[seat]
    i = hand.index(card)
    hands = list(state.hands)
    hands[seat] = hand[:i] + hand[i + 1 :]
    s.hands = tuple(hands)
    events: list[Event] = []
    _add_play(s, events, seat, card, None)
    s.events = tuple(events)
    return s


def _add_play(s: State, events: list[Event], seat: int, card: Card, extra: tuple[str, Any] | None) -> None:
    """Adds a play to the trick, then lets the Dummy play or closes the trick as needed."""
    trick = s.trick = (*s.trick, (seat, card))
    if s.lead_suit is None and card not in SPECIAL:
        s.lead_suit = SUIT[card]
    event: Event = {"type": "play", "seat": seat, "card": card}
    if extra is not None:  # the Dummy's: where its card came from
        event[extra[0]] = extra[1]
    events.append(event)
    if len(trick) == len(s.order):
        _close_trick(s, events)
        return
    following = s.order[len(trick)]
    if following == s.setup.dummy:
        _dummy_plays_last(s, events)
    else:
        s.decision = PLAY_DECISIONS[following]


def _close_trick(s: State, events: list[Event]) -> None:
    trick = s.trick
    winner = trick[trick_winner([card for _, card in trick], s.trump, s.lead_suit)][0]
    won = list(s.tricks_won)
    won[winner] += 1
    s.tricks_won = tuple(won)
    s.tricks += (trick,)
    s.trick_winners += (winner,)
    events.append({"type": "trick", "winner": winner, "plays": [[seat, card] for seat, card in trick]})
    if len(s.tricks) == TRICKS:
        _score_round(s, events)
    else:
        _start_trick(s, events, winner)


def _dummy_plays_last(s: State, events: list[Event]) -> None:
    """It turns one more pile card up and plays one of its three face-up cards (R-1.9)."""
    turned, s.pile = s.pile[0], s.pile[1:]
    up = (*s.dummy_up, turned)
    candidates = playable(up, s.lead_suit)
    # The duel deck has no special card: the lead suit is known and a card wins if it is stronger.
    strength = STRENGTH[s.trump, s.lead_suit]
    best = max(strength[card] for _, card in s.trick)
    wins = [card for card in candidates if strength[card] > best]
    card = dummy.choose(candidates, wins, s.trump, s.tricks_won[dummy.SEAT])
    i = up.index(card)
    s.dummy_up = up[:i] + up[i + 1 :]
    _add_play(s, events, dummy.SEAT, card, ("turned", turned))


# 5. Score and 6. End of game


def round_points(bets: tuple[int, ...], tricks: tuple[int, ...], cards: list[Card]) -> list[int]:
    """Points of the players who bet `cards`; every seat's loss is in the basket (R-1.11)."""
    losses = [abs(bet - won) for bet, won in zip(bets, tricks, strict=True)]
    basket = sum(losses)
    return [
        basket - losses[p] if losses[p] else 2 * basket + (card != "N") * 2 + tricks[p]
        for p, card in enumerate(cards)
    ]


def _score_round(s: State, events: list[Event]) -> None:
    assert s.bets is not None
    players = range(s.setup.num_players)
    cards = [before[-1] for before in s.bet_cards]
    points = round_points(s.bets, s.tricks_won, cards)
    made = [s.bets[p] == s.tricks_won[p] for p in players]
    s.scores = tuple(score + add for score, add in zip(s.scores, points, strict=True))
    s.bets_made = tuple(count + ok for count, ok in zip(s.bets_made, made, strict=True))
    events.append(
        {
            "type": "round_end",
            "round": s.round_index,
            "points": points,
            "scores": list(s.scores),
            "bets": list(s.bets),
            "tricks": list(s.tricks_won),
            "bet_cards": cards,
            "made": made,
        }
    )
    candidates = [p for p in players if made[p] and s.scores[p] >= s.setup.target]
    if candidates:
        best = max((s.bets_made[p], s.scores[p]) for p in candidates)
        winners = [p for p in candidates if (s.bets_made[p], s.scores[p]) == best]
        keys = [(1, 0, 0) if p in winners else (0, s.scores[p], s.bets_made[p]) for p in players]
        _end(s, events, competition_ranks(keys), "")
    elif s.round_index + 1 >= MAX_ROUNDS:
        _end(s, events, None, f"no winner after {MAX_ROUNDS} rounds (R-1.8)")
    else:
        s.round_index += 1
        s.redeals = 0
        s.phase, s.decision = Phase.DEAL, DEAL_DECISION


def _end(s: State, events: list[Event], ranks: tuple[int, ...] | None, reason: str) -> None:
    s.phase, s.decision, s.ranks = Phase.OVER, None, ranks
    s.aborted, s.reason = ranks is None, reason
    shown = None if ranks is None else list(ranks)
    events.append({"type": "game_end", "scores": list(s.scores), "ranks": shown, "aborted": s.aborted})


# The game API


def to_move(state: State) -> Decision | None:
    """Who decides next: the deal, the bettors still to bet, the `?` holder, or one player."""
    return state.decision


def legal_actions(state: State, seat: int) -> tuple[Action, ...]:
    """Bet cards (not `?`, not bet with before this round), (False, True), or playable cards."""
    decision = state.decision
    if decision is None or seat not in decision.seats:
        return ()
    if state.phase == Phase.PLAY:
        return playable(state.hands[seat], state.lead_suit)
    if state.phase == Phase.BET:
        used, hand = state.bet_cards[seat], state.hands[seat]
        return tuple(
            [c for c in dict.fromkeys(hand) if c != "?" and (c not in used or used.count(c) < hand.count(c))]
        )
    return (False, True)


def apply(state: State, seat: int, action: Any) -> State:
    """The state after `seat` takes `action` (CHANCE: a deal outcome); `state` is unchanged."""
    phase = state.phase
    if phase == Phase.PLAY:
        return _play(state, seat, action)
    if phase == Phase.BET:
        return _bet(state, seat, action)
    if phase == Phase.REVEAL:
        return _reveal(state, seat, bool(action))
    if phase == Phase.DEAL:
        return _deal(state, action)
    raise GameError(f"{state.setup.game}: the game is over")


@dataclass(slots=True)
class InfoState:
    """What one seat may know (RULES.md §5): the public facts and its own hand, nothing more."""

    # The game and the seat; `dummy` is the Dummy's seat (oh7-duel) or None.
    game: str
    seat: int
    num_players: int
    num_seats: int
    dummy: int | None
    options: tuple[tuple[str, Any], ...]
    target: int
    # The game so far, per player: scores and bets made; this round's number and redeals so far,
    # the hand size (always 7), and what is being decided ("bet", "reveal" or "play").
    scores: tuple[int, ...]
    bets_made: tuple[int, ...]
    round: int
    redeals: int
    hand_size: int
    phase: Phase
    # This round's bets: the cards each player bet with in the revealed attempts, the
    # current attempt (0-2), the final bets per seat (None before), the `?` revealer if any, the
    # first leader and the trump suit (None: no trump).
    bet_cards: tuple[tuple[Card, ...], ...]
    attempt: int
    bets: tuple[int, ...] | None
    revealer: int | None
    first_leader: int | None
    trump: str | None
    # The tricks: the Dummy's face-up cards, the current trick's leader, lead suit and plays
    # (seat, card), the earlier tricks of this round with their winners, tricks won per seat.
    dummy_up: tuple[Card, ...]
    leader: int | None
    lead_suit: str | None
    trick: tuple[tuple[int, Card], ...]
    tricks: tuple[tuple[tuple[int, Card], ...], ...]
    trick_winners: tuple[int, ...]
    tricks_won: tuple[int, ...]
    # The seat's own hand, in canonical order (bet cards stay in it until played).
    hand: tuple[Card, ...]

    # Written out for speed, as State's (an information state is built for every decision).
    def __init__(
        self,
        game: str,
        seat: int,
        num_players: int,
        num_seats: int,
        dummy: int | None,
        options: tuple[tuple[str, Any], ...],
        target: int,
        scores: tuple[int, ...],
        bets_made: tuple[int, ...],
        round: int,
        redeals: int,
        hand_size: int,
        phase: Phase,
        bet_cards: tuple[tuple[Card, ...], ...],
        attempt: int,
        bets: tuple[int, ...] | None,
        revealer: int | None,
        first_leader: int | None,
        trump: str | None,
        dummy_up: tuple[Card, ...],
        leader: int | None,
        lead_suit: str | None,
        trick: tuple[tuple[int, Card], ...],
        tricks: tuple[tuple[tuple[int, Card], ...], ...],
        trick_winners: tuple[int, ...],
        tricks_won: tuple[int, ...],
        hand: tuple[Card, ...],
    ) -> None:
        self.game = game
        self.seat = seat
        self.num_players = num_players
        self.num_seats = num_seats
        self.dummy = dummy
        self.options = options
        self.target = target
        self.scores = scores
        self.bets_made = bets_made
        self.round = round
        self.redeals = redeals
        self.hand_size = hand_size
        self.phase = phase
        self.bet_cards = bet_cards
        self.attempt = attempt
        self.bets = bets
        self.revealer = revealer
        self.first_leader = first_leader
        self.trump = trump
        self.dummy_up = dummy_up
        self.leader = leader
        self.lead_suit = lead_suit
        self.trick = trick
        self.tricks = tricks
        self.trick_winners = trick_winners
        self.tricks_won = tricks_won
        self.hand = hand

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)  # copy, deepcopy, pickle (compiled, `__new__` runs `__init__`)


def information_state(state: State, seat: int) -> InfoState:
    """What `seat` may know: never another hand, the discard, the pile or a pending bet.

    While the Interrobang holder is asked to reveal (R-1.4), every other seat still sees the
    betting as it stood before the last bet: a "reveal" phase with no leader would tell it that a
    tied top bettor holds the `?`. Only the holder sees the question.
    """
    setup = state.setup
    phase, bet_cards, bets = state.phase, state.bet_cards, state.bets
    if phase == Phase.REVEAL and state.decision is not None and seat not in state.decision.seats:
        phase, bet_cards, bets = Phase.BET, tuple(cards[:-1] for cards in bet_cards), None
    return InfoState(
        setup.game, seat, setup.num_players, setup.num_seats, setup.dummy, setup.options,
        setup.target, state.scores, state.bets_made, state.round_index, state.redeals, HAND_SIZE,
        phase, bet_cards, state.attempt, bets, state.revealer, state.first_leader,
        state.trump, state.dummy_up, state.leader, state.lead_suit, state.trick, state.tricks,
        state.trick_winners, state.tricks_won, state.hands[seat],
    )  # fmt: skip


def result(state: State) -> Result | None:
    """Scores and ranks of the players (the Dummy has neither) once the game is over."""
    if state.phase != Phase.OVER:
        return None
    return Result(state.scores, state.ranks, state.aborted, state.reason)


# The greedy policy


def estimate_tricks(hand: tuple[Card, ...], num_seats: int) -> float:
    """Tricks a hand may win: its high cards, `?`, high stars, and length in a suit."""
    high = {7: 1.0, 6: 0.6, 5: 0.3} if num_seats <= 3 else {7: 0.9, 6: 0.45, 5: 0.15}
    estimate = 0.0
    for card in hand:
        if card == "?":
            estimate += 0.8
        elif SUIT[card] == "*":
            estimate += 0.15 * (VALUE[card] - 1)
        elif card != "N":
            estimate += high.get(VALUE[card], 0.0)
    for suit in SUITS:
        length = sum(1 for card in hand if SUIT[card] == suit)
        if length >= 3:
            estimate += 0.35 * (length - 2)
    return estimate


def _spend_order(card: Card, trump: str | None) -> tuple[int, int, int]:
    """How costly a card is to spend: `N` lowest, then plain cards, `?`, trumps highest."""
    if card == "N":
        return (-1, 0, ORDER[card])
    if card == "?":
        return (2, 0, 0)
    tier = 3 if SUIT[card] == trump else 1
    return (tier, 2 * VALUE[card] + (SUIT[card] != "*"), ORDER[card])


def greedy(info: InfoState, legal: tuple[Action, ...]) -> Action:
    """Bets near the hand's estimated tricks; reveals `?` to lead when it bet tricks; then plays
    to make the bet exactly: wins cheaply while it needs tricks, else sheds its highest loser."""
    if info.phase == Phase.REVEAL:
        wants_lead = info.bets is not None and info.bets[info.seat] >= 1
        return wants_lead if wants_lead in legal else legal[0]
    cards = [action for action in legal if isinstance(action, str)]
    hand = info.hand
    if info.phase == Phase.BET:
        estimate = estimate_tricks(hand, info.num_seats)
        length = {suit: sum(1 for c in hand if SUIT[c] == suit) for suit in SUITS}
        return min(
            cards,
            key=lambda c: (
                abs(VALUE[c] - estimate) + (c == "N") * 0.01,
                -length.get(SUIT[c], 0),
                ORDER[c],
            ),
        )
    trump = info.trump

    def spend(card: Card) -> tuple[int, int, int]:
        return _spend_order(card, trump)

    need = (info.bets or (0,) * info.num_seats)[info.seat] - info.tricks_won[info.seat]
    if not info.trick:
        if need > 0:  # lead its strongest card, keeping `?` for later
            return max((c for c in cards if c != "?"), key=spend, default=cards[0])
        return min(cards, key=spend)
    played = [card for _, card in info.trick]
    wins = []
    for card in cards:
        lead = info.lead_suit or lead_suit_of([card])
        if trick_winner([*played, card], trump, lead) == len(played):
            wins.append(card)
    if need > 0:
        return min(wins or cards, key=spend)
    losses = [card for card in cards if card not in wins]
    return max(losses, key=spend) if losses else min(cards, key=spend)


_OPTIONS = {"target": OptionSpec(35, (21, 35, 49), "points a player must reach with a made bet")}


def _game(game_id: str, title: str, players: range, dummy_seats: tuple[int, ...] = ()) -> Game:
    return Game.of_module(
        sys.modules[__name__],
        id=game_id,
        title=title,
        players=players,
        rules=module_docstring(sys.modules[__name__]) + (module_docstring(dummy) if dummy_seats else ""),
        options=_OPTIONS,
        dummy_seats=dummy_seats,
        fixed_options={"variant": game_id},
    )


GAMES = (
    _game("oh7", "Oh 7?", range(3, 6)),
    _game("oh7-advanced", "Oh 7? advanced", range(3, 7)),
    _game("oh7-duel", "Oh 7? for two, with the Dummy", range(2, 3), (dummy.SEAT,)),
)
