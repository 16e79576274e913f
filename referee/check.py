"""`septet check`: a conformance report for one bot, before it meets anyone else.

The bot fills every seat of seeded games of each game id it declares, at the smallest and the
largest table, so it answers as many decisions as possible. The games go on until each game's
edge situations (Oh 7? re-bets and the Interrobang question, the Dummy's face-up cards,
Oh Hell!'s restricted dealer bid, 7Up7Down's blind one-card bids, Black Sevens' multi-card sets)
were put to the bot at least once, or a cap is reached. Every forfeit (illegal answer, error,
timeout) fails the check; the report lists them with the game and seed to reproduce them.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from referee.games.base import Action, DecisionKind, Game
from referee.lineup import Lineup
from referee.match import MatchResult, TimeControl, Turn, new_match_id, play_match

EXTRA_GAMES_FACTOR = 5
"""Up to this many times the requested games are played while a situation is still unseen."""


def situations(game: Game, kind: DecisionKind, info: Any) -> set[str]:
    """The edge situations a decision exercises (by the information state the bot was sent)."""
    found = {str(kind)}
    if game.id.startswith("oh7"):
        if kind is DecisionKind.BET and getattr(info, "attempt", 0) > 0:
            found.add("re-bet")
        if getattr(info, "dummy_up", ()):
            found.add("dummy face-up cards")
    elif game.id == "oh-hell":
        if kind is DecisionKind.BID and info.seat == info.dealer:
            found.add("dealer's bid")
        if info.hand_size == 1:
            found.add("one-card hand")
    elif game.id == "seven-up-seven-down":
        if kind is DecisionKind.BID and not info.hand and info.visible_cards:
            found.add("blind one-card bid")
    elif game.id == "black-sevens":
        found.add("lead" if not info.plays else "beat or lay low")
        if info.set_size > 1:
            found.add("multi-card set")
    return found


EXPECTED: dict[str, set[str]] = {
    "oh7": {"bet", "play", "re-bet"},
    "oh7-advanced": {"bet", "play", "re-bet", "reveal"},
    "oh7-duel": {"bet", "play", "dummy face-up cards"},
    "oh-hell": {"bid", "play", "dealer's bid", "one-card hand"},
    "seven-up-seven-down": {"bid", "play", "blind one-card bid"},
    "black-sevens": {"play", "lead", "beat or lay low", "multi-card set"},
}
"""What each game's check waits to see asked."""


class _Recording:
    """Wraps a seat's player: times each call and notes the situations it was asked in."""

    def __init__(self, player: Any, report: GameReport, game: Game) -> None:
        self._player = player
        self._report = report
        self._game = game
        self.name = player.name
        self.concurrent = bool(getattr(player, "concurrent", False))

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        """Unused by the match runner, which always calls `decide_turn` here (it has the kind)."""
        return self._player.decide(info, legal)  # type: ignore[no-any-return]

    def decide_turn(self, turn: Turn, info: Any, legal: tuple[Action, ...]) -> Action:
        self._report.seen.update(situations(self._game, turn.kind, info))
        inner = getattr(self._player, "decide_turn", None)
        started = time.perf_counter()
        try:
            return inner(turn, info, legal) if inner else self._player.decide(info, legal)  # type: ignore[no-any-return]
        finally:
            self._report.latencies.append(time.perf_counter() - started)


@dataclass
class Failure:
    game: str
    players: int
    seed: int
    status: str
    reason: str


@dataclass
class GameReport:
    """One game id's part of the check."""

    game: str
    player_counts: tuple[int, ...]
    games: int = 0
    decisions: int = 0
    forced: int = 0
    aborted: int = 0
    latencies: list[float] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    failures: list[Failure] = field(default_factory=list)

    @property
    def missing(self) -> set[str]:
        return EXPECTED.get(self.game, set()) - self.seen

    def counts(self) -> Counter[str]:
        return Counter(failure.status for failure in self.failures)

    def latency_ms(self, quantile: float) -> float:
        if not self.latencies:
            return 0.0
        if quantile >= 1:
            return max(self.latencies) * 1000
        return (
            statistics.quantiles(self.latencies, n=100, method="inclusive")[round(quantile * 100) - 1] * 1000
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "players": list(self.player_counts),
            "games": self.games,
            "decisions": self.decisions,
            "forced": self.forced,
            "aborted": self.aborted,
            "forfeits": dict(self.counts()),
            "latency_ms": {
                q: round(self.latency_ms(v), 3) for q, v in (("p50", 0.5), ("p99", 0.99), ("max", 1.0))
            },
            "situations_seen": sorted(self.seen),
            "situations_missing": sorted(self.missing),
            "failures": [failure.__dict__ for failure in self.failures[:20]],
        }


def check_game(
    lineup: Lineup,
    game: Game,
    *,
    games: int,
    seed: int,
    time_control: TimeControl,
    on_game: Callable[[MatchResult], None] | None = None,
) -> GameReport:
    """Plays the bot in every seat at the smallest and largest table of `game`."""
    counts = tuple(dict.fromkeys((game.players.start, game.players.stop - 1)))
    report = GameReport(game.id, counts)
    for players in counts:
        budget = games * EXTRA_GAMES_FACTOR
        for k in range(budget):
            if k >= games and not report.missing:
                break
            table_seed = seed + k
            seats = [
                _Recording(player, report, game) for player in lineup.players((0,) * players, table_seed)
            ]
            outcome = play_match(
                game,
                seats,
                seed=table_seed,
                time_control=time_control,
                match_id=new_match_id(),  # random: a bot learns nothing of the seed from it
            )
            report.games += 1
            report.decisions += outcome.decisions
            report.forced += outcome.forced
            report.aborted += outcome.result.aborted
            for forfeit in outcome.forfeits:
                report.failures.append(
                    Failure(game.id, players, table_seed, str(forfeit.status), forfeit.reason)
                )
            if on_game is not None:
                on_game(outcome)
    return report


def passed(reports: Iterable[GameReport]) -> bool:
    return all(not report.failures for report in reports)
