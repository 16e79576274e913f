"""A local build leaves nothing in the temporary folder: its lock lives beside the build stamps."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from referee.tools.botfolder import build, load_manifest

EXAMPLE = Path(__file__).resolve().parents[2] / "bots" / "examples" / "random"


def test_building_a_folder_leaves_no_lock_file_in_the_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "mine"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    manifest_file = folder / "septet-bot.toml"
    manifest_file.write_text(manifest_file.read_text() + 'build = ["python", "-c", "pass"]\n')
    temporary, cache = tmp_path / "tmp", tmp_path / "cache"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.setenv("SEPTET_BUILD_CACHE", str(cache))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again

    build(load_manifest(folder))
    build(load_manifest(folder))  # built already: the stamp says so, the lock is reused

    assert list(temporary.iterdir()) == [], "nothing left in the temporary folder"
    assert len(list((cache / "locks").glob("*.lock"))) == 1
