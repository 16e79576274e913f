"""The bot commands as a newcomer runs them: serve a folder, check it, match folders and addresses."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from process_tree import running_from

from referee.tools.botfolder import BotFolderError, load_manifest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "bots" / "examples"
SEPTET = str(Path(sys.executable).with_name("septet"))


def septet(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SEPTET, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_match_plays_example_folders_over_grpc_and_stops_them(tmp_path: Path) -> None:
    """Copies of the examples in this test's own folder, so the leftover check sees only the
    processes this run started (never other tests' bots of the same example)."""
    folders = tmp_path / "bots"
    for name in ("greedy", "random"):
        shutil.copytree(EXAMPLES / name, folders / name)
    replays = tmp_path / "replays"
    bots = (str(folders / "greedy"), str(folders / "random"), "random")
    run = septet(
        "match",
        "--game",
        "oh-hell",
        "--games",
        "2",
        "--seed",
        "4",
        "--json",
        "--replays",
        str(replays),
        *bots,
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    # The folder bot named "random" and the built-in random are told apart by what was typed.
    assert {bot["name"] for bot in summary["bots"]} == {"greedy", str(folders / "random"), "random"}
    assert all(not bot["forfeits"] for bot in summary["bots"])
    verify = septet("replay", "verify", *map(str, replays.glob("*.json.gz")))
    assert verify.returncode == 0, verify.stderr
    assert running_from(folders) == [], "bot processes are stopped after the series"


def test_bot_serve_then_match_and_check_by_address_then_sigterm_stops_it() -> None:
    address = f"127.0.0.1:{_free_port()}"
    serve = subprocess.Popen([SEPTET, "bot", "serve", str(EXAMPLES / "greedy"), "--address", address],
                             stderr=subprocess.PIPE, text=True, cwd=ROOT)  # fmt: skip
    try:
        assert serve.stderr is not None
        deadline = time.monotonic() + 30
        line = ""
        while "healthy" not in line and time.monotonic() < deadline:
            line = serve.stderr.readline()
        assert f"is healthy on {address}" in line
        run = septet(
            "match", "--game", "oh7", "--games", "2", "--seed", "3", "--json", address, "random", "random"
        )
        assert run.returncode == 0, run.stderr
        check = septet("check", address, "--game", "oh7-duel", "--games", "2")
        assert check.returncode == 0 and "PASS" in check.stdout, check.stdout + check.stderr
    finally:
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=15) in (0, -signal.SIGTERM)
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", int(address.rsplit(":", 1)[1]))) != 0, "the bot is gone"


def test_check_passes_the_greedy_example_and_fails_a_faulty_bot(faulty_bot: Callable[..., Path]) -> None:
    good = septet("check", str(EXAMPLES / "greedy"), "--game", "black-sevens", "--games", "2", "--json")
    assert good.returncode == 0, good.stderr
    report = json.loads(good.stdout)
    assert report["passed"] and report["games"][0]["situations_missing"] == []
    bad = septet("check", str(faulty_bot("illegal-value", after=5)), "--game", "oh-hell", "--games", "1")
    assert bad.returncode == 1
    assert "FAIL" in bad.stdout and "INVALID in oh-hell" in bad.stdout


@pytest.mark.parametrize(
    ("manifest", "message", "what_was_tried"),
    [
        ("", "name must be", "an empty manifest"),
        ('name = "Bad Name"\ngames = ["oh7"]\ncommand = ["x", "{address}"]', "name must be", "a bad name"),
        (
            'name = "b"\ngames = ["chess"]\ncommand = ["x", "{address}"]',
            "unknown game 'chess'",
            "an unknown game",
        ),
        ('name = "b"\ngames = []\ncommand = ["x", "{address}"]', "games must be", "no games"),
        (
            'name = "b"\ngames = ["oh7"]\ncommand = "python bot.py"',
            "command must be a list",
            "a string command",
        ),
        (
            'name = "b"\ngames = ["oh7"]\ncommand = ["python", "bot.py"]',
            "{address}",
            "no address placeholder",
        ),
        (
            'name = "b"\ngames = ["oh7"]\ncommand = ["x", "{address}"]\nport = 1',
            "unknown key 'port'",
            "an extra key",
        ),
        ("name = [", "not valid TOML", "broken TOML"),
    ],
)
def test_malformed_manifests_are_refused_with_one_line(
    tmp_path: Path, manifest: str, message: str, what_was_tried: str
) -> None:
    (tmp_path / "septet-bot.toml").write_text(manifest)
    with pytest.raises(BotFolderError) as failure:
        load_manifest(tmp_path)
    assert message in str(failure.value), what_was_tried
    run = septet("check", str(tmp_path))
    assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr, what_was_tried


def test_a_command_that_is_not_installed_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "septet-bot.toml").write_text(
        'name = "b"\ngames = ["oh7"]\ncommand = ["no-such-runtime", "{address}"]'
    )
    run = septet("match", "--game", "oh7", str(tmp_path), "random", "random")
    assert run.returncode == 2
    assert "needs 'no-such-runtime', which is not installed" in run.stderr


def test_a_folder_bot_that_does_not_play_the_game_is_refused() -> None:
    node = EXAMPLES / "node-random"
    manifest = load_manifest(node)
    assert "oh-hell" in manifest.games
    run = septet("match", "--game", "poker", str(node), "random")
    assert run.returncode == 2 and "unknown game" in run.stderr


PYTHON_EXAMPLES = sorted(
    folder.name
    for folder in EXAMPLES.iterdir()
    if (folder / "septet-bot.toml").is_file()
    and load_manifest(folder).command[0] == "python"
    # Its 0.2 s searches make its default check take about 40 s: tests/bots/test_check_bounded.py
    # runs that one, and tests/bots/test_montecarlo.py every game with a small budget.
    and folder.name != "montecarlo"
)


@pytest.mark.parametrize("name", PYTHON_EXAMPLES)
def test_every_python_example_bot_passes_the_conformance_check_in_every_game_it_declares(name: str) -> None:
    run = septet("check", str(EXAMPLES / name), "--games", "2", "--json")
    report = json.loads(run.stdout)
    assert run.returncode == 0 and report["passed"], run.stderr
    assert {game["game"] for game in report["games"]} == set(load_manifest(EXAMPLES / name).games)
