"""docs/bots.md's search section: its example runs as written, and every name it imports exists."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import referee.botkit.search as search

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "bots.md"


def example() -> str:
    section = GUIDE.read_text().split("## 8. Search", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "the search section has a Python example"
    return match.group(1)


def test_the_search_example_runs_and_searches() -> None:
    run = subprocess.run(
        [sys.executable, "-c", example()], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    _chosen, worlds, rollouts = run.stdout.split()
    assert int(worlds) >= 1 and int(rollouts) >= int(worlds)


def test_the_names_the_section_uses_are_exported() -> None:
    section = GUIDE.read_text().split("## 8. Search", 1)[1]
    for name in ("worlds", "rollout", "search", "Budget", "Horizon", "bid_belief", "greedy_policy",
                 "random_policy", "relative_points", "Belief"):  # fmt: skip
        assert f"`{name}" in section or f" {name}" in section, name
        assert name in search.__all__, name
