"""What building a version once, offline, at intake costs, and what the built folder weighs.

For the random example (a build that does nothing: `true`) and for node-random shipped with its
node_modules (its build finds them and does nothing but the copy), it runs the intake build in the
sandbox's build mode (copy of the source to a tmpfs, build, links dropped, tar on stdout) several
times and prints the median and slowest wall time, the tar's size and its number of files. A build
is paid once per version, never per match, so this is a cost per submission.

    python benchmarks/build_once.py [--repeat 5]

node-random needs `npm ci` in bots/examples/node-random first (done here when node_modules is
missing and npm is installed).
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import tarfile
from pathlib import Path

# benchmarks/referee.py would shadow the referee package when this runs as a script.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

from referee.tools.building import build_in_sandbox  # noqa: E402
from referee.tools.sandbox import Sandbox  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "bots" / "examples"


def _measure(name: str, folder: Path, build: list[str], repeat: int) -> None:
    seconds: list[float] = []
    outcome = None
    for _ in range(repeat):
        outcome = build_in_sandbox(folder, build, Sandbox())
        if not outcome.ok:
            print(f"{name}: build failed: {outcome.reason}\n{outcome.log}")
            return
        seconds.append(outcome.seconds)
    assert outcome is not None
    with tarfile.open(fileobj=io.BytesIO(outcome.tar)) as archive:
        files = sum(1 for member in archive if member.isfile())
    print(
        f"{name:12} median {statistics.median(seconds):.2f} s, slowest {max(seconds):.2f} s over {repeat}; "
        f"built tar {len(outcome.tar) / (1 << 20):.1f} MiB, {files} files"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    _measure("random", EXAMPLES / "random", ["true"], args.repeat)
    node = EXAMPLES / "node-random"
    if not (node / "node_modules").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=node, check=True, capture_output=True)
    node_build = ["sh", "-c", "test -d node_modules || npm ci --no-audit --no-fund"]
    _measure("node-random", node, node_build, args.repeat)


if __name__ == "__main__":
    main()
