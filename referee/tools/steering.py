"""Steering a check's games toward the situations the bot has not been asked yet.

Some edge situations hang on what every seat does at once, which plain greedy opponents rarely
line up: Oh 7?'s re-bet needs the bets of one attempt to sum to 7, and oh7-advanced's Interrobang
question needs the bot, holding `?`, tied for the top bet with a seat that wins the tie by suit
(R-1.4, R-1.12). While one of them is unseen, `septet check` steers the opponents' bets: each
opponent waits, within its own decision time, for the bot's bet of the same attempt, then the
opponents bet together the cards that make the situation happen, when their hands allow it;
otherwise they bet as greedy would. The extra games (after the planned ones) are dealt, by
dealing seeds with the engine, so that the bot holds the `?`.

The opponents see the bot's bet and the hands only here, in the check's own process, as the
referee does; the bot is asked exactly what a seat at such a table would be asked, and every
game stays a legal game with a replay that verifies. A check's seed still replays it: the steered
seats follow the bot's answers, which a deterministic bot repeats.
"""

from __future__ import annotations

import itertools
import random
import threading
from dataclasses import dataclass, field
from typing import Any

from referee.engine.games import oh7
from referee.engine.games.base import CHANCE, Action, DecisionKind, Game
from referee.engine.match import Turn

STEERED = frozenset({"re-bet", "reveal"})
"""The situations steering can bring about (Oh 7? and oh7-advanced bets)."""
STEERED_GAMES = frozenset({"oh7", "oh7-advanced"})
WAIT_SHARE = 0.6
"""The share of its own decision time an opponent waits for the bot's bet before betting unsteered."""
UNTIMED_WAIT = 5.0
MAX_COMBINATIONS = 50_000
"""Bets of the opponents tried at most when looking for a steering plan (7^5 is 16,807)."""
SEED_SEARCH = 400
"""Seeds dealt at most when looking for one that deals the bot the `?`."""


def wants_steering(game: Game, missing: set[str]) -> bool:
    return game.id in STEERED_GAMES and bool(missing & STEERED)


def seed_dealing(game: Game, players: int, seat: int, card: str, start: int, used: set[int]) -> int:
    """The first seed from `start` (not in `used`) whose first deal gives `seat` the `card`, by
    dealing it with the engine as `play_match` will; `start` itself if none is found."""
    for seed in range(start, start + SEED_SEARCH):
        if seed in used:
            continue
        state = game.start(players)
        dealt = game.apply(state, CHANCE, game.sample_chance(state, random.Random(seed)))
        if card in game.information_state(dealt, seat).hand:
            return seed
    return start


@dataclass
class _Attempt:
    """One attempt of one round's bets: what each seat holds and may bet, the bot's bet, the plan."""

    hands: dict[int, tuple[str, ...]] = field(default_factory=dict)
    legal: dict[int, tuple[Action, ...]] = field(default_factory=dict)
    bot_bet: str | None = None
    bot_done: bool = False
    plan: dict[int, str] | None = None
    planned: bool = False


class Steer:
    """The bets of one game's opponents, steered toward `missing` (a live view of the situations
    the bot has not been asked yet). One per game; the bot's seat reports through `bot_*`."""

    def __init__(self, game: Game, bot_seats: set[int], opponent_seats: set[int], missing: Any) -> None:
        self.game = game
        self.bot_seats = bot_seats
        self.opponent_seats = opponent_seats
        self._missing = missing
        self._attempts: dict[tuple[int, int, int], _Attempt] = {}
        self._changed = threading.Condition()
        self.steered = 0
        """Attempts whose bets were steered in this game."""
        self.bot_failed = False
        """The bot's seat failed a bet (it forfeits): no opponent waits for it again."""

    @staticmethod
    def _key(info: Any) -> tuple[int, int, int]:
        return (info.round, info.redeals, info.attempt)

    def bot_asked(self, turn: Turn, info: Any) -> None:
        if turn.kind is DecisionKind.BET:
            with self._changed:
                self._attempts.setdefault(self._key(info), _Attempt()).hands[turn.seat] = tuple(info.hand)

    def bot_answered(self, turn: Turn, info: Any, action: Action | None) -> None:
        """The bot's bet (None: it failed, so nobody waits for it)."""
        if turn.kind is not DecisionKind.BET:
            return
        with self._changed:
            attempt = self._attempts.setdefault(self._key(info), _Attempt())
            attempt.bot_bet = action if isinstance(action, str) else None
            attempt.bot_done = True
            self.bot_failed = self.bot_failed or action is None
            self._changed.notify_all()

    def opponent_bet(self, turn: Turn, info: Any, legal: tuple[Action, ...]) -> Action | None:
        """This opponent's steered bet, or None to bet as it would (no plan, or the bot too slow)."""
        wait = UNTIMED_WAIT if turn.decision_time is None else WAIT_SHARE * turn.decision_time
        if self.bot_failed:
            return None
        with self._changed:
            attempt = self._attempts.setdefault(self._key(info), _Attempt())
            attempt.hands[turn.seat], attempt.legal[turn.seat] = tuple(info.hand), legal
            self._changed.notify_all()
            ready = self._changed.wait_for(
                lambda: attempt.bot_done and self.opponent_seats <= set(attempt.legal), timeout=wait
            )
            if not ready or attempt.bot_bet is None:
                return None
            if not attempt.planned:
                attempt.planned = True
                attempt.plan = self._plan(info, attempt)
                self.steered += attempt.plan is not None
            return None if attempt.plan is None else attempt.plan.get(turn.seat)

    def _plan(self, info: Any, attempt: _Attempt) -> dict[int, str] | None:
        """Opponents' bets that bring about a missing situation: a re-bet while another attempt is
        left, else the Interrobang question to the bot. None when their hands cannot."""
        missing = set(self._missing)
        (bot,) = self.bot_seats
        seats = sorted(self.opponent_seats)
        if "re-bet" in missing and info.attempt + 1 < oh7.MAX_ATTEMPTS:
            goal = self._sums_to_seven
        elif "reveal" in missing and "?" in attempt.hands.get(bot, ()):
            goal = self._asks_bot_to_reveal
        else:
            return None
        options = [attempt.legal[seat] for seat in seats]
        for tried, bets in enumerate(itertools.product(*options)):
            if tried >= MAX_COMBINATIONS:
                break
            cards = [""] * info.num_players
            cards[bot] = str(attempt.bot_bet)
            for seat, bet in zip(seats, bets, strict=True):
                cards[seat] = str(bet)
            if goal(cards, attempt.hands, bot):
                return dict(zip(seats, (str(bet) for bet in bets), strict=True))
        return None

    @staticmethod
    def _sums_to_seven(cards: list[str], hands: dict[int, tuple[str, ...]], bot: int) -> bool:
        return sum(oh7.VALUE[card] for card in cards) == oh7.FORBIDDEN_TOTAL

    @staticmethod
    def _asks_bot_to_reveal(cards: list[str], hands: dict[int, tuple[str, ...]], bot: int) -> bool:
        """The engine's own rule (oh7._choose_leader): the bets stand, the bot is the first tied
        top bettor holding `?`, and it does not already win the tie by suit."""
        if sum(oh7.VALUE[card] for card in cards) == oh7.FORBIDDEN_TOTAL:
            return False
        if all(oh7.SUIT[card] == "*" for card in cards):
            return False
        tied, winner = oh7._top_bettors(cards)
        holder = next((seat for seat in tied if "?" in hands.get(seat, ())), None)
        return holder == bot and winner != bot


class SteeredOpponent:
    """An opponent of the check whose bets follow a `Steer` plan, else its own player's."""

    concurrent = True
    """Asked in parallel with the bot, so it can wait for the bot's bet of the same attempt."""

    def __init__(self, player: Any, steer: Steer) -> None:
        self._player = player
        self._steer = steer
        self.name = player.name

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        return self._player.decide(info, legal)  # type: ignore[no-any-return]

    def decide_turn(self, turn: Turn, info: Any, legal: tuple[Action, ...]) -> Action:
        if turn.kind is DecisionKind.BET and turn.seat in self._steer.opponent_seats:
            steered = self._steer.opponent_bet(turn, info, legal)
            if steered is not None and steered in legal:
                return steered
        inner = getattr(self._player, "decide_turn", None)
        return inner(turn, info, legal) if inner else self._player.decide(info, legal)  # type: ignore[no-any-return]
