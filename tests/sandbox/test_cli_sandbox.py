"""`septet match --sandbox` runs your bot folders as the platform runs submitted ones; without the
flag they are plain processes of yours (and can read what you can)."""

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


@pytest.mark.parametrize(("flags", "reads"), [((), True), (("--sandbox",), False)])
def test_septet_match_sandbox_flag_keeps_a_bot_folder_from_reading_outside(
    tmp_path: Path, flags: tuple[str, ...], reads: bool
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the organiser's notes")
    folder = hostile_copy("read-outside", tmp_path / "bots", {"read": [str(secret)]})
    forfeits = _forfeits(folder, *flags)
    assert bool(forfeits) == reads, forfeits  # reading it is a BREACH: the bot raises and forfeits
