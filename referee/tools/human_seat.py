"""`human`: a person at the terminal plays one seat of `septet match` (docs/bots.md, section 3).

`septet match --game oh-hell human bots/mine greedy` seats the person who typed it: when asked,
it shows the seat's information state (hand, trump, bids or bets, the trick, scores) and the
legal actions numbered from 1, and reads one line: a number, or the action itself (a card code
`QS`, a bid `3`, `y`/`n` for the Interrobang, a Black Sevens set `7H 7D`). Anything else gets a
one-line error and the question again. Between its decisions it prints what happened at the
table, from a `LiveView` of its seat fed by the match's observer hook, so it can never print a
card the seat may not see. End of input or Ctrl-C leaves the table: the series stops as an
interrupted `septet match` does.

The seat is untimed (a person thinks longer than a bot; `septet match` keeps the bots' time
control); its forced decisions (one legal action) are applied without asking, as for any
in-process player, and shown as they happen.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import fields, is_dataclass
from typing import Any, TextIO

from referee.engine.cards import DECK_52
from referee.engine.games import black_sevens, get_game, oh7
from referee.engine.games.base import Action, Event
from referee.engine.games.bidding import BiddingInfo
from referee.engine.live import LiveView
from referee.engine.match import Asking, MatchStart
from referee.tools.narration import TableNarrator

NAME = "human"
PROMPT = "> "
CARD_CODES = frozenset(DECK_52) | frozenset(oh7.VALUE)
"""Every card code of every game (RULES.md §0): a code outside it is not a card at all."""
YES = frozenset(("y", "yes", "true", "reveal"))
NO = frozenset(("n", "no", "false", "keep"))


class LeftTheTable(KeyboardInterrupt):
    """The person left (end of input): the series stops as on Ctrl-C (exit code 130)."""


class Refused(ValueError):
    """An answer that is not one of the legal actions; the message is the one line shown."""


def card_code(text: str) -> str:
    """A typed card as its code: any case, `10H` for `TH`, `n` for the Oh 7? `N`."""
    code = text.strip().upper()
    return "T" + code[2:] if code.startswith("10") and len(code) == 3 else code


def parse_answer(text: str, legal: tuple[Action, ...], hand: Sequence[str]) -> Action:
    """The legal action a typed line means; Refused (one line saying why) for anything else.

    A number picks from the numbered list, except for a bid: a bid is typed as itself (`0` is
    the bid 0), so bids are listed as they are, not numbered."""
    words = text.strip()
    sample = legal[0]
    if isinstance(sample, bool):
        return _yes_or_no(words)
    if isinstance(sample, int):
        return _bid(words, legal)
    if not words:
        raise Refused(f"type a number from 1 to {len(legal)}, or the {_what(sample)}")
    if words.isdigit():
        number = int(words)
        if not 1 <= number <= len(legal):
            raise Refused(f"there is no choice {number}: type a number from 1 to {len(legal)}")
        return legal[number - 1]
    cards = [card_code(word) for word in re.split(r"[\s,]+", words) if word]
    for card in cards:
        if card not in CARD_CODES:
            raise Refused(
                f"{card!r} is not a card: type a number from 1 to {len(legal)}, or the {_what(sample)}"
            )
    missing = [card for card in cards if cards.count(card) > list(hand).count(card)]
    if missing:
        raise Refused(f"you do not hold {' '.join(dict.fromkeys(missing))}")
    if isinstance(sample, tuple):  # Black Sevens: a set, in any order
        chosen = sorted(cards)
        for option in legal:
            if isinstance(option, tuple) and sorted(option) == chosen:
                return option
        raise Refused(f"{' '.join(cards)} is not a set you may play now: pick one of the {len(legal)} listed")
    if len(cards) > 1:
        raise Refused("play one card: type its number or its code")
    if cards[0] in legal:
        return cards[0]
    raise Refused(f"{cards[0]} is not yours to play now: {_why_not(legal)}")


def _yes_or_no(words: str) -> bool:
    answer = words.lower()
    if answer in YES or answer == "2":
        return True
    if answer in NO or answer == "1":
        return False
    raise Refused("type y to reveal the ? (or 2), n to keep it hidden (or 1)")


def _bid(words: str, legal: tuple[Action, ...]) -> int:
    bids = " ".join(str(bid) for bid in legal)
    if not re.fullmatch(r"\d{1,2}", words):
        raise Refused(f"type your bid, a number of tricks: {bids}")
    bid = int(words)
    if bid not in legal:
        raise Refused(f"you may not bid {bid} now: your bids are {bids}")
    return bid


def _shown(action: Action) -> str:
    return " ".join(action) if isinstance(action, tuple) else str(action)


def _what(sample: Action) -> str:
    """How to type an action like `sample` (a legal one: the example is real)."""
    return f"cards themselves, e.g. {_shown(sample)}" if isinstance(sample, tuple) else f"card, e.g. {sample}"


def _why_not(legal: tuple[Action, ...]) -> str:
    return f"you may play {' '.join(str(card) for card in legal)}"


class HumanSeat:
    """The `human` player: asks the person at the terminal and shows the table as it plays.

    It is also the match's observer (`step`), so it prints the other seats' bids and plays as
    they happen, filtered for its seat by a `LiveView`."""

    name = NAME

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self._in = stdin if stdin is not None else sys.stdin
        self._out = stdout if stdout is not None else sys.stdout
        self.seat = 0
        self._narrator = TableNarrator([], seat=None)
        self._view: LiveView | None = None
        self._title = ""

    # The match's hooks

    def start_match(self, start: MatchStart) -> None:
        """A new game: which seat is the person's, and who sits where (seats rotate each game)."""
        game = get_game(start.game)
        self.seat = start.seat
        self._view = LiveView(game, start.num_players, start.seat)
        self._narrator = TableNarrator(start.seat_names, seat=start.seat)
        self._title = game.title
        table = ", ".join(f"{seat}: {name}" for seat, name in enumerate(self._narrator.names))
        self._say("", f"=== {game.title} ({game.id}): you are seat {start.seat} ({table})")

    def step(self, events: Sequence[Event], asking: Asking | None) -> None:
        """What happened since the last step, as this seat may see it (the observer hook)."""
        if self._view is None:
            return
        lines = [
            line for message in self._view.step(events, asking) if (line := self._narrator.line(message))
        ]
        if lines:
            self._say(*lines)

    def decide(self, info_state: Any, legal_actions: tuple[Action, ...]) -> Action:
        """Shows the seat's view and the legal actions; reads lines until one is legal."""
        self._say("", *self._view_lines(info_state), *self._choice_lines(info_state, legal_actions))
        hand = tuple(getattr(info_state, "hand", ()))
        while True:
            line = self._read()
            try:
                return parse_answer(line, legal_actions, hand)
            except Refused as refused:
                self._say(f"  ! {refused}")

    # Reading and writing

    def _read(self) -> str:
        if self._in is sys.stdin and self._out is sys.stdout and sys.stdin.isatty():
            try:
                return input(PROMPT)  # with line editing
            except EOFError:
                raise LeftTheTable from None
        self._out.write(PROMPT)
        self._out.flush()
        line = self._in.readline()
        if not line:
            self._say("", "(end of input: you leave the table)")
            raise LeftTheTable
        self._say(line.rstrip("\n"))  # echoed, so a scripted session reads like a played one
        return line

    def _say(self, *lines: str) -> None:
        self._out.write("".join(f"{line}\n" for line in lines))
        self._out.flush()

    def _who(self, seat: Any) -> str:
        return self._narrator.who(seat)

    def _per_seat(self, values: Sequence[Any]) -> str:
        return self._narrator.per_seat(values)

    # The seat's view when asked

    def _view_lines(self, info: Any) -> list[str]:
        if isinstance(info, BiddingInfo):
            return self._bidding_view(info)
        if isinstance(info, oh7.InfoState):
            return self._oh7_view(info)
        if isinstance(info, black_sevens.InfoState):
            return self._black_sevens_view(info)
        if is_dataclass(info):  # a game this module does not know yet: every field as it is
            return [f"{field.name}: {getattr(info, field.name)}" for field in fields(info)]
        return [repr(info)]

    def _plays(self, plays: Sequence[tuple[int, Any]]) -> str:
        shown = [f"{self._who(seat)} {_shown(card)}" for seat, card in plays]
        return ", ".join(shown) or "no card yet"

    def _bidding_view(self, info: BiddingInfo) -> list[str]:
        lines = [
            f"{self._title}, round {info.round + 1} of {info.rounds}: {info.hand_size} card"
            f"{'s' if info.hand_size != 1 else ''}, dealer {self._who(info.dealer)}, "
            f"trump card {info.trump_card} (trump {info.trump})",
            f"scores: {self._per_seat(info.scores)}",
            f"bids: {self._per_seat(info.bids)}; tricks won: {self._per_seat(info.tricks_won)}",
        ]
        if all(bid is not None for bid in info.bids):  # bidding is over: the tricks
            lines.append(f"trick {len(info.tricks) + 1}: {self._plays(info.trick)}")
        if info.visible_cards:
            seen = ", ".join(f"{self._who(seat)} {card}" for seat, card in info.visible_cards)
            lines.append(f"your card is on your forehead; you see: {seen}")
        else:
            lines.append(f"your hand: {' '.join(info.hand)}")
        return lines

    def _oh7_view(self, info: oh7.InfoState) -> list[str]:
        players = range(info.num_players)
        made = ", ".join(f"{self._who(p)} {info.scores[p]} ({info.bets_made[p]} made)" for p in players)
        lines = [
            f"{self._title}, round {info.round + 1}{f' (redeal {info.redeals})' if info.redeals else ''}; "
            f"target {info.target}",
            f"scores: {made}",
        ]
        if any(info.bet_cards):
            cards = ", ".join(f"{self._who(p)} {' '.join(info.bet_cards[p]) or '-'}" for p in players)
            lines.append(f"bet cards so far: {cards}")
        if info.bets is not None:
            lines.append(f"bets: {self._per_seat(info.bets)}")
        if info.first_leader is not None:
            trump = info.trump or "none"
            lines.append(f"first leader {self._who(info.first_leader)}; trump {trump}")
            lines.append(f"tricks won: {self._per_seat(info.tricks_won)}")
        if info.dummy_up:
            lines.append(f"the Dummy's face-up cards: {' '.join(info.dummy_up)}")
        if info.phase == oh7.Phase.PLAY:
            lines.append(f"trick {len(info.tricks) + 1}: {self._plays(info.trick)}")
        lines.append(f"your hand: {' '.join(info.hand)}")
        return lines

    def _black_sevens_view(self, info: black_sevens.InfoState) -> list[str]:
        lines = [
            f"{self._title}, round {info.round_index + 1} of {black_sevens.ROUNDS} (lowest total wins)",
            f"scores: {self._per_seat(info.scores)}",
        ]
        if any(info.table):
            lines.append(
                f"last cards on the table: {self._per_seat([' '.join(c) or None for c in info.table])}"
            )
        lines.append(f"hands won: {self._per_seat(info.hands_won)}")
        if info.plays:
            lines.append(
                f"this hand: {self._plays(info.plays)}; standing: {' '.join(info.standing)} "
                f"({self._who(info.standing_seat)})"
            )
        else:
            lines.append("you lead this hand: play 1 or more cards of one value, keeping at least one")
        lines.append(f"your hand: {' '.join(info.hand)}")
        return lines

    def _choice_lines(self, info: Any, legal: tuple[Action, ...]) -> list[str]:
        sample = legal[0]
        if isinstance(sample, bool):
            return ["your bet ties for the lead and you hold the ?: reveal it to win the tie and lead?",
                    "  1) no, keep it hidden   2) yes, reveal it   (a number, or y / n)"]  # fmt: skip
        if isinstance(sample, int):
            return [f"your bid (a number of tricks): {' '.join(str(bid) for bid in legal)}"]
        shown = [f"{number}) {_shown(action)}" for number, action in enumerate(legal, 1)]
        verb = "bet with (its value is your bet)" if getattr(info, "phase", None) == oh7.Phase.BET else "play"
        return [f"{verb}: " + "  ".join(shown), f"  (type a number, or the {_what(sample)})"]
