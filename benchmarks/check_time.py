"""How long `septet check` takes on each example bot with its default settings, against the one
minute a bot author should wait for a verdict on two cores.

Each example folder is copied to a temporary folder and checked as an author would check it
(`septet check FOLDER --json`: in the sandbox where bubblewrap can make one, a folder with a build
step built there first, offline; `--no-sandbox` checks them as plain processes, built in the
folder); the script prints the wall time, the verdict, the bot's own decisions, which games the
time budget cut short, and whether the run stayed under the target.

    python benchmarks/check_time.py [--target 60] [--no-sandbox] [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "bots" / "examples"
SEPTET = str(Path(sys.executable).with_name("septet"))


def examples(names: list[str]) -> list[Path]:
    found = sorted(folder for folder in EXAMPLES.iterdir() if (folder / "septet-bot.toml").is_file())
    return [folder for folder in found if not names or folder.name in names]


def check_once(folder: Path, scratch: Path, flags: list[str]) -> tuple[float, dict[str, object]]:
    copy = scratch / folder.name
    shutil.copytree(folder, copy, symlinks=True)
    started = time.monotonic()
    env = {**os.environ, "SEPTET_PROTOS": str(ROOT / "protos")}  # node-random finds bot.proto by it
    run = subprocess.run(
        [SEPTET, "check", str(copy), "--json", *flags], capture_output=True, text=True, cwd=ROOT, env=env
    )
    seconds = time.monotonic() - started
    report = (
        json.loads(run.stdout) if run.stdout.strip() else {"passed": False, "games": [], "error": run.stderr}
    )
    return seconds, report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=float, default=60.0, help="seconds a check may take (default: 60)")
    parser.add_argument("--no-sandbox", action="store_true", help="check them as plain processes")
    parser.add_argument("names", nargs="*", help="example folders to check (default: all)")
    args = parser.parse_args()
    flags = ["--no-sandbox"] if args.no_sandbox else []
    print("bare (--no-sandbox)" if args.no_sandbox else "the default (in the sandbox where there is one)")
    print(f"{'example':<16} {'seconds':>8} {'verdict':>8} {'decisions':>10}  cut short / within target")
    slowest = 0.0
    with tempfile.TemporaryDirectory(prefix="septet-check-time-") as scratch:
        for folder in examples(args.names):
            seconds, report = check_once(folder, Path(scratch), flags)
            slowest = max(slowest, seconds)
            games = report.get("games", [])
            assert isinstance(games, list)
            decisions = sum(int(game["decisions"]) for game in games)
            cut = [str(game["game"]) for game in games if game.get("cut_short")]
            verdict = "PASS" if report.get("passed") else "FAIL"
            within = "yes" if seconds < args.target else "NO"
            cut_text = ", ".join(cut) or "-"
            print(f"{folder.name:<16} {seconds:>8.1f} {verdict:>8} {decisions:>10}  {cut_text} / {within}")
    print(f"slowest check: {slowest:.1f} s (target < {args.target:g} s)")
    return 0 if slowest < args.target else 1


if __name__ == "__main__":
    sys.exit(main())
