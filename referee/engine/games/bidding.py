"""The exact-bid trick games' shared engine: Oh Hell! (RULES.md §2) and 7Up7Down (§4).

Both games deal hands that shrink and grow again, turn up a trump card, let each player bid the
exact number of tricks they will take (from the dealer's left, the dealer last; the dealer may not
make the bids total the hand size), and play plain tricks (`referee.engine.tricks`). What differs is
data, kept in a `Rules` record: the hand sizes, who leads the first trick, the scoring, the extra
hands that break a tie for the top (Oh Hell!) and the one-card rounds bid blind (7Up7Down). Each
game module binds its `Rules` into `new_game`, draws its own deal (`sample_chance`), and uses the
verbs below as its own.

Phases of a round: DEAL (chance) -> BID (one seat at a time) -> PLAY (tricks) -> the next DEAL,
or OVER. Rounds are numbered from 0 (`round_index`) in states, events and information states.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from referee.engine.cards import DECK_52, RANK_VALUE
from referee.engine.games.base import (
    CHANCE,
    Action,
    Card,
    ChanceOutcome,
    Decision,
    DecisionKind,
    Event,
    GameError,
    Options,
    Result,
    competition_ranks,
)
from referee.engine.tricks import playable_cards, trick_winner

MAX_PLAYERS = 7

Play = tuple[int, Card]
"""One card played in a trick, with who played it: `(seat, card)`."""


@dataclass(frozen=True)
class Rules:
    """What one exact-bid game makes of the shared engine."""

    game_id: str
    players: range
    hand_sizes: Callable[[int], tuple[int, ...]]
    """Number of players -> the hand size of every regular round, in order."""
    first_leader: int
    """Seats clockwise from the dealer to the first trick's leader: 0 the dealer, 1 their left."""
    score: Callable[[int, int], int]
    """(bid, tricks won) -> the round's points."""
    extra_hands: int = 0
    """At most this many extra hands at the starting size while the top total is tied."""
    blind_one_card_rounds: bool = False
    """One-card rounds are bid blind: each seat sees the others' cards, not its own."""


class Phase(IntEnum):
    """What the game waits for."""

    DEAL = 0
    BID = 1
    PLAY = 2
    OVER = 3


_DEAL, _BID, _PLAY, _OVER = Phase.DEAL, Phase.BID, Phase.PLAY, Phase.OVER

DECK_ORDER: dict[Card, int] = {card: index for index, card in enumerate(DECK_52)}
"""Sort key of the hands: suits S H D C, then rank from 2 to ace."""


@dataclass(slots=True)
class State:
    """A game in progress; every field holds immutable data, `apply` returns an edited copy."""

    rules: Rules
    num_players: int
    hand_sizes: tuple[int, ...]
    """The regular rounds' hand sizes (extra hands are played at `hand_sizes[0]`)."""
    scores: tuple[int, ...]
    round_index: int
    phase: Phase
    dealer: int
    """The dealer of this round (or of the next deal); -1 until the first deal draws one."""
    hand_size: int
    trump_card: Card | None
    trump: str | None
    hands: tuple[tuple[Card, ...], ...]
    """Each seat's cards in `DECK_ORDER`, so a hand never needs sorting again."""
    bids: tuple[int | None, ...]
    to_act: int
    leader: int
    """Who leads the current trick (during bidding: who will lead the first)."""
    trick: tuple[Play, ...]
    tricks: tuple[tuple[Play, ...], ...]
    """The tricks finished this round, in order."""
    tricks_won: tuple[int, ...]
    events: tuple[Event, ...] = ()

    def _copy(self) -> State:
        return State(
            self.rules,
            self.num_players,
            self.hand_sizes,
            self.scores,
            self.round_index,
            self.phase,
            self.dealer,
            self.hand_size,
            self.trump_card,
            self.trump,
            self.hands,
            self.bids,
            self.to_act,
            self.leader,
            self.trick,
            self.tricks,
            self.tricks_won,
        )


@dataclass(slots=True)
class BiddingInfo:
    """What one seat may know (RULES.md §5): its own hand and everything public, nothing more."""

    # The game, the seat and the table.
    game: str
    seat: int
    num_players: int
    options: tuple[tuple[str, Any], ...]
    # The game so far: totals before this round, this round's index (from 0), the regular rounds.
    scores: tuple[int, ...]
    round: int
    rounds: int
    # This round's deal: hand size, dealer, the turned-up trump card and its suit.
    hand_size: int
    dealer: int
    trump_card: Card
    trump: str
    # The seat's own cards, in deck order. In a blind one-card round (7Up7Down, R-4.4) `hand` is
    # empty and `visible_cards` holds the other seats' unplayed cards as (seat, card) pairs.
    hand: tuple[Card, ...]
    visible_cards: tuple[Play, ...]
    # Bids per seat (None: not yet), who leads the current trick (while bidding: the first
    # trick), the current trick and the finished tricks of this round as (seat, card) plays in
    # play order, and the tricks won so far per seat.
    bids: tuple[int | None, ...]
    leader: int
    trick: tuple[Play, ...]
    tricks: tuple[tuple[Play, ...], ...]
    tricks_won: tuple[int, ...]


# 1. Deal


def new_game(rules: Rules, num_players: int, options: Options, scores: Any, round_index: int) -> State:
    """A game of `rules` waiting for its deal, optionally from a later round with given scores."""
    if num_players not in rules.players:
        first, last = rules.players.start, rules.players.stop - 1
        raise GameError(f"{rules.game_id} is played by {first}-{last} players, not {num_players}")
    if options:
        raise GameError(f"{rules.game_id} has no options, got {sorted(options)}")
    hand_sizes = rules.hand_sizes(num_players)
    last_round = len(hand_sizes) + rules.extra_hands - 1
    if not 0 <= round_index <= last_round:
        raise GameError(f"{rules.game_id} round_index must be 0..{last_round}, not {round_index}")
    totals = (0,) * num_players if scores is None else tuple(scores)
    if len(totals) != num_players or not all(type(score) is int for score in totals):
        raise GameError(f"{rules.game_id} needs one integer score per seat, got {scores!r}")
    state = State(
        rules, num_players, hand_sizes, totals, round_index, _DEAL, -1, 0, None, None,
        ((),) * num_players, (None,) * num_players, -1, -1, (), (), (0,) * num_players,
    )  # fmt: skip
    state.hand_size = _hand_size(state, round_index)
    return state


def _hand_size(state: State, round_index: int) -> int:
    sizes = state.hand_sizes
    return sizes[round_index] if round_index < len(sizes) else sizes[0]  # extra hands


def shuffled_deal(state: State, rng: random.Random) -> tuple[ChanceOutcome, list[Card]]:
    """A shuffled deal of this round's hands (and the first dealer, R-2.1) plus the undealt cards.

    The caller adds the trump card, drawn as its rulebook says.
    """
    outcome: ChanceOutcome = {}
    if state.dealer < 0:
        outcome["dealer"] = rng.randrange(state.num_players)
    deck = list(DECK_52)
    rng.shuffle(deck)
    size = state.hand_size
    outcome["hands"] = [deck[seat * size : (seat + 1) * size] for seat in range(state.num_players)]
    return outcome, deck[state.num_players * size :]


_OUTCOME_KEYS = ("dealer", "hands", "trump_card")


def _check_deal(state: State, outcome: ChanceOutcome) -> tuple[int, list[list[Card]], Card]:
    """The dealer, hands and trump card of a deal outcome; GameError when it is malformed."""
    if state.phase is not _DEAL:
        raise GameError("no deal is due: the round is already dealt")
    if not isinstance(outcome, dict):
        raise GameError(f"deal outcome must be a dict, not {type(outcome).__name__}")
    unknown = sorted(set(outcome) - set(_OUTCOME_KEYS))
    if unknown:
        raise GameError(f"deal outcome has unknown key {unknown[0]!r} (keys: dealer, hands, trump_card)")
    n, size = state.num_players, state.hand_size
    dealer = outcome.get("dealer")
    if state.dealer < 0:
        if type(dealer) is not int or not 0 <= dealer < n:
            raise GameError(f"the first deal must draw the dealer: a seat 0..{n - 1}, not {dealer!r}")
    elif dealer is None:
        dealer = state.dealer
    elif dealer != state.dealer:
        raise GameError(f"deal outcome names dealer {dealer!r}, but the deal passes to {state.dealer}")
    hands = outcome.get("hands")
    if not isinstance(hands, list) or len(hands) != n:
        raise GameError(f"deal outcome needs 'hands': a list of {n} hands")
    trump_card = outcome.get("trump_card")
    seen: set[Card] = set()
    for seat, hand in enumerate(hands):
        if not isinstance(hand, list):
            raise GameError(f"deal outcome: hand {seat} must be a list of card codes")
        if len(hand) != size:
            raise GameError(f"deal outcome: hand {seat} has {len(hand)} cards, expected {size}")
        for card in hand:
            if not isinstance(card, str) or card not in DECK_ORDER:
                raise GameError(f"deal outcome: hand {seat} has an unknown card {card!r}")
            if card in seen:
                raise GameError(f"deal outcome: card {card} is dealt twice")
            seen.add(card)
    if not isinstance(trump_card, str) or trump_card not in DECK_ORDER:
        raise GameError(f"deal outcome needs a 'trump_card' code like '4C', not {trump_card!r}")
    if trump_card in seen:
        raise GameError(f"deal outcome: trump card {trump_card} is also in a hand")
    return dealer, hands, trump_card


def _deal(state: State, outcome: ChanceOutcome) -> State:
    dealer, hands, trump_card = _check_deal(state, outcome)
    n = state.num_players
    new = state._copy()
    new.phase = _BID
    new.dealer = dealer
    new.trump_card = trump_card
    new.trump = trump_card[1]
    new.hands = tuple(tuple(sorted(hand, key=DECK_ORDER.__getitem__)) for hand in hands)
    new.bids = (None,) * n
    new.to_act = (dealer + 1) % n  # bidding starts at the dealer's left
    new.leader = (dealer + state.rules.first_leader) % n
    new.trick = ()
    new.tricks = ()
    new.tricks_won = (0,) * n
    new.events = (
        {
            "type": "deal",
            "round": state.round_index,
            "hand_size": state.hand_size,
            "dealer": dealer,
            "hands": [list(hand) for hand in new.hands],
            "trump_card": trump_card,
        },
    )
    return new


# 2. Bid and 3. Play

_DEAL_DECISION = Decision(DecisionKind.DEAL, ())
_BID_DECISIONS = tuple(Decision(DecisionKind.BID, (seat,)) for seat in range(MAX_PLAYERS))
_PLAY_DECISIONS = tuple(Decision(DecisionKind.PLAY, (seat,)) for seat in range(MAX_PLAYERS))

_BIDS = tuple(tuple(range(size + 1)) for size in range(11))
"""Hand size -> every bid 0..size."""
_DEALER_BIDS = tuple(
    tuple(tuple(bid for bid in range(size + 1) if bid != banned) for banned in range(size + 1))
    for size in range(11)
)
"""Hand size -> the bid the dealer may not make -> the dealer's bids."""


def to_move(state: State) -> Decision | None:
    """The next decision: the deal (chance), a seat's bid, a seat's card; None once over."""
    phase = state.phase
    if phase is _PLAY:
        return _PLAY_DECISIONS[state.to_act]
    if phase is _BID:
        return _BID_DECISIONS[state.to_act]
    return _DEAL_DECISION if phase is _DEAL else None


def legal_actions(state: State, seat: int) -> tuple[Action, ...]:
    """Bids 0..hand size (the dealer's restricted), or the cards that follow suit if able."""
    if seat != state.to_act:
        return ()
    if state.phase is _PLAY:
        trick = state.trick
        return playable_cards(state.hands[seat], trick[0][1][1] if trick else None)
    if state.phase is _BID:
        size = state.hand_size
        if seat != state.dealer:
            return _BIDS[size]
        banned = size - sum(bid for bid in state.bids if bid is not None)
        # The dealer may not make the bids total the hand size.
        return _DEALER_BIDS[size][banned] if banned >= 0 else _BIDS[size]
    return ()


def apply(state: State, seat: int, action: Any) -> State:
    """The state after `seat` acts (`CHANCE`: a deal outcome); `state` itself is unchanged."""
    if seat == CHANCE:
        return _deal(state, action)
    n = state.num_players
    new = state._copy()
    if state.phase is _BID:  # a bid is final
        bids = list(state.bids)
        bids[seat] = int(action)
        new.bids = tuple(bids)
        if seat == state.dealer:
            new.phase = _PLAY
            new.to_act = state.leader
        else:
            new.to_act = (seat + 1) % n
        new.events = ({"type": "bid", "seat": seat, "bid": bids[seat]},)
        return new
    hand = state.hands[seat]
    index = hand.index(action)
    hands = list(state.hands)
    hands[seat] = hand[:index] + hand[index + 1 :]
    new.hands = tuple(hands)
    trick = (*state.trick, (seat, action))
    play = {"type": "play", "seat": seat, "card": action}
    if len(trick) < n:
        new.trick = trick
        new.to_act = (seat + 1) % n
        new.events = (play,)
        return new
    # Highest trump, else highest card of the led suit; the winner leads the next trick.
    winner = trick[trick_winner([card for _, card in trick], state.trump)][0]
    won = list(state.tricks_won)
    won[winner] += 1
    new.tricks_won = tuple(won)
    new.trick = ()
    new.tricks = (*state.tricks, trick)
    new.to_act = new.leader = winner
    events: list[Event] = [
        play,
        {"type": "trick", "winner": winner, "plays": [[who, card] for who, card in trick]},
    ]
    if len(new.tricks) == state.hand_size:
        _end_round(new, events)
    new.events = tuple(events)
    return new


# 4. Score


def _end_round(new: State, events: list[Event]) -> None:
    """Scores the round into `new`, then sets up the next deal or ends the game."""
    rules, n = new.rules, new.num_players
    bids = [bid if bid is not None else 0 for bid in new.bids]
    points = [rules.score(bid, won) for bid, won in zip(bids, new.tricks_won, strict=True)]
    new.scores = scores = tuple(total + gain for total, gain in zip(new.scores, points, strict=True))
    events.append(
        {
            "type": "round_end",
            "round": new.round_index,
            "hand_size": new.hand_size,
            "bids": bids,
            "tricks": list(new.tricks_won),
            "points": points,
            "scores": list(scores),
        }
    )
    next_round = new.round_index + 1
    regular = len(new.hand_sizes)
    tied_top = scores.count(max(scores)) > 1
    # while the top is tied, everyone plays an extra hand, up to the cap.
    if next_round < regular or (tied_top and next_round < regular + rules.extra_hands):
        new.round_index = next_round
        new.hand_size = _hand_size(new, next_round)
        new.dealer = (new.dealer + 1) % n  # the deal rotates clockwise
        new.phase = _DEAL
        new.to_act = new.leader = -1
        return
    new.phase = _OVER
    new.to_act = new.leader = -1
    events.append(
        {"type": "game_end", "scores": list(scores), "ranks": list(competition_ranks(scores)),
         "aborted": False}
    )  # fmt: skip


def result(state: State) -> Result | None:
    """Final scores; ranks by total, tied seats sharing the better rank (R-2.3, R-4.5)."""
    if state.phase is not _OVER:
        return None
    return Result(state.scores, competition_ranks(state.scores))


# What a seat may know


def information_state(state: State, seat: int) -> BiddingInfo:
    """RULES.md §5: the seat's own hand (blind one-card rounds: the others' cards) and the public."""
    hands = state.hands
    hand = hands[seat]
    visible: tuple[Play, ...] = ()
    if state.hand_size == 1 and state.rules.blind_one_card_rounds:
        hand = ()
        visible = tuple((other, hands[other][0]) for other in range(state.num_players)
                        if other != seat and hands[other])  # fmt: skip
    return BiddingInfo(
        state.rules.game_id, seat, state.num_players, (), state.scores, state.round_index,
        len(state.hand_sizes), state.hand_size, state.dealer, state.trump_card or "",
        state.trump or "", hand, visible, state.bids, state.leader, state.trick, state.tricks,
        state.tricks_won,
    )  # fmt: skip


# The greedy policy


def hand_strength(hand: tuple[Card, ...], trump: str, num_players: int) -> float:
    """Expected tricks of a hand: high trumps, long trumps, side aces and guarded kings.

    Counted for four players; against fewer opponents every card wins more often.
    """
    length = {suit: 0 for suit in "SHDC"}
    for card in hand:
        length[card[1]] += 1
    expected = max(0, length[trump] - 3) * 0.5
    for card in hand:
        rank, suit = RANK_VALUE[card], card[1]
        if suit == trump:
            expected += 1.0 if rank >= 12 else 0.6 if rank >= 10 else 0.3
        elif rank == 14:
            expected += 0.85
        elif rank == 13 and length[suit] >= 2:
            expected += 0.5
    return expected * max(1.0, 4 / num_players)


def nearest_bid(expected: float, legal: tuple[Action, ...]) -> Action:
    """The legal bid closest to `expected` (the lower one on a tie): the dealer's restriction."""
    bids = [bid for bid in legal if isinstance(bid, int)]
    return min(bids, key=lambda bid: (abs(bid - expected), bid))


def _strength(trump: str) -> Callable[[Card], tuple[bool, int]]:
    return lambda card: (card[1] == trump, RANK_VALUE[card])


def greedy_play(info: BiddingInfo, legal: tuple[Action, ...]) -> Action:
    """Needing tricks: win as cheaply as possible; with enough: the highest card that loses."""
    cards = [str(card) for card in legal]
    trump = info.trump
    key = _strength(trump)
    bid = info.bids[info.seat] or 0
    needs = bid > info.tricks_won[info.seat]
    if not info.trick:
        return max(cards, key=key) if needs else min(cards, key=key)
    played = [card for _, card in info.trick]
    best = played[trick_winner(played, trump)]

    def beats(card: Card) -> bool:
        if card[1] == best[1]:
            return RANK_VALUE[card] > RANK_VALUE[best]
        return card[1] == trump

    if needs:
        winners = [card for card in cards if beats(card)]
        return min(winners or cards, key=key)
    losers = [card for card in cards if not beats(card)]
    return max(losers, key=key) if losers else min(cards, key=key)


def greedy(info: BiddingInfo, legal: tuple[Action, ...]) -> Action:
    """Bid the hand's expected tricks (nearest allowed bid), then play to make it exactly."""
    if isinstance(legal[0], int):
        return nearest_bid(hand_strength(info.hand, info.trump, info.num_players), legal)
    return greedy_play(info, legal)
