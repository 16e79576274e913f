"""`septet compare A B`: is bot B better than bot A? Duplicate sets, paired statistics, a sequential test.

Each duplicate set plays one seed once per cyclic rotation of the seating (RULES.md §0): A, B and,
at tables of three or more, a field of opponents (default greedy) each sit in every seat with
the same cards. With a field, the set also plays every rotation of the seating with A and B
swapped: cyclic rotations alone would always seat B right after A, so one of them would always
play right after the field's bot and the other right before it, a difference of position that
no number of sets cancels. Luck of the deal then cancels within a set, so a set is the unit of the
statistics: its outcome is the mean rank of A minus the mean rank of B over its games (positive:
B ranked better) and the mean score of B minus that of A. The report gives both means with 95%
Student-t intervals over the sets (`referee.tools.stats`).

Sets are played until a sequential probability ratio test on the per-set rank outcome is decided
(Wald's SPRT on a normal model whose variance is estimated from the sets so far, the usual
"generalized" SPRT of engine testing). Two one-sided tests run side by side, each with type I
error alpha/2 and type II error beta:

- H0: the mean rank outcome is 0 (no difference), against H1+: it is +effect (B better by
  `effect` places per game), and against H1-: it is -effect (A better).
- H1+ accepted: "B is better"; H1- accepted: "A is better"; both H0s accepted: "no difference
  of `effect` or more". The chance of calling a difference where there is none is then about
  alpha at most, and of missing a true difference of `effect` about beta at most ("about": Wald's
  bounds and the estimated variance are approximations; 40 comparisons of two equally random
  bots called a difference twice at alpha 0.05).

The set cap (`--games`) ends an undecided comparison as "inconclusive", with the intervals as
they stand.
"""

from __future__ import annotations

import argparse
import json
import math
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table as RichTable

from referee.engine.games import get_game
from referee.engine.games.base import Game, GameError
from referee.engine.match import MatchResult, TimeControl, new_match_id, play_match
from referee.tools import local_runs
from referee.tools.lineup import Lineup, parse_bot
from referee.tools.series import Table, schedule, seats_for
from referee.tools.stats import MeanInterval, mean_interval

A, B = 0, 1
"""Indexes of the two compared bots in a comparison's bot list; the field follows them."""

MIN_SETS = 8
"""Sets played before the test may stop: the variance estimate needs a few samples."""
MIN_VARIANCE = 1e-6
"""Floor of the estimated variance, so identical outcomes (variance 0) give a finite ratio."""


class Verdict(StrEnum):
    """What the comparison concluded."""

    B_BETTER = "B is better"
    A_BETTER = "A is better"
    NO_DIFFERENCE = "no difference"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class TestSettings:
    """The sequential test: error rates, the effect H1 states, and when it may stop."""

    __test__ = False  # not a pytest class, whatever its name

    alpha: float = 0.05
    beta: float = 0.05
    effect: float = 0.2
    """H1's mean rank difference per game, in places (0.2: one place every five games)."""
    min_sets: int = MIN_SETS

    def __post_init__(self) -> None:
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise GameError(f"--alpha and --beta must be between 0 and 1, not {self.alpha} and {self.beta}")
        if self.effect <= 0:
            raise GameError(f"--effect must be a positive number of places, not {self.effect}")

    @property
    def upper(self) -> float:
        """Accept H1 when a log-likelihood ratio reaches this (each direction gets alpha/2)."""
        return math.log((1 - self.beta) / (self.alpha / 2))

    @property
    def lower(self) -> float:
        """Accept H0 when a log-likelihood ratio falls to this."""
        return math.log(self.beta / (1 - self.alpha / 2))

    def hypotheses(self) -> str:
        return (
            f"H0: mean rank difference 0; H1: B (or A) better by {self.effect:g} places per game; "
            f"alpha {self.alpha:g} (false difference), beta {self.beta:g} (missed difference)"
        )


def log_likelihood_ratio(outcomes: Sequence[float], effect: float) -> float:
    """log L(mean = effect) / L(mean = 0) of `outcomes` under a normal model, variance estimated.

    With variance s², the ratio is (effect / s²) * (sum - n * effect / 2).
    """
    n = len(outcomes)
    if n < 2:
        return 0.0
    mean = sum(outcomes) / n
    variance = max(sum((x - mean) ** 2 for x in outcomes) / (n - 1), MIN_VARIANCE)
    return effect / variance * (sum(outcomes) - n * effect / 2)


@dataclass(frozen=True)
class TestState:
    """The two one-sided tests after some sets, and what they decided (None: go on)."""

    __test__ = False

    llr_b_better: float
    llr_a_better: float
    verdict: Verdict | None


def sequential_test(outcomes: Sequence[float], settings: TestSettings) -> TestState:
    """Both one-sided SPRTs on the per-set rank outcomes (see the module doc)."""
    b_better = log_likelihood_ratio(outcomes, settings.effect)
    a_better = log_likelihood_ratio([-x for x in outcomes], settings.effect)
    verdict: Verdict | None = None
    if len(outcomes) >= settings.min_sets:
        if b_better >= settings.upper:
            verdict = Verdict.B_BETTER
        elif a_better >= settings.upper:
            verdict = Verdict.A_BETTER
        elif b_better <= settings.lower and a_better <= settings.lower:
            verdict = Verdict.NO_DIFFERENCE
    return TestState(b_better, a_better, verdict)


@dataclass
class SetOutcome:
    """One duplicate set: the ranks and scores A and B got in its games."""

    ranks: tuple[list[int], list[int]] = field(default_factory=lambda: ([], []))
    scores: tuple[list[int], list[int]] = field(default_factory=lambda: ([], []))

    @property
    def complete(self) -> bool:
        return bool(self.ranks[A]) and bool(self.ranks[B])

    def rank_outcome(self) -> float:
        """Mean rank of A minus mean rank of B: positive when B ranked better."""
        return _mean(self.ranks[A]) - _mean(self.ranks[B])

    def score_outcome(self) -> float:
        """Mean score of B minus mean score of A."""
        return _mean(self.scores[B]) - _mean(self.scores[A])


def _mean(values: Sequence[int]) -> float:
    return sum(values) / len(values)


@dataclass
class Comparison:
    """A comparison in progress or finished: its sets, forfeits, and the test's state."""

    game: Game
    names: tuple[str, str]
    field_names: tuple[str, ...]
    num_seats: int
    seed: int
    settings: TestSettings
    max_sets: int
    sets: dict[int, SetOutcome] = field(default_factory=dict)
    games: int = 0
    aborted: int = 0
    forfeits: tuple[dict[str, int], dict[str, int]] = field(default_factory=lambda: ({}, {}))
    test: TestState = field(default_factory=lambda: TestState(0.0, 0.0, None))

    def record(self, table: Table, outcome: MatchResult) -> None:
        """Adds one game; once its set is complete the sequential test is updated."""
        self.games += 1
        outcome_set = self.sets.setdefault(table.unit, SetOutcome())
        ranks = outcome.result.ranks
        for seat, bot in enumerate(table.seating):
            if bot not in (A, B):
                continue
            if ranks is not None:
                outcome_set.ranks[bot].append(ranks[seat])
                outcome_set.scores[bot].append(outcome.result.scores[seat])
        for forfeit in outcome.forfeits:
            bot = table.seating[forfeit.seat]
            if bot in (A, B):
                counts = self.forfeits[bot]
                counts[str(forfeit.status)] = counts.get(str(forfeit.status), 0) + 1
        if ranks is None:
            self.aborted += 1

    def close_set(self) -> None:
        """Runs the sequential test over the complete sets (call after a set's last game)."""
        self.test = sequential_test(self.rank_outcomes(), self.settings)

    def rank_outcomes(self) -> list[float]:
        return [s.rank_outcome() for s in self.sets.values() if s.complete]

    def score_outcomes(self) -> list[float]:
        return [s.score_outcome() for s in self.sets.values() if s.complete]

    @property
    def verdict(self) -> Verdict:
        return self.test.verdict or Verdict.INCONCLUSIVE

    def rank_interval(self) -> MeanInterval:
        """Mean rank of A minus mean rank of B per game, with its 95% interval over the sets."""
        return mean_interval(self.rank_outcomes())

    def score_interval(self) -> MeanInterval:
        """Mean score of B minus mean score of A per game, with its 95% interval over the sets."""
        return mean_interval(self.score_outcomes())

    def verdict_line(self) -> str:
        """One sentence a statistician would sign: the verdict, its test and error rates."""
        sets = len(self.rank_outcomes())
        a, b = self.names
        settings = self.settings
        rates = f"(SPRT after {sets} duplicate sets; alpha {settings.alpha:g}, beta {settings.beta:g})"
        verdict = self.verdict
        if verdict is Verdict.B_BETTER:
            return f"B ({b}) is better than A ({a}) {rates}"
        if verdict is Verdict.A_BETTER:
            return f"A ({a}) is better than B ({b}) {rates}"
        if verdict is Verdict.NO_DIFFERENCE:
            return f"no difference of {settings.effect:g} places or more between A ({a}) and B ({b}) {rates}"
        return (
            f"inconclusive after {sets} duplicate sets (the cap): neither a difference of "
            f"{settings.effect:g} places nor its absence is established at alpha {settings.alpha:g}, "
            f"beta {settings.beta:g}; play more sets (--games)"
        )

    def to_json(self) -> dict[str, Any]:
        ranks, scores = self.rank_interval(), self.score_interval()
        return {
            "game": self.game.id,
            "players": self.num_seats,
            "a": self.names[A],
            "b": self.names[B],
            "field": list(self.field_names),
            "seed": self.seed,
            "sets": len(self.rank_outcomes()),
            "max_sets": self.max_sets,
            "games": self.games,
            "aborted": self.aborted,
            "rank_difference": _interval_json(ranks),
            "score_difference": _interval_json(scores),
            "higher_score_is_better": self.game.higher_is_better,
            "test": {
                "alpha": self.settings.alpha,
                "beta": self.settings.beta,
                "effect": self.settings.effect,
                "hypotheses": self.settings.hypotheses(),
                "llr_b_better": round(self.test.llr_b_better, 4),
                "llr_a_better": round(self.test.llr_a_better, 4),
                "bounds": [round(self.settings.lower, 4), round(self.settings.upper, 4)],
            },
            "verdict": str(self.verdict),
            "verdict_line": self.verdict_line(),
            "forfeits": {"a": self.forfeits[A], "b": self.forfeits[B]},
        }


def _interval_json(interval: MeanInterval) -> dict[str, Any]:
    finite = interval.n > 1 and math.isfinite(interval.low)
    return {
        "mean": None if interval.n == 0 else interval.mean,
        "ci95": [interval.low, interval.high] if finite else None,
    }


def comparison_tables(
    game: Game, *, field_size: int, players: int | None, sets: int, seed: int
) -> tuple[int, list[Table]]:
    """The table size and the duplicate schedule: bot 0 is A, 1 is B, 2.. the field's seats."""
    if sets < 1:
        raise GameError(f"--games must be at least 1 duplicate set, not {sets}")
    num_seats = seats_for(game, 2, players)
    if num_seats > 2 and field_size < 1:
        raise GameError(f"a {num_seats}-player table needs a field (--field BOT ...)")
    tables = schedule(num_seats, num_seats, sets, seed, duplicate=True)
    if num_seats == 2:
        return num_seats, tables
    # With a field, cyclic rotations alone always seat B right after A (and A right after the
    # field): swapping A and B in a mirrored copy gives both the same neighbours.
    swap = {A: B, B: A}
    tables += [
        Table(t.seed, tuple(swap.get(bot, bot) for bot in t.seating), num_seats + t.rotation, t.unit)
        for t in tables
    ]
    return num_seats, sorted(tables, key=lambda table: (table.unit, table.rotation))


def field_for(num_seats: int, field_words: Sequence[str]) -> list[str]:
    """The bots of the field's seats (2..num_seats-1), cycling through the given ones."""
    return [field_words[index % len(field_words)] for index in range(num_seats - 2)] if field_words else []


def run_comparison(
    comparison: Comparison, tables: Iterable[Table], play: Callable[[Table], MatchResult]
) -> Iterator[Table]:
    """Plays `tables` in order, recording each; stops after the set that decides the test.

    Yields every table once it is recorded (for a progress bar).
    """
    by_unit: dict[int, int] = {}
    tables = list(tables)
    for table in tables:
        by_unit[table.unit] = by_unit.get(table.unit, 0) + 1
    for table in tables:
        comparison.record(table, play(table))
        by_unit[table.unit] -= 1
        yield table
        if by_unit[table.unit] == 0:
            comparison.close_set()
            if comparison.test.verdict is not None:
                return


# The command line: `septet compare A B --game GAME ...` (wired into referee.tools.cli)

COMPARE_EXAMPLES = """\
examples:
  septet compare greedy bots/examples/montecarlo --game oh7-duel
  septet compare bots/v1 bots/v2 --game oh-hell --players 4 --field greedy random --games 300
  septet compare random greedy --game black-sevens --json
  septet compare openspiel-ismcts:0.05s bots/examples/montecarlo --game oh-hell --decision-time 0.125
    (OpenSpiel's ISMCTS, 0.05 s a decision; needs the optional extra openspiel: docs/openspiel.md)
"""


def add_parser(commands: Any) -> None:
    """Adds `compare` to the `septet` subcommands."""
    parser = commands.add_parser(
        "compare",
        help="is bot B better than bot A? duplicate sets, confidence intervals, a sequential test",
        description="Play duplicate sets of A, B and a field of opponents (each seed in every seat "
        "rotation; with a field, A and B swapped too); report B's mean rank and score difference to A "
        "per game with 95% intervals over the sets, and stop as soon as a sequential test (SPRT, "
        "stated error rates) decides.",
        epilog=COMPARE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "a",
        metavar="A",
        help="the baseline bot: built-in (random, greedy, or OpenSpiel's openspiel-ismcts[:BUDGET], "
        "-mcts, -random), a bot folder (one process per seat), or an address (your own bot, which then "
        "serves every seat it is given)",
    )
    parser.add_argument("b", metavar="B", help="the candidate bot")
    parser.add_argument("--game", required=True, metavar="GAME", help="game id (see 'septet rules')")
    parser.add_argument(
        "--games", type=int, default=200, metavar="K", help="at most K duplicate sets (default: 200)"
    )
    parser.add_argument(
        "--players", type=int, metavar="N", help="seats at the table (default: the game's smallest)"
    )
    parser.add_argument(
        "--field",
        nargs="+",
        default=["greedy"],
        metavar="BOT",
        help="bots for the other seats (default: greedy)",
    )
    parser.add_argument("--seed", type=int, metavar="S", help="first seed; set k uses S+k (default: random)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="game option")
    parser.add_argument("--alpha", type=float, default=0.05, help="false-difference rate (default: 0.05)")
    parser.add_argument("--beta", type=float, default=0.05, help="missed-difference rate (default: 0.05)")
    parser.add_argument(
        "--effect", type=float, default=0.2, help="H1's rank difference, places per game (default: 0.2)"
    )
    parser.add_argument("--decision-time", type=float, default=1.0, metavar="SECONDS")
    parser.add_argument("--bank", type=float, default=10.0, metavar="SECONDS")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    local_runs.add_arguments(parser)


def run(args: argparse.Namespace, out: Console, options: dict[str, Any]) -> int:
    """`septet compare`: plays the sets with a progress bar, then prints the report."""
    game = get_game(args.game)
    options = game.check_options(options)
    settings = TestSettings(args.alpha, args.beta, args.effect)
    specs = [parse_bot(args.a), parse_bot(args.b)]
    seed = args.seed if args.seed is not None else secrets.randbelow(1_000_000)
    num_seats, tables = comparison_tables(
        game, field_size=len(args.field), players=args.players, sets=args.games, seed=seed
    )
    field_specs = [parse_bot(word) for word in field_for(num_seats, args.field)]
    time_control = TimeControl(args.decision_time, args.bank)
    err = Console(stderr=True)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("games (at most; stops when decided)"),
        console=err,
        transient=True,
        disable=args.json or not err.is_terminal,
    )
    folders = any(spec.kind == "folder" for spec in [*specs, *field_specs])
    run_with = local_runs.local_run(args, has_folders=folders)
    lineup = Lineup([*specs, *field_specs], game, sandbox=run_with.sandbox, env=run_with.env)
    with lineup, progress:
        names = bot_names(lineup)
        field_names = tuple(spec.name for spec in lineup.specs[B + 1 :])
        comparison = Comparison(game, names, field_names, num_seats, seed, settings, args.games)

        def play(table: Table) -> MatchResult:
            players = lineup.players(table.seating, table.seed)
            return play_match(
                game,
                players,
                seed=table.seed,
                options=options,
                time_control=time_control,
                match_id=new_match_id(),  # random: a bot learns nothing of the seed from it
            )

        task = progress.add_task(f"{game.id}: {names[B]} vs {names[A]}", total=len(tables))
        for _ in run_comparison(comparison, tables, play):
            progress.advance(task)
    if args.json:
        print(json.dumps(comparison.to_json(), indent=2))
    else:
        print_report(comparison, out)
    return 0


def bot_names(lineup: Lineup) -> tuple[str, str]:
    """A's and B's names (a bot given by address as it names itself); what was typed when the
    two are different bots of one name."""
    a, b = lineup.specs[A], lineup.specs[B]
    if a.name == b.name and a.text != b.text:
        return a.text, b.text
    return a.name, b.name


def print_report(comparison: Comparison, out: Console) -> None:
    """The human report: what was played, both differences with intervals, the verdict."""
    game, settings = comparison.game, comparison.settings
    a, b = comparison.names
    field_text = f", field: {', '.join(comparison.field_names)}" if comparison.field_names else ""
    out.print(
        f"[bold]{game.title}[/] ({game.id}), {comparison.num_seats} players{field_text}; "
        f"{len(comparison.rank_outcomes())} duplicate sets ({comparison.games} games) "
        f"from seed {comparison.seed}",
    )
    out.print(f"A = {a}, B = {b}", markup=False)
    out.print(differences_table(comparison))
    out.print(f"  test: {settings.hypotheses()}", markup=False)
    for bot, forfeits in zip((a, b), comparison.forfeits, strict=True):
        if forfeits:
            out.print(
                f"  forfeits of {bot}: {', '.join(f'{n} {s}' for s, n in forfeits.items())}", markup=False
            )
    if comparison.aborted:
        out.print(f"  {comparison.aborted} games aborted by a safety cap (not ranked)", markup=False)
    # One line, never cut (a script may look for it); a terminal folds it if it must.
    out.print(f"[bold]{comparison.verdict_line()}[/]", soft_wrap=True)


def differences_table(comparison: Comparison) -> RichTable:
    """Both differences per game with their 95% intervals, in 80 columns: the numbers never
    wrap, the explanation folds."""
    better = "higher" if comparison.game.higher_is_better else "lower"
    table = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    table.add_column("per game", no_wrap=True)
    table.add_column("mean", justify="right", no_wrap=True)
    table.add_column("95% CI", justify="right", no_wrap=True)
    table.add_column("meaning", overflow="fold")
    for label, interval, note in (
        ("rank A-B", comparison.rank_interval(), "positive: B ranks better"),
        ("score B-A", comparison.score_interval(), f"B's mean score minus A's ({better} is better)"),
    ):
        ci = f"[{interval.low:+.3f}, {interval.high:+.3f}]" if interval.n > 1 else ""
        table.add_row(label, f"{interval.mean:+.3f}", ci, note)
    return table
