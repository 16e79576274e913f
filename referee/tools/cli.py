"""`septet`: the command line a bot author meets first.

Every failure a person can cause (unknown game, wrong player count, bad option, damaged replay)
ends in a one-line `septet: error: ...` and exit code 2 for usage, 1 for a failed verification;
never a traceback. The commands over the Arena add 3 for a server that cannot be reached or fails
inside (see arena_cli).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.metadata
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import webbrowser
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table as RichTable
from rich.text import Text

from referee import __version__
from referee.engine import build as engine_build
from referee.engine import replay
from referee.engine.games import all_games, get_game
from referee.engine.games.base import Game, GameError
from referee.engine.match import MatchResult, TimeControl, new_match_id, play_match
from referee.engine.players import BUILTIN_PLAYERS
from referee.tools import arena_cli, bot_connect, compare, local_runs
from referee.tools.botfolder import (
    BotFolderError,
    build,
    command_line,
    lifeline,
    load_manifest,
    stop_process_group,
    wait_until_serving,
)
from referee.tools.check import EXPECTED, CheckPlan, GameReport, check_games, passed, table_sizes
from referee.tools.check import untested as check_untested
from referee.tools.check import verdict as check_verdict
from referee.tools.human_seat import NAME as HUMAN
from referee.tools.human_seat import HumanSeat
from referee.tools.lineup import BotSpec, Lineup, parse_bot
from referee.tools.sandbox import describe_limits
from referee.tools.series import Summary, Table, schedule, seats_for
from referee.tools.viewer import view_replay_file

USAGE_ERROR = 2
DEFAULT_GAMES = 10
"""Seeds `septet match` plays by default (one game when a person sits at the table)."""
VERIFY_FAILED = 1
CHECK_GAMES = 1
"""Seeds per table size `septet check` plays by default (more while a situation is unseen)."""
CHECK_BUDGET = 40.0
"""Seconds after which `septet check` starts no new game by default: with the last game and the
report, a check ends within a minute on two cores even for a bot using all its decision time."""
CHECK_OPPONENT = "greedy"
"""The built-in player in the seats a check's bot does not fill."""
STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end a command like Ctrl-C does: every process it started is stopped first."""

MATCH_EXAMPLES = """\
examples:
  septet match --game oh-hell --players 4 greedy random
  septet match --game oh-hell bots/examples/greedy bots/examples/node-random random
  septet match --game oh7 127.0.0.1:50052 greedy greedy
  septet match --game black-sevens --games 200 --duplicate greedy random
  septet match --game oh7 --games 50 --seed 7 --replays replays/ --json greedy random random
  septet match --game oh-hell human bots/mine greedy      (you play a seat, at the terminal)
"""


class UsageError(Exception):
    """A mistake in how septet was called; printed as one line, exit code 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="septet",
        description="Septet: referee, local matches and tools for seven-card trick-game bots.",
        epilog="Run 'septet COMMAND --help' for a command's options and examples. "
        "Installed with the platform: " + (", ".join(sorted(_extensions())) or "nothing"),
    )
    parser.add_argument(
        "--version", action="version", version=f"septet {__version__}, {engine_build.describe()}"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    match = commands.add_parser(
        "match",
        help="play seeded games between bots and show a results table",
        description="Play seeded games of one game id between bots and show per-bot results: "
        "mean score, rank distribution and a 95%% confidence interval of the mean rank.",
        epilog=MATCH_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    match.add_argument("--game", required=True, metavar="GAME", help="game id (see 'septet rules')")
    match.add_argument("--players", type=int, metavar="N", help="seats at the table (default: one per bot)")
    match.add_argument(
        "--games", type=int, metavar="K", help="seeds to play (default: 10; 1 with a human seat)"
    )
    match.add_argument("--seed", type=int, metavar="S", help="first seed; game k uses S+k (default: random)")
    match.add_argument(
        "--duplicate", action="store_true", help="play every seat rotation of each seed (K x N games)"
    )
    match.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help="game option, e.g. target=21"
    )
    match.add_argument(
        "--replays", type=Path, metavar="DIR", help="write every game's replay (.json.gz) here"
    )
    match.add_argument("--json", action="store_true", help="print the summary as JSON instead of a table")
    match.add_argument(
        "--decision-time", type=float, default=1.0, metavar="SECONDS", help="per decision (default: 1)"
    )
    match.add_argument(
        "--bank", type=float, default=10.0, metavar="SECONDS", help="time bank per game (default: 10)"
    )
    local_runs.add_arguments(match)
    match.add_argument(
        "bots",
        nargs="+",
        metavar="BOT",
        help=f"built-in ({', '.join(BUILTIN_PLAYERS)}), a bot folder (one process per seat, never reused "
        "for another rotation of a deal), an address (host:port, unix:/path: your own bot, which then "
        f"serves every seat it is given), or {HUMAN}: you, at the terminal (one seat, untimed)",
    )

    replay_cmd = commands.add_parser("replay", help="work with replay files")
    replay_commands = replay_cmd.add_subparsers(dest="replay_command", metavar="ACTION", required=True)
    verify = replay_commands.add_parser(
        "verify",
        help="re-play replays through the engine and check every event and the result",
        description="Re-apply each replay's recorded actions and chance outcomes through the engine. "
        "Exits 1, saying where, if anything differs.",
        epilog="example:\n  septet replay verify replays/*.json.gz",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("files", nargs="+", type=Path, metavar="FILE")
    view = replay_commands.add_parser(
        "view",
        help="watch a replay card by card in the browser",
        description="Verify a replay, write it as one self-contained HTML page (the viewer and the "
        "replay inlined; it opens from disk without a server) and open it in the browser.",
        epilog="examples:\n  septet replay view replays/oh7-1.json.gz\n"
        "  septet replay view game.json.gz --out game.html --no-open",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    view.add_argument("file", type=Path, metavar="FILE")
    view.add_argument(
        "--out", type=Path, metavar="HTML", help="where to write the page (default: FILE's name + .html)"
    )
    view.add_argument("--no-open", action="store_true", help="write the page, do not open a browser")

    bot = commands.add_parser("bot", help="run a bot folder, or connect a bot to the Arena")
    bot_commands = bot.add_subparsers(dest="bot_command", metavar="ACTION", required=True)
    serve = bot_commands.add_parser(
        "serve",
        help="run a bot folder from its manifest, in the foreground",
        description="Build (if its manifest says how) and run a bot folder's command, serving gRPC on "
        "ADDR until Ctrl-C. Other terminals can then play it by address.",
        epilog="example:\n  septet bot serve bots/examples/greedy --address 127.0.0.1:50052\n"
        "  septet match --game oh-hell 127.0.0.1:50052 random random",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("folder", type=Path, metavar="FOLDER")
    serve.add_argument(
        "--address", default="127.0.0.1:50052", metavar="ADDR", help="default: 127.0.0.1:50052"
    )
    bot_connect.add_parser(bot_commands)

    check = commands.add_parser(
        "check",
        help="a conformance report for a bot: legal answers, errors, timeouts, latency",
        description="Play the bot in seeded games of each game it declares (smallest and largest "
        "table; one seat by default, every seat with --all-seats) with the platform's time control, "
        "until every edge situation was asked or the time budget is spent; list illegal answers, "
        "errors, timeouts and the slowest decisions. Exit 0 on pass, 1 on fail.",
        epilog="examples:\n  septet check bots/examples/greedy\n"
        "  septet check 127.0.0.1:50052 --game oh-hell\n"
        "  septet check bots/examples/montecarlo --games 5 --all-seats --budget 0   (a longer run)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("bot", metavar="BOT", help="a bot folder, an address, or a built-in bot")
    check.add_argument("--game", action="append", metavar="GAME", help="only this game id (repeatable)")
    check.add_argument(
        "--games",
        type=int,
        default=CHECK_GAMES,
        metavar="K",
        help=f"seeds per table size (default: {CHECK_GAMES}; more are played until every edge "
        "situation was asked)",
    )
    check.add_argument(
        "--all-seats",
        action="store_true",
        help="the bot fills every seat (default: one seat, moving each game; greedy in the others)",
    )
    check.add_argument(
        "--budget",
        type=float,
        default=CHECK_BUDGET,
        metavar="SECONDS",
        help=f"start no game after this many seconds (default: {CHECK_BUDGET:g}; 0: no limit)",
    )
    check.add_argument("--seed", type=int, default=1, metavar="S", help="first seed (default: 1)")
    check.add_argument(
        "--decision-time",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="per decision, as on the platform (default: 1)",
    )
    check.add_argument(
        "--bank", type=float, default=10.0, metavar="SECONDS", help="time bank per game (default: 10)"
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    local_runs.add_arguments(check)

    compare.add_parser(commands)

    rules = commands.add_parser(
        "rules",
        help="print the rules the engine implements",
        description="Without GAME, list the game ids; with GAME, print its rules summary.",
        epilog="example:\n  septet rules oh7-duel",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rules.add_argument("game", nargs="?", metavar="GAME")
    arena_cli.add_parsers(commands, replay_commands)
    return parser


def _extensions() -> dict[str, importlib.metadata.EntryPoint]:
    """Commands installed packages add (entry points `septet.commands`): the platform's `up`."""
    return {entry.name: entry for entry in importlib.metadata.entry_points(group="septet.commands")}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `septet` console script; returns the exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    extension = _extensions().get(words[0]) if words else None
    if extension is not None:
        command: Any = extension.load()
        return int(command(words[1:]))
    args = _parser().parse_args(words)
    with _stopping_on_signals():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    out = Console(highlight=False, width=_output_width())
    try:
        if args.command == "match":
            return _match(args, out)
        if args.command in arena_cli.COMMANDS or getattr(args, "replay_command", "") == "fetch":
            return arena_cli.run(args, out)
        if args.command == "replay" and args.replay_command == "view":
            return _replay_view(args.file, args.out, not args.no_open)
        if args.command == "replay":
            return _replay_verify(args.files, out)
        if args.command == "bot" and args.bot_command == "connect":
            return bot_connect.run(args)
        if args.command == "bot":
            return _bot_serve(args.folder, args.address, out)
        if args.command == "check":
            return _check(args, out)
        if args.command == "compare":
            return compare.run(args, out, _parse_options(args.option))
        return _rules(args.game, out)
    except (GameError, UsageError, BotFolderError) as error:
        print(f"septet: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print("septet: interrupted", file=sys.stderr)
        return 130


def _output_width() -> int | None:
    """The terminal's width (None: rich asks it), COLUMNS when set, else 120 for a pipe or file."""
    if sys.stdout.isatty() or os.environ.get("COLUMNS", "").isdigit():
        return None
    return 120


def _parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"--option takes NAME=VALUE, not {pair!r}")
        try:
            options[name] = json.loads(text)
        except json.JSONDecodeError:
            options[name] = text
    return options


def _match(args: argparse.Namespace, out: Console) -> int:
    game = get_game(args.game)
    options = game.check_options(_parse_options(args.option))
    specs = [parse_bot(word) for word in args.bots]
    num_seats = seats_for(game, len(specs), args.players)
    human = _human_seat(args, specs, num_seats)
    seed = args.seed if args.seed is not None else secrets.randbelow(1_000_000)
    games = args.games if args.games is not None else 1 if human else DEFAULT_GAMES
    tables = schedule(num_seats, len(specs), games, seed, args.duplicate)
    time_control = TimeControl(args.decision_time, args.bank)
    if args.replays is not None:
        try:
            args.replays.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise UsageError(f"cannot create {args.replays}: {error.strerror}") from None
    run = local_runs.local_run(args, has_folders=any(spec.kind == "folder" for spec in specs))
    with Lineup(specs, game, sandbox=run.sandbox, env=run.env, human=human) as lineup:
        labels = _labels(lineup.specs)  # a bot given by address under the name it reports
        return _play_series(args, out, game, options, labels, lineup, tables, seed, num_seats, time_control)


def _human_seat(args: argparse.Namespace, specs: Sequence[BotSpec], num_seats: int) -> HumanSeat | None:
    """The person at the terminal when a BOT word is `human`. One terminal is one seat: two
    `human` seats (or one repeated to fill the table) would show each other's hand, and a
    duplicate set would deal the same cards to the person again; `--json` is for scripts."""
    humans = [index for index, spec in enumerate(specs) if spec.kind == "human"]
    if not humans:
        return None
    seated = sum(1 for seat in range(num_seats) if seat % len(specs) in humans)
    if seated > 1:
        raise UsageError(
            f"{HUMAN} would sit in {seated} seats of this {num_seats}-player table: one terminal plays "
            "one seat (name a bot for each other seat)"
        )
    if args.duplicate:
        raise UsageError(f"--duplicate deals each seed again to every seat: {HUMAN} would know the cards")
    if args.json:
        raise UsageError(f"--json is for scripts; {HUMAN} plays at the terminal")
    return HumanSeat()


def _labels(specs: Sequence[BotSpec]) -> list[str]:
    """A name per BOT word; two different bots with one name are told apart by what was typed."""
    texts_by_name: dict[str, set[str]] = {}
    for spec in specs:
        texts_by_name.setdefault(spec.name, set()).add(spec.text)
    return [spec.name if len(texts_by_name[spec.name]) == 1 else spec.text for spec in specs]


def _play_series(
    args: argparse.Namespace,
    out: Console,
    game: Game,
    options: dict[str, Any],
    labels: list[str],
    lineup: Lineup,
    tables: list[Table],
    seed: int,
    num_seats: int,
    time_control: TimeControl,
) -> int:
    def play(table: Table) -> MatchResult:
        players = lineup.players(table.seating, table.seed)
        match_id = new_match_id()  # random: a bot learns nothing of the seed from it
        if lineup.human is None:
            return play_match(
                game, players, seed=table.seed, options=options, time_control=time_control, match_id=match_id
            )
        # The person is untimed; every bot keeps its time control (recorded on its seat).
        bots = {seat: time_control for seat, player in enumerate(players) if player is not lineup.human}
        return play_match(
            game, players, seed=table.seed, options=options, seat_time_controls=bots, match_id=match_id,
            observer=lineup.human,
        )  # fmt: skip

    summary = Summary.start(game, labels, num_seats=num_seats, seed=seed, duplicate=args.duplicate)
    err = Console(stderr=True)
    progress = Progress(
        TextColumn(f"{game.id}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("games"),
        TimeRemainingColumn(),
        console=err,
        transient=True,
        disable=args.json or not err.is_terminal or lineup.human is not None,  # no bar over the table
    )
    with progress:
        task = progress.add_task("games", total=len(tables))
        for table in tables:
            outcome = play(table)
            summary.record(table, outcome)
            if args.replays is not None:
                name = f"{game.id}-s{table.seed}-r{table.rotation}.json.gz"
                replay.save(outcome.replay, args.replays / name)
            progress.advance(task)
    if args.json:
        print(json.dumps(summary.to_json(), indent=2))
    else:
        _print_summary(game, summary, out, args.replays)
    return 0


def _print_summary(game: Game, summary: Summary, out: Console, replays: Path | None) -> None:
    rotation = "every seat rotation of each seed" if summary.duplicate else "seating rotated each game"
    out.print(
        f"[bold]{game.title}[/] ({game.id}), {summary.num_seats} players, {summary.played} games "
        f"from seed {summary.seed} ({rotation})"
    )
    out.print(results_table(summary))
    out.print(forfeits_line(summary), markup=False)
    better = "higher" if game.higher_is_better else "lower"
    out.print(
        f"rank 1 is best; scores: {better} is better; #N: % of games finished at rank N. "
        f"{summary.decisions} decisions in {summary.seconds:.2f} s."
    )
    if summary.aborted:
        out.print(f"{summary.aborted} games aborted by a safety cap (not ranked).")
    if replays is not None:
        out.print(
            f"replays written to {replays}/ (check them with: septet replay verify {replays}/*.json.gz)"
        )


def results_table(summary: Summary) -> RichTable:
    """Per-bot results that fit 80 columns at the largest table (7 seats): one space between
    columns, numbers and the interval never wrapped; only a long bot name folds."""
    table = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    table.add_column("bot", overflow="fold", min_width=10)
    table.add_column("games", justify="right", no_wrap=True)
    table.add_column("mean score", justify="right", no_wrap=True)
    table.add_column("mean rank (95% CI)", justify="right", no_wrap=True)
    for rank in range(1, summary.num_seats + 1):
        table.add_column(f"#{rank}", justify="right", no_wrap=True)
    for bot in sorted(summary.bots, key=lambda record: record.rank_interval().mean):
        interval = bot.rank_interval()
        games = max(bot.games, 1)
        shares = [f"{bot.ranks.count(rank) * 100 / games:.0f}" for rank in range(1, summary.num_seats + 1)]
        ci = f" [{interval.low:.2f}, {interval.high:.2f}]" if len(bot.unit_ranks) > 1 else ""
        table.add_row(
            bot.name,
            str(bot.games),
            f"{sum(bot.scores) / games:.1f}",
            f"{interval.mean:.2f}{ci}",
            *shares,
        )
    return table


def forfeits_line(summary: Summary) -> str:
    """The bots' forfeits below the table (a column of them would not fit 80 columns)."""
    lost = [
        f"{bot.name} {', '.join(f'{count} {status}' for status, count in bot.forfeits.items())}"
        for bot in summary.bots
        if bot.forfeits
    ]
    return f"forfeits: {'; '.join(lost)}" if lost else "forfeits: none"


def _replay_view(source: Path, output: Path | None, open_browser: bool) -> int:
    """Writes the replay's standalone viewer page, prints its path (stdout holds only that, for
    scripts), and opens it in a browser unless told not to. When no browser opens (a server, a
    container, no display) it says so on stderr with the page's full path and file:// address:
    a bare file name left the reader to guess that nothing had opened, and where the page was."""
    try:
        page = view_replay_file(source, output)
    except replay.ReplayError as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        raise UsageError(f"cannot write the page: {error.strerror or error}") from None
    print(page, flush=True)
    if not open_browser:
        return 0
    address = page.resolve().as_uri()
    if _open_in_browser(address):
        print(f"opened {address} in your browser", file=sys.stderr)
        return 0
    print(
        f"septet: no browser could be opened here (none found, or no display); the page is "
        f"{page.resolve()}: open {address} in a browser, or copy the file to a machine with one "
        "(it needs no server)",
        file=sys.stderr,
    )
    return 0


def _open_in_browser(url: str) -> bool:
    """True when a browser took `url`; False when none could be started (a browser's own errors
    count as not opened: webbrowser raises for some)."""
    try:
        return webbrowser.open(url)
    except webbrowser.Error:
        return False


def _replay_verify(files: Sequence[Path], out: Console) -> int:
    failed = 0
    for path in files:
        try:
            verified = replay.verify(replay.load(path))
        except replay.ReplayError as error:
            failed += 1
            print(f"FAIL {path}: {error}", file=sys.stderr)
            continue
        ranks = verified.result.ranks
        outcome = (
            "aborted"
            if ranks is None
            else " ".join(
                f"{name}={score}(#{rank})"
                for name, score, rank in zip(verified.names, verified.result.scores, ranks, strict=True)
            )
        )
        out.print(f"ok   {path}: {verified.game}, {verified.events} events, {outcome}")
    if len(files) > 1:
        out.print(f"{len(files) - failed} verified, {failed} failed")
    return VERIFY_FAILED if failed else 0


def _bot_serve(folder: Path, address: str, out: Console) -> int:
    manifest = load_manifest(folder)
    build(manifest, quiet=False)
    command = command_line(manifest, address)  # the folder's own ./program, with a clear error if missing
    process = subprocess.Popen([*lifeline(), *command], cwd=manifest.folder, start_new_session=True)
    try:
        try:
            wait_until_serving(address, 15.0, process=process)
        except BotFolderError as error:
            raise BotFolderError(f"{manifest.name}: {error}") from None
        print(
            f"septet: {manifest.name} is healthy on {address} (Ctrl-C to stop); try: septet check {address}",
            file=sys.stderr,
        )
        return process.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        stop_process_group(process)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _stopping_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP (a closed terminal, a service manager, `timeout`) unwind like Ctrl-C, so
    the `with` blocks owning bot processes stop them; the former handlers come back after (for a
    caller running `main` in its own process). A tool killed outright (SIGKILL) cannot unwind: its
    local bots die with it by PR_SET_PDEATHSIG (`referee.tools.botfolder.lifeline`)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; a caller's thread keeps the caller's
        return
    former = {signum: signal.signal(signum, _interrupt) for signum in STOPPING_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in former.items():
            signal.signal(signum, handler)


def _check(args: argparse.Namespace, out: Console) -> int:
    spec = parse_bot(args.bot)
    declared = load_manifest(spec.text).games if spec.kind == "folder" else tuple(all_games())
    wanted = tuple(args.game or declared)
    for game_id in wanted:
        get_game(game_id)
        if game_id not in declared:
            raise UsageError(f"{spec.name} does not declare {game_id} (its games: {', '.join(declared)})")
    if args.games < 1:
        raise UsageError(f"--games must be at least 1, not {args.games}")
    if args.budget < 0:
        raise UsageError(f"--budget must be 0 (no limit) or more, not {args.budget:g}")
    time_control = TimeControl(args.decision_time, args.bank)
    started = time.monotonic()
    deadline = started + args.budget if args.budget else None
    err = Console(stderr=True)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("games"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=args.json or not err.is_terminal,
    )
    run = local_runs.local_run(args, has_folders=spec.kind == "folder")
    if run.sandbox is not None:
        err.print(describe_limits(), markup=False, highlight=False)
    opponent = parse_bot(CHECK_OPPONENT)
    plan = CheckPlan(args.games, args.seed, time_control, all_seats=args.all_seats, deadline=deadline)
    games = [get_game(game_id) for game_id in wanted]
    with progress, Lineup([spec, opponent], games[0], sandbox=run.sandbox, env=run.env) as lineup:
        tasks = {
            game.id: progress.add_task(f"check {game.id}", total=args.games * len(table_sizes(game)))
            for game in games
        }
        reports = check_games(lineup, games, plan, functools.partial(_advance, progress, tasks))
        name = lineup.specs[0].name  # a bot given by address: the name it reports
    ok = passed(reports)
    seconds = time.monotonic() - started
    if args.json:
        per_game = [report.to_json() for report in reports]
        summary = {
            "bot": name,
            "passed": ok,
            "seconds": round(seconds, 1),
            "not_tested": check_untested(reports),
            "games": per_game,
        }
        print(json.dumps(summary, indent=2))
    else:
        _print_check(name, reports, args.games, out)
        out.print(_longer_run_hint(args, reports, seconds), markup=False)
    return 0 if ok else VERIFY_FAILED


def _longer_run_hint(args: argparse.Namespace, reports: Sequence[GameReport], seconds: float) -> str:
    """How long the check took and how to ask for more of it."""
    cut = [report.game for report in reports if report.cut_short]
    more = f"--games {args.games * 5}" + ("" if args.all_seats else " --all-seats")
    if cut:
        return (
            f"checked in {seconds:.0f} s; the {args.budget:g} s budget cut short {', '.join(cut)}: "
            f"--budget 0 {more} for a longer run"
        )
    return f"checked in {seconds:.0f} s; {more} for a longer run"


def _advance(progress: Progress, tasks: dict[str, TaskID], game_id: str, *_: object) -> None:
    """One game of a check done; a game played past the planned ones (a situation still unseen)
    grows the bar rather than overflowing it."""
    task = tasks[game_id]
    current = next(shown for shown in progress.tasks if shown.id == task)
    if current.total is not None and current.completed + 1 > current.total:
        progress.update(task, total=current.completed + 1)
    progress.advance(task)


def _print_check(name: str, reports: Sequence[GameReport], games: int, out: Console) -> None:
    out.print(f"[bold]septet check {name}[/]")
    out.print(check_table(reports))
    out.print("asked: the bot's decisions, forced ones too; p50, p99, max: its decision times in ms")
    out.print("situations asked:")
    for report in reports:
        seen = ", ".join(sorted(report.seen & EXPECTED.get(report.game, report.seen)))
        missing = f"; not reached: {', '.join(sorted(report.missing))}" if report.missing else ""
        out.print(f"  {report.game}: {seen}{missing}", markup=False)
    failures = [failure for report in reports for failure in report.failures]
    for failure in failures[:10]:
        out.print(
            f"  {failure.status} in {failure.game} ({failure.players} players, "
            f"seed {failure.seed}): {failure.reason}",
            markup=False,
        )
    if len(failures) > 10:
        out.print(f"  ... and {len(failures) - 10} more")
    said = check_verdict(reports, games=games)  # never a bare PASS over situations not asked
    head, rest = said[:4], said[4:]  # "PASS", "FAIL" and what follows them
    colour = "red" if head == "FAIL" else "yellow" if rest else "green"
    out.print(Text(head, style=f"bold {colour}") + Text(rest))


def check_table(reports: Sequence[GameReport]) -> RichTable:
    """One row per game id, within 80 columns: `asked` counts the bot's own decisions, forced
    ones included; the last three columns are its decision times in milliseconds."""
    table = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 0, 0, 0))
    columns = ("game", "seats", "games", "asked", "invalid", "error", "timeout", "p50", "p99", "max")
    for column in columns:
        table.add_column(column, justify="left" if column == "game" else "right", no_wrap=True)
    for report in reports:
        counts = report.counts()
        table.add_row(
            report.game,
            _table_sizes(report.player_counts),
            str(report.games),
            str(report.decisions),
            str(counts["INVALID"]),
            str(counts["ERROR"]),
            str(counts["TIMEOUT"]),
            *(_milliseconds(report.latency_ms(quantile)) for quantile in (0.5, 0.99, 1.0)),
        )
    return table


def _table_sizes(counts: Sequence[int]) -> str:
    """Table sizes as runs: (3, 4, 5, 7) is 3-5/7."""
    runs: list[list[int]] = []
    for count in sorted(counts):
        if runs and count == runs[-1][-1] + 1:
            runs[-1].append(count)
        else:
            runs.append([count])
    return "/".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def _milliseconds(value: float) -> str:
    """A decision time in at most four characters (0.4, 12, 1000), so the table keeps to 80
    columns however slow the bot or the machine."""
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


def _rules(game_id: str | None, out: Console) -> int:
    if game_id is None:
        out.print("Games (septet rules GAME for the rules the engine implements):")
        for game in all_games().values():
            players = (
                f"{game.players.start}-{game.players.stop - 1}"
                if len(game.players) > 1
                else str(game.players.start)
            )
            out.print(f"  {game.id:<22} {game.title} ({players} players)")
        return 0
    game = get_game(game_id)
    out.print(game.rules.strip(), markup=False)
    if game.options:
        out.print("\nOptions (septet match --option NAME=VALUE):", markup=False)
        for name, spec in game.options.items():
            allowed = ", ".join(str(value) for value in spec.allowed)
            out.print(f"  {name}: one of {allowed} (default {spec.default}). {spec.help}", markup=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
