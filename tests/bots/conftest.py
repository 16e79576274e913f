"""Fixtures for tests that run real bot processes."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

FAULTY = Path(__file__).parent / "faulty" / "misbehave.py"


@pytest.fixture
def faulty_bot(tmp_path: Path) -> Callable[..., Path]:
    """Makes a bot folder whose bot plays legally, then misbehaves as told (faulty/misbehave.py,
    copied in: a folder holds its own program, as it must to run in the sandbox, the default of
    `septet check`)."""

    def make(behaviour: str, *, after: int = 3, name: str | None = None, **extra: str) -> Path:
        folder = tmp_path / (name or behaviour)
        folder.mkdir()
        shutil.copy(FAULTY, folder / FAULTY.name)
        words = ["python", FAULTY.name, "--address", "{address}", "--behaviour", behaviour,
                 "--after", str(after)]  # fmt: skip
        for key, value in extra.items():
            words += [f"--{key}", value]
        command = ", ".join(f'"{word}"' for word in words)
        manifest = f'name = "{name or behaviour}"\ngames = ["oh-hell", "oh7", "black-sevens"]\n'
        (folder / "septet-bot.toml").write_text(manifest + f"command = [{command}]\n")
        return folder

    return make
