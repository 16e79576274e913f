"""Does a bot that spins four threads weaken its opponents? The montecarlo example's mean rank at
Oh Hell! tables (0.2 s decisions) against a quiet opponent and against a spinning one, both
sandboxed, with the per-sandbox CPU group and without it (SEPTET_SANDBOX_CGROUPS=off, in a child
process). Prints the mean ranks and the ratio spinning/quiet for each; lower rank is better.

    python benchmarks/sandbox_fairness.py [--games N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from referee.botfolder import start_bot  # noqa: E402
from referee.games import get_game  # noqa: E402
from referee.match import TimeControl, play_match  # noqa: E402
from referee.players import Player, RandomPlayer  # noqa: E402
from referee.players.grpc_player import GrpcPlayer  # noqa: E402
from referee.sandbox import Sandbox, describe_limits  # noqa: E402

SPINNER = """
import random, threading
from referee.sdk import Bot, serve

def spin():
    while True:
        pass

class Spinner(Bot):
    name = "spinner"
    def decide(self, info, legal):
        return random.choice(legal)

for _ in range(4):
    threading.Thread(target=spin, daemon=True).start()
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


def mean_rank(opponent: str, games: int) -> float:
    """The montecarlo example's mean rank over `games` seeded games against `opponent`."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = _folder(Path(scratch), opponent, SPINNER if opponent == "spinner" else QUIET)
        sandbox = Sandbox()
        ours = start_bot(ROOT / "bots" / "examples" / "montecarlo", sandbox=sandbox)
        theirs = start_bot(folder, sandbox=sandbox)
        players: list[Player] = [GrpcPlayer(ours.address, "montecarlo"), GrpcPlayer(theirs.address, opponent)]
        ranks = []
        try:
            for seed in range(games):
                table = [*players, RandomPlayer(random.Random(seed))]
                outcome = play_match(
                    get_game("oh-hell"), table, seed=seed, time_control=TIME_CONTROL, match_id=f"f{seed}"
                )
                assert outcome.result.ranks is not None
                ranks.append(outcome.result.ranks[0])
        finally:
            for player in players:
                player.close()  # type: ignore[attr-defined]
            ours.stop()
            theirs.stop()
    return sum(ranks) / len(ranks)


def measure(games: int) -> dict[str, float]:
    return {
        "line": describe_limits(),
        "quiet": mean_rank("quiet", games),
        "spinner": mean_rank("spinner", games),
    }  # type: ignore[dict-item]


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
        ratio = figures["spinner"] / figures["quiet"]
        print(f"{label}: {figures['line']}")
        print(
            f"  montecarlo mean rank vs quiet {figures['quiet']:.2f}, vs spinner {figures['spinner']:.2f}, "
            f"ratio {ratio:.2f} ({args.games} games each)"
        )


if __name__ == "__main__":
    main()
