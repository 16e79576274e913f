"""Does a bot that spins four processes weaken its opponents? The montecarlo example at Oh Hell!
tables (0.2 s decisions) against a quiet opponent and against one that spins four busy loops in
the background, both sandboxed, with the per-sandbox CPU group and without it
(SEPTET_SANDBOX_CGROUPS=off, in a child process). Montecarlo searches until its time budget, so the
CPU seconds its processes get per game are its rollouts; the script prints those, its mean rank
(lower is better) and the ratio spinning/quiet of its CPU for each setting.

    python benchmarks/sandbox_fairness.py [--games N]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from referee.engine.games import get_game  # noqa: E402
from referee.engine.match import TimeControl, play_match  # noqa: E402
from referee.engine.players import Player, RandomPlayer  # noqa: E402
from referee.tools.botfolder import start_bot  # noqa: E402
from referee.tools.grpc_player import GrpcPlayer  # noqa: E402
from referee.tools.sandbox import Sandbox, describe_limits  # noqa: E402

SPINNER = """
import random, subprocess, sys
from referee.botkit.sdk import Bot, serve

class Spinner(Bot):
    name = "spinner"
    def decide(self, info, legal):
        return random.choice(legal)

for _ in range(4):
    subprocess.Popen([sys.executable, "-c", "while True: pass"])
serve(Spinner())
"""
QUIET = SPINNER.replace("for _ in range(4):", "for _ in range(0):").replace('"spinner"', '"quiet"')
TIME_CONTROL = TimeControl(per_decision=0.2, bank=2.0)


def _folder(into: Path, name: str, code: str) -> Path:
    folder = into / name
    folder.mkdir()
    (folder / "bot.py").write_text(code)
    (folder / "septet-bot.toml").write_text(
        f'name = "{name}"\ngames = ["oh-hell"]\ncommand = ["python", "bot.py", "--address", "{{address}}"]\n'
    )
    return folder


def _cpu_seconds(root_pid: int) -> float:
    """User and system CPU seconds of the processes below `root_pid` so far."""
    total = 0.0
    for process in psutil.Process(root_pid).children(recursive=True):
        with contextlib.suppress(psutil.Error):
            times = process.cpu_times()
            total += times.user + times.system
    return total


def play_series(opponent: str, games: int) -> tuple[float, float, float]:
    """The montecarlo example's mean rank, its CPU seconds per game and the wall seconds per game
    over `games` seeded games (its search stops at a time budget or at a world cap)."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = _folder(Path(scratch), opponent, SPINNER if opponent == "spinner" else QUIET)
        sandbox = Sandbox()
        ours = start_bot(ROOT / "bots" / "examples" / "montecarlo", sandbox=sandbox)
        theirs = start_bot(folder, sandbox=sandbox)
        players: list[Player] = [GrpcPlayer(ours.address, "montecarlo"), GrpcPlayer(theirs.address, opponent)]
        ranks = []
        cpu_before = _cpu_seconds(ours.process.pid)
        started = time.perf_counter()
        try:
            for seed in range(games):
                table = [*players, RandomPlayer(random.Random(seed))]
                outcome = play_match(
                    get_game("oh-hell"), table, seed=seed, time_control=TIME_CONTROL, match_id=f"f{seed}"
                )
                assert outcome.result.ranks is not None
                ranks.append(outcome.result.ranks[0])
            cpu = _cpu_seconds(ours.process.pid) - cpu_before
            wall = time.perf_counter() - started
        finally:
            for player in players:
                player.close()  # type: ignore[attr-defined]
            ours.stop()
            theirs.stop()
    return sum(ranks) / len(ranks), cpu / games, wall / games


def measure(games: int) -> dict[str, object]:
    return {
        "line": describe_limits(),
        "quiet": play_series("quiet", games),
        "spinner": play_series("spinner", games),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=8, help="games per opponent and setting (default: 8)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.games)))
        return
    for label, cgroups in (("with CPU group", ""), ("without CPU group", "off")):
        env = {**os.environ, "SEPTET_SANDBOX_CGROUPS": cgroups}
        done = subprocess.run(
            [sys.executable, __file__, "--child", "--games", str(args.games)],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        (quiet_rank, quiet_cpu, quiet_wall), (spin_rank, spin_cpu, spin_wall) = (
            figures["quiet"],
            figures["spinner"],
        )
        print(f"{label}: {figures['line']}")
        for name, rank, cpu, wall in (
            ("quiet", quiet_rank, quiet_cpu, quiet_wall),
            ("spinner", spin_rank, spin_cpu, spin_wall),
        ):
            print(f"  vs {name:8} montecarlo mean rank {rank:.2f}, {cpu:.2f} CPU s/game, {wall:.1f} s/game")
        print(
            f"  ratio spinner/quiet: montecarlo CPU {spin_cpu / quiet_cpu:.2f}, "
            f"game time {spin_wall / quiet_wall:.2f} ({args.games} games each)"
        )


if __name__ == "__main__":
    main()
