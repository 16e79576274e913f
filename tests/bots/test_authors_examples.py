"""The worked examples of docs/bots.md, bots without the Python SDK: node-random (JavaScript) and
grpcio-random (plain grpcio). Each plays a short match over gRPC, inside the sandbox as on the
platform, and passes `septet check`."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from referee.tools.sandbox import available

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "bots" / "examples"
SEPTET = str(Path(sys.executable).with_name("septet"))
WITHOUT_SDK = [
    pytest.param(
        "node-random",
        marks=pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
    ),
    "grpcio-random",
]


def septet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SEPTET, *args], capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.mark.parametrize("name", WITHOUT_SDK)
@pytest.mark.parametrize("sandboxed", [False, True], ids=["plain", "sandboxed"])
def test_an_example_without_the_sdk_plays_a_match_over_grpc(name: str, sandboxed: bool) -> None:
    if sandboxed and not available():
        pytest.skip("bubblewrap cannot make a sandbox here")
    folder = str(EXAMPLES / name)
    sandbox = ("--sandbox",) if sandboxed else ()
    run = septet("match", *sandbox, "--game", "oh-hell", "--games", "2", "--seed", "5", "--json",
                 folder, "greedy", "random")  # fmt: skip
    assert run.returncode == 0, run.stderr
    bots = {bot["name"]: bot for bot in json.loads(run.stdout)["bots"]}
    assert set(bots) == {name, "greedy", "random"}
    assert bots[name]["games"] == 2 and not bots[name]["forfeits"]


def test_the_grpcio_example_passes_check() -> None:
    run = septet(
        "check", str(EXAMPLES / "grpcio-random"), "--game", "oh7", "--game", "black-sevens", "--json"
    )
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["passed"] and all(game["decisions"] > 0 for game in report["games"])


def test_the_grpcio_example_uses_only_the_generated_stubs() -> None:
    """It is the worked example of a bot without the SDK: it may import referee.protocol (the stable
    public name of the code generated from bot.proto) and nothing else of the referee."""
    tree = ast.parse((EXAMPLES / "grpcio-random" / "bot.py").read_text())
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    referee = {module for module in imported if module and module.startswith("referee")}
    assert referee == {"referee.protocol"}
