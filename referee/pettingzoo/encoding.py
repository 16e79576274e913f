"""Fixed-size encodings of a seat's information state and of its actions, per game family.

An agent that learns needs numbers of a fixed shape; the engine speaks in dataclasses, card codes
and tuples. Each game family gets one `Encoding`:

- `observation(info)`: a flat float32 vector built from the seat's information state *only*
  (RULES.md §5), so an observation can never leak a hidden card. Its `layout` names every segment
  (shape, bounds, meaning); docs/pettingzoo.md shows the tables `python -m referee.pettingzoo`
  prints from it.
- `action_id(info, action)`: the engine action as an id of a fixed `Discrete(num_actions)` space,
  covering every decision kind of the game (cards, bids, bets, the Interrobang question, Black
  Sevens' sets), so one mask over one space serves every decision.

Per-seat blocks are in relative order: row 0 is the observing seat, row 1 the seat on its left
(the next clockwise), and so on; a policy then needs no notion of which seat it sits in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from referee.engine.cards import DECK_52
from referee.engine.games import black_sevens, oh7
from referee.engine.games.base import Action, Game

CARD_INDEX: dict[str, int] = {card: index for index, card in enumerate(DECK_52)}
"""52-card code -> its column in card blocks: suits S H D C, each from 2 up to the ace."""

SUITS_52 = "SHDC"

OH7_CARDS: tuple[str, ...] = tuple(oh7.ORDER)
"""Oh 7?'s 46 card codes: suits S H C D F (priority order), values 0-7, then 1* 2* 3* 4* N ?."""
OH7_INDEX: dict[str, int] = {card: index for index, card in enumerate(OH7_CARDS)}
OH7_SUITS = "SHCDF"

MAX_BID = 10
"""The largest bid of the exact-bid games (Oh Hell!'s 10-card hands; 7Up7Down's reach 7)."""
MAX_ROUNDS = 200
"""Bound of every round counter: Oh 7?'s cap (R-1.8) is the longest game."""
SCORE_BOUND = 100_000.0
"""Bound of every score: no game comes near it (Oh Hell!: ±2,900; Oh 7?: well under 20,000)."""


@dataclass(frozen=True)
class Segment:
    """One named part of the observation vector: where it starts, its shape and bounds."""

    name: str
    start: int
    shape: tuple[int, ...]
    low: float
    high: float
    meaning: str

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def stop(self) -> int:
        return self.start + self.size


class Layout:
    """The segments of one observation vector, in order, with the bounds of every element."""

    def __init__(self) -> None:
        self.segments: dict[str, Segment] = {}
        self.size = 0

    def add(
        self, name: str, shape: tuple[int, ...], meaning: str, high: float = 1.0, low: float = 0.0
    ) -> int:
        """Appends a segment; returns its start offset (the encoders write through it)."""
        segment = Segment(name, self.size, shape, low, high, meaning)
        self.segments[name] = segment
        self.size = segment.stop
        return segment.start

    def bounds(self) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Per-element low and high arrays for the observation's Box."""
        low = np.zeros(self.size, dtype=np.float32)
        high = np.ones(self.size, dtype=np.float32)
        for segment in self.segments.values():
            low[segment.start : segment.stop] = segment.low
            high[segment.start : segment.stop] = segment.high
        return low, high

    def markdown(self) -> str:
        """The layout as a Markdown table (offset, name, shape, bounds, meaning)."""
        rows = ["| offset | segment | shape | range | meaning |", "|---:|---|---|---|---|"]
        for segment in self.segments.values():
            shape = " x ".join(str(size) for size in segment.shape)
            bounds = f"{_number(segment.low)}..{_number(segment.high)}"
            rows.append(f"| {segment.start} | `{segment.name}` | {shape} | {bounds} | {segment.meaning} |")
        rows.append(f"| {self.size} | | | | total size |")
        return "\n".join(rows)


def _number(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"


Observation = NDArray[np.float32]


def _tricks_of_round(info: Any) -> tuple[Any, ...]:
    """The round's finished tricks and the current one, each once.

    Once the last trick of a game is won the engine keeps showing it as the current trick, and it
    is also the last finished one: counted twice, a seat that played `N` in it would show 3."""
    if info.tricks and info.trick == info.tricks[-1]:
        return tuple(info.tricks)
    return (*info.tricks, info.trick)


class Encoding:
    """The observation and action encoding of one game id at one seat count."""

    layout: Layout
    num_actions: int
    action_meaning: str
    """How ids map to actions, in one line per decision kind (docs and `__main__`)."""

    def __init__(self, game: Game, num_players: int) -> None:
        self.game = game
        self.num_players = num_players
        self.num_seats = seats = game.seat_count(num_players)
        self.seat_rows = tuple(tuple((seat - me) % seats for seat in range(seats)) for me in range(seats))
        """seat_rows[me][seat]: the row of `seat` in `me`'s per-seat blocks (0: `me`, then clockwise)."""
        self.player_rows = tuple(
            tuple((player - me) % num_players for player in range(num_players)) for me in range(num_players)
        )
        """player_rows[me][player]: the same for per-player blocks (the duel's Dummy has no row)."""

    def observation(self, info: Any) -> Observation:
        """The seat's information state as a vector of `layout.size` float32 values."""
        out = np.zeros(self.layout.size, dtype=np.float32)
        self.fill(info, out)
        return out

    def fill(self, info: Any, out: Observation) -> None:
        raise NotImplementedError

    def action_id(self, info: Any, action: Action) -> int:
        """The id of a legal engine action of the seat whose information state is `info`."""
        raise NotImplementedError


class BiddingEncoding(Encoding):
    """Oh Hell! and 7Up7Down: 52 cards, a trump card, bids, plain tricks."""

    action_meaning = (
        "0-51: play card 13 x suit + rank - 2 (suits S H D C are 0-3, ranks 2-14 with the ace 14: the"
        " columns of card blocks); 52-62: bid 0-10"
    )

    def __init__(self, game: Game, num_players: int, blind_rounds: bool) -> None:
        super().__init__(game, num_players)
        n, layout = self.num_seats, Layout()
        self.hand = layout.add("hand", (52,), "the seat's own cards")
        self.trick = layout.add("trick", (n, 52), "the card each seat has played in the current trick")
        self.played = layout.add("played", (n, 52), "every card each seat has played this round")
        self.bids = layout.add(
            "bids", (n, MAX_BID + 1), "each seat's bid, one-hot 0-10 (a zero row: not bid yet)"
        )
        self.tricks_won = layout.add("tricks_won", (n,), "tricks each seat has won this round", MAX_BID)
        self.scores = layout.add(
            "scores", (n,), "each seat's total before this round (raw points)", SCORE_BOUND, -SCORE_BOUND
        )
        self.trump_card = layout.add("trump_card", (52,), "the turned-up trump card (not in play)")
        self.trump_suit = layout.add("trump_suit", (4,), "the trump suit: S H D C")
        self.dealer = layout.add("dealer", (n,), "the dealer of this round")
        self.leader = layout.add(
            "trick_leader", (n,), "who leads the current trick (while bidding: the first)"
        )
        self.round = layout.add(
            "round", (1,), "the round's index, from 0 (extra hands continue it)", MAX_ROUNDS
        )
        self.hand_size = layout.add("hand_size", (1,), "cards dealt to each seat this round", MAX_BID)
        self.phase = layout.add("phase", (2,), "what is being decided: bid, play")
        self.blind_rounds = blind_rounds
        if blind_rounds:
            self.visible = layout.add(
                "visible_cards", (n, 52), "one-card rounds (R-4.4): the card on each other seat's forehead"
            )
        self.layout = layout
        self.num_actions = 52 + MAX_BID + 1

    def fill(self, info: Any, out: Observation) -> None:
        row, cards = self.seat_rows[info.seat], CARD_INDEX
        hand, trick, played = self.hand, self.trick, self.played
        ones = [hand + cards[card] for card in info.hand]
        ones += [trick + row[seat] * 52 + cards[card] for seat, card in info.trick]
        for done in _tricks_of_round(info):
            ones += [played + row[seat] * 52 + cards[card] for seat, card in done]
        ones += [
            self.bids + row[seat] * (MAX_BID + 1) + bid
            for seat, bid in enumerate(info.bids)
            if bid is not None
        ]
        if info.trump_card:
            ones += [self.trump_card + cards[info.trump_card], self.trump_suit + SUITS_52.index(info.trump)]
        if info.dealer >= 0:
            ones.append(self.dealer + row[info.dealer])
        if info.leader >= 0:
            ones.append(self.leader + row[info.leader])
        if info.trump_card and len(info.tricks) < info.hand_size:  # dealt and not over
            bidding = None in info.bids
            ones.append(self.phase + (0 if bidding else 1))
        if self.blind_rounds:
            ones += [self.visible + row[seat] * 52 + cards[card] for seat, card in info.visible_cards]
        out[ones] = 1
        for seat in range(self.num_seats):
            out[self.tricks_won + row[seat]] = info.tricks_won[seat]
            out[self.scores + row[seat]] = info.scores[seat]
        out[self.round] = info.round
        out[self.hand_size] = info.hand_size

    def action_id(self, info: Any, action: Action) -> int:
        if isinstance(action, str):
            return CARD_INDEX[action]
        if isinstance(action, int) and not isinstance(action, bool):
            return 52 + action
        raise ValueError(f"{self.game.id}: no action id for {action!r}")


BLACK_SEVENS_HAND = 7
BLACK_SEVENS_ROUNDS = 7


class BlackSevensEncoding(Encoding):
    """Black Sevens: sets of cards against a standing set, last cards on the table."""

    action_meaning = (
        "1-127: play the set of the hand's cards whose positions are the id's bits (bit i: row i of"
        " `hand_slots`, the hand sorted by value then C < D < H < S); 0 is never legal"
    )

    def __init__(self, game: Game, num_players: int) -> None:
        super().__init__(game, num_players)
        n, layout = self.num_seats, Layout()
        self.hand = layout.add("hand", (52,), "the seat's own cards")
        self.slots = layout.add(
            "hand_slots", (BLACK_SEVENS_HAND, 52),
            "row i: the card at position i of the sorted hand (action bit i plays it)",
        )  # fmt: skip
        self.standing = layout.add("standing", (52,), "the standing set's cards (the set to beat)")
        self.owner = layout.add("standing_owner", (n,), "who placed the standing set (zeros before the lead)")
        self.set_size = layout.add("set_size", (1,), "cards per set in this hand (0 before the lead)", 4)
        self.leader = layout.add("hand_leader", (n,), "who leads the current hand")
        self.plays = layout.add("plays", (n, 52), "the set each seat has played in the current hand")
        self.played = layout.add("played", (n, 52), "every card each seat has played this round")
        self.held = layout.add(
            "cards_held", (1,), "cards each seat held when this hand began", BLACK_SEVENS_HAND
        )
        self.hands_won = layout.add(
            "hands_won", (n,), "hands each seat has won this round", BLACK_SEVENS_HAND
        )
        self.table = layout.add(
            "table", (n, 52), "each seat's last cards on the table: out of the deck (R-3.9)"
        )
        self.last_points = layout.add(
            "last_card_points",
            (n, BLACK_SEVENS_ROUNDS),
            "each seat's points per earlier round (its last card)",
            25,
        )
        self.scores = layout.add("scores", (n,), "each seat's total so far (lower is better)", 7 * 25)
        self.round = layout.add(
            "round", (1,), "the round's index, 0-6 (7 once the game is over)", BLACK_SEVENS_ROUNDS
        )
        self.round_leader = layout.add("round_leader", (n,), "who led this round's first hand")
        self.layout = layout
        self.num_actions = 1 << BLACK_SEVENS_HAND

    def fill(self, info: Any, out: Observation) -> None:
        row, cards = self.seat_rows[info.seat], CARD_INDEX
        ones = [self.hand + cards[card] for card in info.hand]
        ones += [self.slots + position * 52 + cards[card] for position, card in enumerate(info.hand)]
        ones += [self.standing + cards[card] for card in info.standing]
        if info.standing_seat is not None:
            ones.append(self.owner + row[info.standing_seat])
        if info.hand:
            ones.append(self.leader + row[info.leader])
        for seat, played in info.plays:
            ones += [self.plays + row[seat] * 52 + cards[card] for card in played]
        if info.round_leader is not None:
            ones.append(self.round_leader + row[info.round_leader])
        for seat in range(self.num_seats):
            rel = row[seat]
            ones += [self.played + rel * 52 + cards[card] for card in info.played[seat]]
            ones += [self.table + rel * 52 + cards[card] for card in info.table[seat]]
            for index, card in enumerate(info.table[seat]):
                out[self.last_points + rel * BLACK_SEVENS_ROUNDS + index] = black_sevens.VALUE[card]
            out[self.hands_won + rel] = info.hands_won[seat]
            out[self.scores + rel] = info.scores[seat]
        out[ones] = 1
        out[self.set_size] = info.set_size
        out[self.held] = info.hand_size
        out[self.round] = info.round_index

    def action_id(self, info: Any, action: Action) -> int:
        if not isinstance(action, tuple):
            raise ValueError(f"{self.game.id}: no action id for {action!r}")
        hand = info.hand
        return sum(1 << hand.index(card) for card in action)


OH7_ATTEMPTS = 3
_OH7_PHASES = {"bet": 0, "reveal": 1, "play": 2}
OH7_TRICKS = 7


class Oh7Encoding(Encoding):
    """Oh 7?, its advanced deck and the duel: bets with cards, the Interrobang, special cards."""

    action_meaning = (
        "0-45: play card 8 x suit + value (suits S H C D F are 0-4, values 0-7), 40-45 the specials"
        " 1* 2* 3* 4* N ? (the columns of card blocks); 46-91: bet with card id - 46; 92: keep `?` hidden;"
        " 93: reveal it (R-1.4)"
    )

    def __init__(self, game: Game, num_players: int) -> None:
        super().__init__(game, num_players)
        seats, players, layout = self.num_seats, num_players, Layout()
        cards = len(OH7_CARDS)
        self.hand = layout.add("hand", (cards,), "the seat's own cards, as counts (`N` may be held twice)", 2)
        self.phase = layout.add("phase", (3,), "what is being decided: bet, reveal, play")
        self.attempt = layout.add(
            "attempt", (OH7_ATTEMPTS,), "the betting attempt of this round (R-1.1: up to 3)"
        )
        self.bet_cards = layout.add(
            "bet_cards",
            (players, OH7_ATTEMPTS, cards),
            "the card each player bet with in each revealed attempt",
        )
        self.bets = layout.add(
            "bets", (seats, 8), "each seat's final bet, one-hot 0-7 (zeros until final; the Dummy's is 2)"
        )
        self.revealer = layout.add("revealer", (seats,), "who revealed `?` to win the tie, if anyone")
        self.first_leader = layout.add("first_leader", (seats,), "the round's first leader once chosen")
        self.trump = layout.add("trump", (6,), "trump suit S H C D F, or the last slot for no trump")
        self.leader = layout.add("trick_leader", (seats,), "who leads the current trick")
        self.lead_suit = layout.add("lead_suit", (5,), "the current trick's lead suit S H C D F, once set")
        self.trick = layout.add("trick", (seats, cards), "the card each seat has played in the current trick")
        self.played = layout.add("played", (seats, cards), "every card each seat has played this round", 2)
        self.tricks_won = layout.add(
            "tricks_won", (seats,), "tricks each seat has won this round", OH7_TRICKS
        )
        self.dummy_up = layout.add("dummy_up", (cards,), "the Dummy's face-up cards (oh7-duel)")
        self.is_dummy = layout.add("is_dummy", (seats,), "which seat is the Dummy (oh7-duel)")
        self.scores = layout.add("scores", (players,), "each player's total (raw points)", SCORE_BOUND)
        self.bets_made = layout.add(
            "bets_made", (players,), "bets each player has made this game", MAX_ROUNDS
        )
        self.round = layout.add("round", (1,), "the round's index, from 0", MAX_ROUNDS)
        self.redeals = layout.add("redeals", (1,), "redeals in a row this round (R-1.2)", 11)
        self.target = layout.add("target", (1,), "the points a player must reach (option `target`)", 49)
        self.layout = layout
        self.num_actions = 2 * cards + 2

    def fill(self, info: Any, out: Observation) -> None:
        seat_row, player_row = self.seat_rows[info.seat], self.player_rows[info.seat]
        cards, index = len(OH7_CARDS), OH7_INDEX
        ones = [self.hand + index[card] for card in info.hand]
        phase = _OH7_PHASES.get(str(info.phase))
        if phase is not None:
            ones += [self.phase + phase, self.attempt + info.attempt]
        for player, bet_cards in enumerate(info.bet_cards):
            start = self.bet_cards + player_row[player] * OH7_ATTEMPTS * cards
            ones += [start + attempt * cards + index[card] for attempt, card in enumerate(bet_cards)]
        if info.bets is not None:
            ones += [self.bets + seat_row[seat] * 8 + bet for seat, bet in enumerate(info.bets)]
        if info.revealer is not None:
            ones.append(self.revealer + seat_row[info.revealer])
        if info.first_leader is not None:
            ones.append(self.first_leader + seat_row[info.first_leader])
            ones.append(self.trump + (OH7_SUITS.index(info.trump) if info.trump else 5))
        if info.leader is not None:
            ones.append(self.leader + seat_row[info.leader])
        if info.lead_suit is not None:
            ones.append(self.lead_suit + OH7_SUITS.index(info.lead_suit))
        ones += [self.trick + seat_row[seat] * cards + index[card] for seat, card in info.trick]
        naughts = [seat for done in _tricks_of_round(info) for seat, card in done if card == "N"]
        for done in _tricks_of_round(info):
            ones += [self.played + seat_row[seat] * cards + index[card] for seat, card in done]
        ones += [self.dummy_up + index[card] for card in info.dummy_up]
        if info.dummy is not None:
            ones.append(self.is_dummy + seat_row[info.dummy])
        out[ones] = 1
        # `N` is the one card held or played twice (oh7-advanced has two): those elements count 2.
        if info.hand.count("N") == 2:
            out[self.hand + index["N"]] = 2
        for seat in set(naughts):
            out[self.played + seat_row[seat] * cards + index["N"]] = naughts.count(seat)
        for seat in range(self.num_seats):
            out[self.tricks_won + seat_row[seat]] = info.tricks_won[seat]
        for player in range(self.num_players):
            out[self.scores + player_row[player]] = info.scores[player]
            out[self.bets_made + player_row[player]] = info.bets_made[player]
        out[self.round] = info.round
        out[self.redeals] = info.redeals
        out[self.target] = info.target

    def action_id(self, info: Any, action: Action) -> int:
        if isinstance(action, bool):
            return 2 * len(OH7_CARDS) + int(action)
        if isinstance(action, str):
            return OH7_INDEX[action] + (len(OH7_CARDS) if str(info.phase) == "bet" else 0)
        raise ValueError(f"{self.game.id}: no action id for {action!r}")


def encoding_for(game: Game, num_players: int) -> Encoding:
    """The encoding of `game` at `num_players` players (the game checks the count)."""
    game.check_players(num_players)
    if game.id in ("oh-hell", "seven-up-seven-down"):
        return BiddingEncoding(game, num_players, blind_rounds=game.id == "seven-up-seven-down")
    if game.id == "black-sevens":
        return BlackSevensEncoding(game, num_players)
    if game.id.startswith("oh7"):
        return Oh7Encoding(game, num_players)
    raise ValueError(f"no PettingZoo encoding for game {game.id!r} yet")
