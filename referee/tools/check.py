"""`septet check`: a conformance report for one bot, before it meets anyone else.

The bot plays seeded games of each game id it declares, at the smallest and the largest table,
with the platform's time control. By default it fills one seat of each table (a different seat
each game) and the built-in greedy player fills the others, so a bot that thinks for its whole
decision time (the montecarlo example: 0.2 s a decision) is checked in under a minute; with
`all_seats` it fills every seat and answers as many decisions as possible. The games go on until
each game's edge situations (Oh 7? re-bets and the Interrobang question, the Dummy's face-up
cards, Oh Hell!'s restricted dealer bid, 7Up7Down's blind one-card bids, Black Sevens' multi-card
sets) were put to the bot at least once, or a cap is reached. The opponents' Oh 7? bets are
steered toward a re-bet and the Interrobang question while those are unseen, which greedy tables
rarely line up, and the extra games are dealt so the bot holds the `?` (referee.tools.steering).
A time budget, when given, starts no game once it is spent, and the verdict says what was not
tested (`verdict`): never a bare PASS over it. Every forfeit of the bot (illegal answer, error,
timeout) fails the check; the report lists them with the game and seed to reproduce them.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.engine.games.base import Action, DecisionKind, Game
from referee.engine.match import MatchResult, TimeControl, Turn, new_match_id, play_match
from referee.tools.lineup import Lineup
from referee.tools.steering import Steer, SteeredOpponent, seed_dealing, wants_steering

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
    """Wraps a seat's player: times each call and notes the situations it was asked in (and, in
    a steered game, tells the `Steer` what the bot held and bet)."""

    def __init__(self, player: Any, report: GameReport, game: Game, steer: Steer | None = None) -> None:
        self._player = player
        self._report = report
        self._game = game
        self._steer = steer
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
        if self._steer is not None:
            self._steer.bot_asked(turn, info)
        started = time.perf_counter()
        action: Action | None = None
        try:
            action = inner(turn, info, legal) if inner else self._player.decide(info, legal)
            return action
        finally:
            self._report.latencies.append(time.perf_counter() - started)
            if self._steer is not None:
                self._steer.bot_answered(turn, info, action if action in legal else None)


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

    def missing_view(self) -> _Missing:
        """The situations still unseen, read afresh each time (steering follows the game)."""
        return _Missing(self)

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


class _Missing:
    """A live `GameReport.missing`: iterating it reads the report as it is now."""

    def __init__(self, report: GameReport) -> None:
        self._report = report

    def __iter__(self) -> Iterator[str]:
        return iter(self._report.missing)


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
    """Checks each game id in three rounds, so that a slow bot has every game it declares played
    before the budget runs out: first one game of every game id (at its smallest table), then the
    rest of the planned games of every one, then extra games, up to EXTRA_GAMES_FACTOR times the
    planned ones, while a game's edge situations are still unseen."""
    reports = [GameReport(game.id, table_sizes(game)) for game in games]
    for stage in ("first", "planned", "extra"):
        for game, report in zip(games, reports, strict=True):
            lineup.game = game
            for table, players in enumerate(report.player_counts):
                numbers = _game_numbers(stage, plan.games, smallest_table=table == 0)
                if numbers:
                    extra = stage == "extra"
                    _play_tables(lineup, game, report, players, plan, numbers, extra=extra, on_game=on_game)
    return reports


def _game_numbers(stage: str, planned: int, *, smallest_table: bool) -> range:
    """The game numbers k (seed `plan.seed + k`) a stage plays at one table size."""
    if stage == "first":
        return range(1) if smallest_table else range(0)
    if stage == "planned":
        return range(1 if smallest_table else 0, planned)
    return range(planned, planned * EXTRA_GAMES_FACTOR)


def _play_tables(
    lineup: Lineup,
    game: Game,
    report: GameReport,
    players: int,
    plan: CheckPlan,
    numbers: range,
    *,
    extra: bool,
    on_game: Callable[[str, MatchResult], None] | None,
) -> None:
    """Games `numbers` at one table size: planned ones, or (`extra`) further ones while a situation
    is unseen; seeds `plan.seed + k` for game number k, so a report's seed replays the game."""
    used = {plan.seed + k for k in range(plan.games)}
    for k in numbers:
        if extra and not report.missing:
            return
        if plan.out_of_time():
            report.cut_short = report.cut_short or not extra or bool(report.missing)
            return
        seating = bot_seating(players, k, all_seats=plan.all_seats)
        steer = None
        table_seed = plan.seed + k
        if not plan.all_seats and wants_steering(game, report.missing):
            bot_seats = {seat for seat, who in enumerate(seating) if who == BOT}
            opponents = set(range(players)) - bot_seats
            steer = Steer(game, bot_seats, opponents, report.missing_view())
            if extra and "re-bet" not in report.missing:  # the `?` question needs the bot's `?`
                table_seed = seed_dealing(game, players, min(bot_seats), "?", table_seed, used)
        used.add(table_seed)
        made = lineup.players(seating, table_seed)
        seats = [
            _Recording(player, report, game, steer)
            if seating[seat] == BOT
            else (SteeredOpponent(player, steer) if steer is not None else player)
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


def untested(reports: Iterable[GameReport]) -> str:
    """The situations no game put to the bot, by game id ("oh7-advanced: reveal; oh7: re-bet"),
    or "" when every one was asked."""
    return "; ".join(
        f"{report.game}: {', '.join(sorted(report.missing))}" for report in reports if report.missing
    )


def verdict(reports: Sequence[GameReport], *, games: int) -> str:
    """The check's last line, plain text: FAIL with the forfeits, PASS, or a PASS that says what
    it did not test and how to test it (never a bare PASS over situations the bot was not asked)."""
    failures = sum(len(report.failures) for report in reports)
    if failures:
        return f"FAIL: {failures} forfeits"
    missing = untested(reports)
    if not missing:
        return "PASS"
    return (
        f"PASS for what was asked; not tested: {missing}; "
        f"run with --games {games * EXTRA_GAMES_FACTOR * 2} or --budget 0 to reach them"
    )
