"""Referee speed: games/s and decisions/s per game id, in-process random players, one core.

Every game goes through `play_match` as a real match does: information states built for every
decision, forced decisions applied by the runner, the replay recorded. Prints one row per game id
and the peak memory of one game's replay and states (tracemalloc) and of the process (ru_maxrss).

    python benchmarks/referee.py [--seconds 2] [--game oh-hell] [--players 4]

Target (issue: referee engine): >= 100,000 decisions/s for oh-hell with 4 players.

    python benchmarks/referee.py --vs-openspiel [--vs-commit REV] [--rounds 7] [--block 0.4]

compares, in one run and interleaved (short blocks in turn, several rounds, medians reported),
random Oh Hell hands of one shape (4 players, 52 cards, 10 tricks) in OpenSpiel and in Septet:
decisions per second without and with each decision's information state (OpenSpiel's
`information_state_string`, its cheaper form, against ours), and the full match loop of the
first table (oh-hell, 4 players, replay recorded) of this tree against the tree of commit REV
(default: the commit before the engine was compiled) and against this tree's pure-Python
build. OpenSpiel comes from the optional `bench` extra (`pip install -e '.[bench]'`); without it
that part is skipped with one line. Goals (issue 19): >= 1.5x OpenSpiel on raw decisions,
>= 2x with information states, and a full loop >= 1.5x REV's. CPU time of this process is
measured (time.process_time), so other load on a shared machine counts less.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# This script shares its name with the package it measures: keep its own folder off the path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
ROOT = _HERE.parent

TARGET_GAME, TARGET_PLAYERS, TARGET_DECISIONS_PER_SECOND = "oh-hell", 4, 100_000

BASELINE_COMMIT = "dd17550e7e97e4a2c612742bbb15c7e7db8e980f"
"""The commit before the engine was compiled and its hot paths rewritten (issue 19)."""

GOAL_RAW, GOAL_INFO, GOAL_LOOP = 1.5, 2.0, 1.5
HAND_PLAYERS, HAND_TRICKS = 4, 10
OPENSPIEL_PARAMS = {"players": HAND_PLAYERS, "num_suits": 4, "num_cards_per_suit": 13,
                    "num_tricks_fixed": HAND_TRICKS}  # fmt: skip


def measure(game_id: str, players: int, seconds: float) -> dict[str, float]:
    """Plays seeded games for about `seconds` of CPU time and returns the rates."""
    from referee.engine.games import GAMES
    from referee.engine.match import play_match
    from referee.engine.players import RandomPlayer

    game = GAMES[game_id]
    games = decisions = asked = 0
    started = time.process_time()
    seed = 0
    while (elapsed := time.process_time() - started) < seconds:
        seats = [RandomPlayer(random.Random(f"{seed}/{seat}")) for seat in range(players)]
        outcome = play_match(game, seats, seed=seed)
        games += 1
        asked += outcome.decisions
        decisions += outcome.decisions + outcome.forced
        seed += 1
    seats = [RandomPlayer(random.Random(seat)) for seat in range(players)]
    tracemalloc.start()
    play_match(game, seats, seed=10**6)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "games_per_s": games / elapsed,
        "decisions_per_s": decisions / elapsed,
        "asked_per_s": asked / elapsed,
        "decisions_per_game": decisions / games,
        "peak_kib_per_game": peak / 1024,
    }


def per_game_table(args: argparse.Namespace) -> None:
    from referee.engine.games import GAMES

    print(
        f"{'game id':<22}{'players':>8}{'games/s':>10}{'decisions/s':>13}{'asked/s':>11}"
        f"{'dec/game':>10}{'peak KiB/game':>15}"
    )
    target_rate = None
    for game_id, game in GAMES.items():
        if args.game and game_id != args.game:
            continue
        players = args.players or (TARGET_PLAYERS if game_id == TARGET_GAME else game.players.start)
        row = measure(game_id, players, args.seconds)
        if game_id == TARGET_GAME and players == TARGET_PLAYERS:
            target_rate = row["decisions_per_s"]
        print(
            f"{game_id:<22}{players:>8}{row['games_per_s']:>10.1f}{row['decisions_per_s']:>13,.0f}"
            f"{row['asked_per_s']:>11,.0f}{row['decisions_per_game']:>10.0f}{row['peak_kib_per_game']:>15,.0f}"
        )
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process peak RSS: {rss_mib:.0f} MiB")
    print("decisions = every seat decision (asked + forced, R-0.2); asked = put to a player.")
    if target_rate is not None:
        verdict = "meets" if target_rate >= TARGET_DECISIONS_PER_SECOND else "MISSES"
        print(
            f"target: {TARGET_GAME} {TARGET_PLAYERS}p {target_rate:,.0f} decisions/s {verdict} "
            f">= {TARGET_DECISIONS_PER_SECOND:,} ({target_rate / TARGET_DECISIONS_PER_SECOND:.2f}x)"
        )


# One Oh Hell hand, the same loop in both engines: every seat decision a random legal action,
# forced ones included; OpenSpiel's chance steps (one per card dealt) drawn the same way. The draw
# is `int(random() * n)`, not `randrange(n)` (four times its cost, all of it in Python): the loops
# measure the engines more than the RNG, alike for both.

HandLoop = Callable[[random.Random, bool], int]
"""(rng, with information states) -> the seat decisions of one random hand."""


def openspiel_hand(pyspiel: Any) -> HandLoop:
    game = pyspiel.load_game("oh_hell", OPENSPIEL_PARAMS)

    def hand(rng: random.Random, with_info: bool) -> int:
        state = game.new_initial_state()
        draw = rng.random
        decisions = 0
        while not state.is_terminal():
            legal = state.legal_actions()  # at a chance node: its outcomes (all equally likely here)
            if state.is_chance_node():
                state.apply_action(legal[int(draw() * len(legal))])
                continue
            if with_info:
                state.information_state_string()
            state.apply_action(legal[int(draw() * len(legal))])
            decisions += 1
        return decisions

    return hand


def septet_hand() -> HandLoop:
    from referee.engine.games import get_game
    from referee.engine.games.base import CHANCE

    game = get_game("oh-hell")
    to_move, legal_actions, apply = game.to_move, game.legal_actions, game.apply
    information_state, sample_chance = game.information_state, game.sample_chance
    start = game.start(HAND_PLAYERS)  # round 0 of oh-hell is a 10-card hand

    def hand(rng: random.Random, with_info: bool) -> int:
        state = apply(start, CHANCE, sample_chance(start, rng))
        draw = rng.random
        decisions = 0
        while (decision := to_move(state)) is not None and decision.seats:  # until the next deal
            seat = decision.seats[0]
            legal = legal_actions(state, seat)
            if with_info:
                information_state(state, seat)
            state = apply(state, seat, legal[int(draw() * len(legal))])
            decisions += 1
        return decisions

    return hand


def hands_block(hand: HandLoop, rng: random.Random, with_info: bool, seconds: float) -> float:
    """Decisions per CPU second over hands played for about `seconds`."""
    decisions = 0
    started = time.process_time()
    while (elapsed := time.process_time() - started) < seconds:
        decisions += hand(rng, with_info)
    return decisions / elapsed


# The full match loop, in worker processes: one per tree (this one, compiled and pure; REV's).


def loop_worker(tree: str, game_id: str, players: int) -> None:
    """Serves blocks of full matches: reads CPU seconds per line, answers decisions/s per line."""
    sys.path.insert(0, tree)
    from referee.engine.games import get_game
    from referee.engine.match import play_match
    from referee.engine.players import RandomPlayer

    game = get_game(game_id)
    import referee.engine.match as match_module

    print(json.dumps({"engine": match_module.__file__}), flush=True)
    seed = 0
    for line in sys.stdin:
        seconds = float(line)
        decisions = 0
        started = time.process_time()
        while (elapsed := time.process_time() - started) < seconds:
            seats = [RandomPlayer(random.Random(f"{seed}/{seat}")) for seat in range(players)]
            outcome = play_match(game, seats, seed=seed)
            decisions += outcome.decisions + outcome.forced
            seed += 1
        print(json.dumps({"rate": decisions / elapsed}), flush=True)


class LoopWorker:
    """A worker process playing full matches from one tree's referee package."""

    def __init__(self, label: str, tree: Path, pure: bool) -> None:
        self.label = label
        env = {key: value for key, value in os.environ.items() if key != "SEPTET_PURE_PYTHON"}
        if pure:
            env["SEPTET_PURE_PYTHON"] = "1"
        command = [sys.executable, str(Path(__file__).resolve()), "--loop-worker", str(tree)]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=tree
        )
        self.engine = self._read()["engine"]

    def block(self, seconds: float) -> float:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{seconds}\n")
        self.process.stdin.flush()
        return float(self._read()["rate"])

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.label} worker stopped (exit {self.process.wait()})")
        return dict(json.loads(line))

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def commit_tree(rev: str, into: Path) -> Path | None:
    """The referee package of commit `rev` unpacked under `into`; None (said why) if unavailable."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "referee"],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        reason = archive.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["git failed"]
        print(f"full loop vs {rev[:12]}: skipped, no such commit here ({reason[0]})")
        return None
    tar_path = into / "tree.tar"
    tar_path.write_bytes(archive.stdout)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


@contextmanager
def stopped_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP end the run like Ctrl-C does, so every `finally` stops its workers."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def median_row(label: str, rates: list[float]) -> str:
    spread = f"(min {min(rates):,.0f}, max {max(rates):,.0f})"
    return f"  {label:<44}{statistics.median(rates):>12,.0f}/s   {spread}"


def verdict(name: str, ratio: float, goal: float) -> str:
    return f"  {name:<44}{ratio:>11.2f}x   goal >= {goal}x: {'MET' if ratio >= goal else 'MISSED'}"


def versus(args: argparse.Namespace) -> None:
    """OpenSpiel and an earlier commit against this tree, interleaved blocks, medians."""
    import referee.engine.match as match_module
    from referee.engine import build

    print(f"this tree: {build.describe()} ({match_module.__file__})")
    print(f"load average: {' '.join(f'{value:.2f}' for value in os.getloadavg())}; {os.cpu_count()} cores")
    try:
        import pyspiel  # type: ignore[import-not-found]
    except ImportError:
        pyspiel = None
        print("OpenSpiel: skipped, not installed (pip install -e '.[bench]' installs open_spiel)")
    rates: dict[str, list[float]] = {}
    septet = septet_hand()
    loops: list[tuple[str, HandLoop, bool]] = [("septet", septet, False), ("septet", septet, True)]
    if pyspiel is not None:
        spiel = openspiel_hand(pyspiel)
        loops += [("openspiel", spiel, False), ("openspiel", spiel, True)]
    workers: list[LoopWorker] = []
    with tempfile.TemporaryDirectory(prefix="septet-bench-") as scratch, stopped_on_signals():
        try:
            workers.append(LoopWorker("this tree", ROOT, pure=False))
            workers.append(LoopWorker("this tree, pure Python", ROOT, pure=True))
            baseline = commit_tree(args.vs_commit, Path(scratch)) if args.vs_commit else None
            if baseline is not None:
                workers.append(LoopWorker(f"commit {args.vs_commit[:12]}", baseline, pure=True))
            for worker in workers:
                print(f"full loop worker '{worker.label}': {worker.engine}")
            for round_index in range(args.rounds):
                rng = random.Random(round_index)
                # Turn the order each round, so no engine always runs first (or right after another).
                order = loops[round_index % len(loops) :] + loops[: round_index % len(loops)]
                for name, hand, with_info in order:
                    key = f"{name} {'with info states' if with_info else 'raw'}"
                    rates.setdefault(key, []).append(hands_block(hand, rng, with_info, args.block))
                turned = workers[round_index % len(workers) :] + workers[: round_index % len(workers)]
                for worker in turned:
                    rates.setdefault(worker.label, []).append(worker.block(args.block))
                print(f"  round {round_index + 1}/{args.rounds} done", file=sys.stderr)
        finally:
            for worker in workers:
                worker.stop()
    report(args, rates, [worker.label for worker in workers])


def report(args: argparse.Namespace, rates: dict[str, list[float]], loop_labels: list[str]) -> None:
    median = {key: statistics.median(values) for key, values in rates.items()}
    print(f"\nOh Hell hands, {HAND_PLAYERS} players x {HAND_TRICKS} tricks, {args.rounds} rounds of "
          f"{args.block:.2f} CPU s blocks, medians of decisions per CPU second:")  # fmt: skip
    for key, values in rates.items():
        if key not in loop_labels:
            print(median_row(key, values))
    if "openspiel raw" in median:
        print(verdict("Septet / OpenSpiel, raw", median["septet raw"] / median["openspiel raw"], GOAL_RAW))
        info_ratio = median["septet with info states"] / median["openspiel with info states"]
        print(verdict("Septet / OpenSpiel, with info states", info_ratio, GOAL_INFO))
    print(f"\nfull match loop (play_match, random players, replay recorded), {TARGET_GAME} {TARGET_PLAYERS}p,"
          " decisions per CPU second:")  # fmt: skip
    for label in loop_labels:
        print(median_row(label, rates[label]))
    if len(loop_labels) == 3:
        here, pure, before = (median[label] for label in loop_labels)
        print(verdict(f"this tree / {loop_labels[2]}", here / before, GOAL_LOOP))
        print(f"  {'this tree pure Python / ' + loop_labels[2]:<44}{pure / before:>11.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per game id (default 2)")
    parser.add_argument("--game", help="only this game id")
    parser.add_argument(
        "--players", type=int, help="players (default: the target's for oh-hell, else the minimum)"
    )
    parser.add_argument("--vs-openspiel", action="store_true", help="compare with OpenSpiel and a commit")
    parser.add_argument(
        "--vs-commit",
        default=BASELINE_COMMIT,
        help="with --vs-openspiel: the commit whose full match loop is measured too ('' for none)",
    )
    parser.add_argument("--rounds", type=int, default=7, help="with --vs-openspiel: rounds (default 7)")
    parser.add_argument(
        "--block", type=float, default=0.4, help="with --vs-openspiel: CPU seconds per block (default 0.4)"
    )
    parser.add_argument("--loop-worker", metavar="TREE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.loop_worker:
        loop_worker(args.loop_worker, args.game or TARGET_GAME, args.players or TARGET_PLAYERS)
    elif args.vs_openspiel:
        versus(args)
    else:
        per_game_table(args)


if __name__ == "__main__":
    main()
