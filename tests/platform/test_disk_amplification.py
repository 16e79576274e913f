"""Disk amplification through the build, and what a user's versions may keep on disk, attacked
through the real intake path (bot_version_submit, bot_version_qualify as the qualification task
runs it) with the real sandbox and real archives.

Issue 25's audit turned a 963-byte upload into a 199 MB stored built archive in 18 s, kept every
version of it, and (it said) unpacked it again for every seat of every match. A build now writes
back at most a few times its upload (`referee.tools.building.built_output_limit`), a user's stored
archives have a quota, old versions' archives are pruned first (their results and replays kept),
and a worker unpacks a version once into its own bounded, read-only cache.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from bot_versions import tar_folder
from platform_support import EXAMPLES

from referee.tools.building import MiB, built_output_limit
from septet_platform.bots.models import BotVersion
from septet_platform.bots.qualification import bot_version_qualify
from septet_platform.bots.services import OFFLINE_HINT, bot_version_submit
from septet_platform.ladders.services import ladders_ensure


@pytest.fixture
def platform_folders(settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Private archive, data, build-cache and scratch folders; the ladders exist."""
    settings.SEPTET_ARCHIVES_DIR = tmp_path / "archives"
    settings.SEPTET_REPLAYS_DIR = tmp_path / "replays"
    settings.DATA_DIR = tmp_path / "data"
    monkeypatch.setenv("SEPTET_BUILD_CACHE", str(tmp_path / "build-cache"))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # the intake's scratch folders go here
    ladders_ensure()
    return tmp_path


def _with_build(name: str, build_py: str) -> bytes:
    """The random example (about 11 KiB) renamed `name`, with `build.py` as its build."""
    manifest = (
        f'name = "{name}"\ngames = ["oh-hell"]\n'
        'command = ["python", "bot.py", "--address", "{address}"]\n'
        'build = ["python", "build.py"]\n'
    )
    return tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest, "build.py": build_py})


def _qualified(version: BotVersion) -> BotVersion:
    bot_version_qualify(version_id=version.pk)
    return BotVersion.objects.select_related("bot").get(pk=version.pk)


def _files(folder: Path) -> dict[str, int]:
    return {
        str(path.relative_to(folder)): path.stat().st_size for path in folder.rglob("*") if path.is_file()
    }


# The build's output: in proportion to the upload ------------------------------------------------

AMPLIFIER = """import os
for number in range(4):
    with open(f"blob-{number}.bin", "wb") as out:
        for _ in range(25):
            out.write(os.urandom(1 << 20))   # 4 x 25 MiB that no compression shrinks
"""


@pytest.mark.django_db(transaction=True)
def test_a_tiny_upload_whose_build_writes_100_mib_fails_saying_so_and_stores_nothing_big(
    django_user_model: type, platform_folders: Path
) -> None:
    # what was tried: an upload of a few KiB whose build writes 100 MiB of random bytes into its
    # folder, 25 MiB a file (the audit's 963 bytes became a 199 MB stored built archive)
    owner = django_user_model.objects.create_user("amplifier")
    upload = _with_build("amplifier", AMPLIFIER)
    assert len(upload) < 16 * 1024

    version = _qualified(bot_version_submit(owner=owner, archive=upload))

    assert version.build_status == BotVersion.Build.FAILED and version.status == BotVersion.Status.FAILED
    assert "the build wrote 100 MiB; " in version.build_log, version.build_log
    assert "a build may write at most 32 MiB for an upload of " in version.build_log, version.build_log
    assert OFFLINE_HINT not in version.build_log, "not a network problem: the hint would mislead"
    assert "the build wrote 100 MiB; " in version.error_log, "the owner reads why in the version's log"
    assert version.built_archive == ""
    stored = _files(platform_folders / "archives")
    assert list(stored) == ["amplifier/v1.tar.gz"] and stored["amplifier/v1.tar.gz"] == len(upload)
    assert not any(size > MiB for size in _files(platform_folders).values()), "something big was kept"


def test_the_output_limit_grows_with_the_upload_between_its_floor_and_its_ceiling() -> None:
    assert built_output_limit(963) == 32 * MiB  # the floor: a compiled bot from a little source
    assert built_output_limit(12 * MiB) == 48 * MiB  # four times a vendored upload
    assert built_output_limit(20 * MiB) == 64 * MiB  # never more than the ceiling
