"""`septet check`: a conformance report for one bot, before it meets anyone else.

The bot plays seeded games of each game id it declares, at the smallest and the largest table,
with the platform's time control. By default it fills one seat of each table (a different seat
each game) and the built-in greedy player fills the others, so a bot that thinks for its whole
decision time (the montecarlo example: 0.2 s a decision) is checked in under a minute; with
`all_seats` it fills every seat and answers as many decisions as possible. The games go on until
each game's edge situations (Oh 7? re-bets and the Interrobang question, the Dummy's face-up
cards, Oh Hell!'s restricted dealer bid, 7Up7Down's blind one-card bids, Black Sevens' multi-card
sets) were put to the bot at least once, or a cap is reached; a time budget, when given, starts no
game once it is spent, and the report says what was not reached. Every forfeit of the bot
(illegal answer, error, timeout) fails the check; the report lists them with the game and seed to
reproduce them.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.engine.games.base import Action, DecisionKind, Game
from referee.engine.match import MatchResult, TimeControl, Turn, new_match_id, play_match
from referee.tools.lineup import Lineup

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
        if len(legal) == 1:
            self._report.forced += 1  # forced decisions are asked too, as on the platform
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
    cut_short: bool = False
    """The time budget ran out before every planned game of this game id was played."""

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
            "cut_short": self.cut_short,
            "forfeits": dict(self.counts()),
            "latency_ms": {
                q: round(self.latency_ms(v), 3) for q, v in (("p50", 0.5), ("p99", 0.99), ("max", 1.0))
            },
            "situations_seen": sorted(self.seen),
            "situations_missing": sorted(self.missing),
            "failures": [failure.__dict__ for failure in self.failures[:20]],
        }


BOT, OPPONENT = 0, 1
"""Indexes in the check's lineup: the checked bot, then the player of the other seats."""


def table_sizes(game: Game) -> tuple[int, ...]:
    """The smallest and the largest table of `game` (one size when they are the same)."""
    return tuple(dict.fromkeys((game.players.start, game.players.stop - 1)))


def bot_seating(players: int, game_number: int, *, all_seats: bool) -> tuple[int, ...]:
    """Who sits where in a check's game: the bot everywhere, or in one seat that moves each game
    (so it is dealer, first and last in turn) with the opponent in the others."""
    if all_seats:
        return (BOT,) * players
    return tuple(BOT if seat == game_number % players else OPPONENT for seat in range(players))


@dataclass
class CheckPlan:
    """What a check plays: seeds per table size, where the bot sits, the time control and budget."""

    games: int
    seed: int
    time_control: TimeControl
    all_seats: bool = False
    deadline: float | None = None
    """No game starts once `time.monotonic()` reaches it (None: no limit)."""

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline


def check_games(
    lineup: Lineup,
    games: Sequence[Game],
    plan: CheckPlan,
    on_game: Callable[[str, MatchResult], None] | None = None,
) -> list[GameReport]:
    """Checks each game id in two rounds: first the planned games of every one (so a slow bot
    has every game it declares checked before the budget runs out), then extra games, up to
    EXTRA_GAMES_FACTOR times the planned ones, while a game's edge situations are still unseen."""
    reports = [GameReport(game.id, table_sizes(game)) for game in games]
    for extra in (False, True):
        for game, report in zip(games, reports, strict=True):
            lineup.game = game
            for players in report.player_counts:
                _play_tables(lineup, game, report, players, plan, extra=extra, on_game=on_game)
    return reports


def _play_tables(
    lineup: Lineup,
    game: Game,
    report: GameReport,
    players: int,
    plan: CheckPlan,
    *,
    extra: bool,
    on_game: Callable[[str, MatchResult], None] | None,
) -> None:
    """The planned games at one table size, or (`extra`) the further ones while a situation is
    unseen; seeds `plan.seed + k` for game number k, so a report's seed replays the game."""
    numbers = range(plan.games, plan.games * EXTRA_GAMES_FACTOR) if extra else range(plan.games)
    for k in numbers:
        if extra and not report.missing:
            return
        if plan.out_of_time():
            report.cut_short = report.cut_short or not extra or bool(report.missing)
            return
        table_seed = plan.seed + k
        seating = bot_seating(players, k, all_seats=plan.all_seats)
        made = lineup.players(seating, table_seed)
        seats = [
            _Recording(player, report, game) if seating[seat] == BOT else player
            for seat, player in enumerate(made)
        ]
        outcome = play_match(
            game,
            seats,
            seed=table_seed,
            time_control=plan.time_control,
            match_id=new_match_id(),  # random: a bot learns nothing of the seed from it
        )
        report.games += 1
        report.decisions = len(report.latencies)  # the bot's own decisions, forced ones too
        report.aborted += outcome.result.aborted
        for forfeit in (f for f in outcome.forfeits if seating[f.seat] == BOT):
            report.failures.append(Failure(game.id, players, table_seed, str(forfeit.status), forfeit.reason))
        if on_game is not None:
            on_game(game.id, outcome)


def passed(reports: Iterable[GameReport]) -> bool:
    return all(not report.failures for report in reports)
