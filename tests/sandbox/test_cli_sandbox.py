"""`septet match` runs bot folders as the platform runs submitted ones, by default (`--sandbox`
insists on it); with `--no-sandbox` they are plain processes of yours (and can read what you can).
The environment a folder gets either way: tests/sandbox/test_local_runs.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_helpers import hostile_copy

SEPTET = str(Path(sys.executable).with_name("septet"))


def _forfeits(folder: Path, *flags: str) -> dict[str, int]:
    done = subprocess.run(
        [SEPTET, "match", "--game", "oh-hell", "--games", "1", "--seed", "3", "--json", *flags,
         str(folder), "random", "greedy"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    return next(bot["forfeits"] for bot in summary["bots"] if bot["name"] == "hostile-read-outside")


@pytest.mark.parametrize(
    ("flags", "reads"), [((), False), (("--sandbox",), False), (("--no-sandbox",), True)]
)
def test_septet_match_keeps_a_bot_folder_from_reading_outside_unless_told_not_to(
    tmp_path: Path, flags: tuple[str, ...], reads: bool
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the organiser's notes")
    folder = hostile_copy("read-outside", tmp_path / "bots", {"read": [str(secret)]})
    forfeits = _forfeits(folder, *flags)
    assert bool(forfeits) == reads, forfeits  # reading it is a BREACH: the bot raises and forfeits


@pytest.mark.parametrize("command", ["check", "match", "compare"])
def test_each_local_command_says_what_running_a_folder_without_sandbox_risks(command: str) -> None:
    done = subprocess.run([SEPTET, command, "--help"], capture_output=True, text=True, timeout=60, check=True)
    text = " ".join(done.stdout.split())
    assert "--no-sandbox" in text and "--sandbox" in text and "--env" in text
    assert "YOUR rights" in text and "credentials" in text and "network" in text, text


def test_septet_check_sandbox_says_which_limits_hold_and_contains_a_reader(tmp_path: Path) -> None:
    """Tried: `septet check --sandbox` on a folder that reads a file of ours; it must not get it.
    (The default does the same: test_local_runs.py.)"""
    secret = tmp_path / "secret.txt"
    secret.write_text("the organiser's notes")
    folder = hostile_copy("read-outside", tmp_path / "bots", {"read": [str(secret)]})
    done = subprocess.run(
        [SEPTET, "check", "--sandbox", "--games", "1", "--game", "oh-hell", "--json", str(folder)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.stderr.startswith("sandbox: "), done.stderr
    assert "BREACH" not in done.stdout
    assert done.returncode == 0, done.stdout[-2000:]
