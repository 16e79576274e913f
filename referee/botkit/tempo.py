"""Forced decisions answered in the time a chosen one takes, so a bot's tempo tells nothing.

The referee asks every decision, forced ones (a single legal action) too, so that the other
seats cannot tell a forced move from the gap before their own turn. A bot that answers a forced
decision at once and thinks over every other gives that back: the others see a searching bot's
quick answers and learn it held, say, a single card of the led suit. The SDK's server therefore
holds a forced answer until a delay drawn from the bot's own recent chosen decisions has passed
(`ForcedTempo`): a forced decision then takes what a chosen one of the same game and kind takes.

It costs the bot the time of a chosen decision per forced one (never more than `MAX_SHARE` of the
decision's time left) and nothing else: the answer is computed first. Nor may it cost the bot its
match: a seat has a budget for the whole match (`referee.engine.match.TimeControl.seat_budget`),
and a hold is cut so that the seat's average time per decision stays within that budget spread
over the most decisions a match asks (`MatchPace`); a bot that already thinks that long over its
chosen decisions is not padded. A bot author turns it off with `Bot(pad_forced=False)` (or
`pad_forced = False` on the class), e.g. for a bot that answers everything at once anyway.
"""

from __future__ import annotations

import random
import threading
from collections import OrderedDict, deque
from collections.abc import Hashable
from dataclasses import dataclass

HISTORY = 64
"""Chosen decisions remembered per (game, kind): the recent ones, as a bot's speed drifts with
the hand (fewer cards, shorter rollouts) over a match."""
MAX_SHARE = 0.5
"""A forced answer is never held past this share of the decision's time left (the bank is never
drawn on for it)."""
MAX_SECONDS = 5.0
"""The longest hold when the request says no decision time."""
SEAT_DECISIONS = 130
"""About the most decisions a match asks of one seat (docs/bots.md, Time controls): holds keep a
seat's average time per decision within its match budget over this many."""
MATCHES_KEPT = 64
"""Matches whose pace a server keeps at most (one whose EndMatch never came is dropped first)."""


@dataclass
class MatchPace:
    """One seat's time in one match, as the bot measures it: what its answers took so far."""

    budget: float
    """The seat's budget for the whole match, in seconds."""
    spent: float = 0.0
    decisions: int = 0

    def allowed_hold(self, elapsed: float) -> float:
        """The longest hold of the current decision (which took `elapsed` so far) that keeps the
        seat's average time per decision, this one included, within `budget / SEAT_DECISIONS`."""
        share = self.budget / SEAT_DECISIONS
        return max(0.0, (self.decisions + 1) * share - self.spent - elapsed)

    def record(self, seconds: float) -> None:
        self.spent += seconds
        self.decisions += 1


class MatchPaces:
    """The `MatchPace` of each (match id, seat) a server is playing, bounded in number."""

    def __init__(self) -> None:
        self._paces: OrderedDict[tuple[str, int], MatchPace] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, match_id: str, seat: int, budget: float) -> None:
        with self._lock:
            self._paces[match_id, seat] = MatchPace(budget)
            while len(self._paces) > MATCHES_KEPT:
                self._paces.popitem(last=False)

    def get(self, match_id: str, seat: int) -> MatchPace | None:
        with self._lock:
            return self._paces.get((match_id, seat))

    def end(self, match_id: str) -> None:
        with self._lock:
            for key in [key for key in self._paces if key[0] == match_id]:
                del self._paces[key]


class ForcedTempo:
    """The recent durations of a bot's chosen decisions, and the hold of a forced one drawn from
    them. Thread-safe: one server answers several seats' streams at once."""

    def __init__(self, *, history: int = HISTORY, rng: random.Random | None = None) -> None:
        self._history = history
        self._rng = rng or random.Random()
        self._chosen: dict[Hashable, deque[float]] = {}
        self._lock = threading.Lock()
        self.last_drawn: float | None = None
        """The total duration the last forced decision was padded to (None: none was padded)."""

    def chosen(self, key: Hashable, seconds: float) -> None:
        """Notes that a chosen decision of `key` (game, kind) took `seconds`, answer included."""
        with self._lock:
            self._chosen.setdefault(key, deque(maxlen=self._history)).append(seconds)

    def history(self, key: Hashable) -> tuple[float, ...]:
        """The chosen durations a forced decision of `key` draws from: those of the same key, else
        those of the same game (`key[0]` of a tuple key), else none."""
        with self._lock:
            same = self._chosen.get(key)
            if same:
                return tuple(same)
            if isinstance(key, tuple) and key:
                related = [
                    seconds
                    for other, durations in self._chosen.items()
                    if isinstance(other, tuple) and other[:1] == key[:1]
                    for seconds in durations
                ]
                return tuple(related)
            return ()

    def hold(self, key: Hashable, elapsed: float, time_left: float | None) -> float:
        """How much longer to hold a forced answer that took `elapsed` seconds so far: a duration
        drawn from `history(key)` minus `elapsed`, at most `MAX_SHARE` of `time_left` (the
        decision's time, None when unknown); 0 without history."""
        durations = self.history(key)
        if not durations:
            self.last_drawn = None
            return 0.0
        with self._lock:
            drawn = self._rng.choice(durations)
        limit = MAX_SECONDS if time_left is None or time_left <= 0 else MAX_SHARE * time_left
        self.last_drawn = min(drawn, limit)
        return max(0.0, self.last_drawn - elapsed)
