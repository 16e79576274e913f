"""Bot archive intake and version submission: a packed bot folder becomes a stored QUALIFYING
version; every bad archive is refused with a one-line reason, storing no row and no file."""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import stat
import tarfile
import tempfile
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import connection, connections
from fixtures_intake import (
    BOT_PY,
    MiB,
    file_info,
    good_members,
    manifest,
    random_copy,
    special_info,
    tar_bytes,
    tar_with_lying_size,
    zip_bytes,
    zip_symlink,
    zip_with_declared_size,
)

from referee.tools.botfolder import BotFolderError
from referee.tools.packing import pack_folder
from septet_platform.bots.archives import ArchiveRejected, unpack_archive
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.selectors import bot_get, bot_version_archive_path, bot_versions_for
from septet_platform.bots.services import BotNameTaken, bot_version_submit


@pytest.fixture
def archives(settings: Any, tmp_path: Path) -> Path:
    """A private SEPTET_ARCHIVES_DIR for the test."""
    settings.SEPTET_ARCHIVES_DIR = tmp_path / "archives"
    return settings.SEPTET_ARCHIVES_DIR


@pytest.fixture
def scratch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The temporary folder intake unpacks into, watched for leftovers."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def alice(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("alice", password="x")


@pytest.fixture
def bob(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("bob", password="x")


def _files_under(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*")] if folder.exists() else []


def _unpacked_names(data: bytes, destination: Path) -> list[str]:
    root = unpack_archive(data, destination)
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*"))


# A good submission ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_packed_copy_of_the_random_example_becomes_version_1_qualifying(
    alice: User, archives: Path, scratch: Path, tmp_path: Path
) -> None:
    packed = pack_folder(random_copy(tmp_path))
    version = bot_version_submit(owner=alice, archive=packed)
    version.refresh_from_db()
    assert (version.bot.name, version.bot.owner, version.number) == ("my-random", alice, 1)
    assert version.status == BotVersion.Status.QUALIFYING
    assert version.archive == "my-random/v1.tar.gz"
    stored = bot_version_archive_path(version=version)
    assert stored == archives / "my-random" / "v1.tar.gz"
    assert stored.read_bytes() == packed
    assert version.archive_sha256 == hashlib.sha256(packed).hexdigest()
    assert version.manifest == {
        "name": "my-random",
        "games": ["oh7", "oh7-advanced", "oh7-duel", "oh-hell", "black-sevens", "seven-up-seven-down"],
        "command": ["python", "bot.py", "--address", "{address}"],
        "build": [],
        "description": "Python example (the SDK): a uniformly random legal action in every game",
    }
    assert _files_under(scratch) == []
    assert _unpacked_names(stored.read_bytes(), tmp_path / "check") == [
        "README.md",
        "bot.py",
        "septet-bot.toml",
    ]


@pytest.mark.django_db
def test_the_next_submission_of_a_bot_is_its_next_version(
    alice: User, archives: Path, tmp_path: Path
) -> None:
    folder = random_copy(tmp_path)
    first = bot_version_submit(owner=alice, archive=pack_folder(folder))
    (folder / "bot.py").write_text((folder / "bot.py").read_text() + "\n# v2\n")
    second = bot_version_submit(owner=alice, archive=pack_folder(folder))
    assert (first.number, second.number, first.bot_id) == (1, 2, second.bot_id)
    assert Bot.objects.count() == 1
    assert [version.number for version in bot_versions_for(bot=bot_get(name="my-random"))] == [2, 1]
    assert sorted(path.name for path in (archives / "my-random").iterdir()) == ["v1.tar.gz", "v2.tar.gz"]
    assert first.archive_sha256 != second.archive_sha256


@pytest.mark.django_db
def test_a_zip_with_the_folder_inside_one_top_level_folder_is_stored_as_tar_gz(
    alice: User, archives: Path, tmp_path: Path
) -> None:
    folder = random_copy(tmp_path)
    data = zip_bytes((f"my-random/{path.name}", path.read_bytes()) for path in sorted(folder.iterdir()))
    version = bot_version_submit(owner=alice, archive=data)
    stored = bot_version_archive_path(version=version).read_bytes()
    assert stored.startswith(b"\x1f\x8b") and version.archive_sha256 == hashlib.sha256(stored).hexdigest()
    assert _unpacked_names(stored, tmp_path / "check") == ["README.md", "bot.py", "septet-bot.toml"]


@pytest.mark.django_db
def test_a_plain_tar_is_accepted_and_stored_gzip_compressed(
    alice: User, archives: Path, tmp_path: Path
) -> None:
    version = bot_version_submit(owner=alice, archive=tar_bytes(good_members(), gz=False))
    stored = bot_version_archive_path(version=version).read_bytes()
    assert stored.startswith(b"\x1f\x8b")
    assert _unpacked_names(stored, tmp_path / "check") == ["bot.py", "septet-bot.toml"]


# Unpacking and packing ---------------------------------------------------------------------------


def test_unpack_returns_the_single_top_level_folder_holding_the_manifest(tmp_path: Path) -> None:
    data = tar_bytes([file_info("bot/septet-bot.toml", manifest()), file_info("bot/lib/util.py", BOT_PY)])
    root = unpack_archive(data, tmp_path / "out")
    assert root == tmp_path / "out" / "bot"
    assert (root / "lib" / "util.py").read_bytes() == BOT_PY


def test_unpack_accepts_a_tar_made_with_dot_slash_names_like_the_tar_command(tmp_path: Path) -> None:
    root_entry = tarfile.TarInfo(".")
    root_entry.type = tarfile.DIRTYPE
    data = tar_bytes(
        [(root_entry, b""), file_info("./septet-bot.toml", manifest()), file_info("./bot.py", BOT_PY)]
    )
    assert _unpacked_names(data, tmp_path / "out") == ["bot.py", "septet-bot.toml"]


def test_unpacked_files_get_plain_modes_never_setuid(tmp_path: Path) -> None:
    data = tar_bytes([*good_members(), file_info("run.sh", b"#!/bin/sh\n", mode=0o6777)])
    root = unpack_archive(data, tmp_path / "out")
    assert stat.S_IMODE((root / "run.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((root / "bot.py").stat().st_mode) == 0o644


def test_unpack_refuses_a_destination_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.txt").write_text("keep me")
    with pytest.raises(ValueError, match="must be an empty folder"):
        unpack_archive(tar_bytes(good_members()), tmp_path / "out")
    assert [path.name for path in (tmp_path / "out").iterdir()] == ["mine.txt"]


def test_pack_folder_skips_environments_and_build_output_and_is_reproducible(tmp_path: Path) -> None:
    folder = random_copy(tmp_path)
    for skipped in (".venv/bin/python", "__pycache__/bot.pyc", ".git/HEAD"):
        (folder / skipped).parent.mkdir(parents=True, exist_ok=True)
        (folder / skipped).write_text("skip me")
    (folder / "lib" / "__pycache__").mkdir(parents=True)
    (folder / "lib" / "__pycache__" / "x.pyc").write_text("skip me")
    (folder / "lib" / "util.py").write_text("x = 1\n")
    (folder / ".septet-build").write_text("stamp")
    packed = pack_folder(folder)
    assert packed == pack_folder(folder)
    assert _unpacked_names(packed, tmp_path / "out") == [
        "README.md",
        "bot.py",
        "lib",
        "lib/util.py",
        "septet-bot.toml",
    ]


def test_pack_folder_refuses_a_symlink_and_a_folder_without_manifest(tmp_path: Path) -> None:
    folder = random_copy(tmp_path)
    (folder / "secrets").symlink_to("/etc/passwd")
    with pytest.raises(BotFolderError, match="secrets: a symlink"):
        pack_folder(folder)
    (tmp_path / "empty").mkdir()
    with pytest.raises(BotFolderError, match=r"has no septet-bot\.toml"):
        pack_folder(tmp_path / "empty")


# Bad archives: each refused with its reason, nothing stored ---------------------------------------


@functools.cache
def _gzip_of_zeros(size: int) -> bytes:
    """A tar.gz holding the manifest and `size` zero bytes, compressed as a stream (no huge buffer)."""
    head = tar_bytes([file_info("septet-bot.toml", manifest())], gz=False)[:1024]
    info = tarfile.TarInfo("zeros.bin")
    info.size = size
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [compressor.compress(head + info.tobuf(format=tarfile.GNU_FORMAT))]
    block = bytes(MiB)
    for _ in range(size // MiB):
        parts.append(compressor.compress(block))
    parts.append(compressor.compress(bytes(size % MiB) + b"\0" * 1024))
    parts.append(compressor.flush())
    return b"".join(parts)


def _many_files(count: int) -> bytes:
    return tar_bytes([*good_members(), *(file_info(f"data/{i}.txt", b"x") for i in range(count))])


def _compressible(size: int) -> bytes:
    """Mostly zeros with some random bytes: compresses about 10 to 1 (legal, but large)."""
    chunk = b"".join(os.urandom(100) + bytes(924) for _ in range(1024))
    return (chunk * (size // len(chunk) + 1))[:size]


def _sized_files(sizes: list[int]) -> bytes:
    entries = [("septet-bot.toml", manifest())]
    entries += [(f"blob{index}.bin", _compressible(size)) for index, size in enumerate(sizes)]
    return zip_bytes(entries)


def _sparse_member() -> bytes:
    info = tarfile.TarInfo("sparse.bin")
    info.type = tarfile.GNUTYPE_SPARSE
    return tar_bytes(good_members(), gz=False)[:1024] + info.tobuf(format=tarfile.GNU_FORMAT) + bytes(1024)


BAD_ARCHIVES: dict[str, tuple[Callable[[], bytes], str]] = {
    # what was tried: (how to build it, the reason expected)
    "dot-dot path in a tar": (
        lambda: tar_bytes([*good_members(), file_info("../evil.py", BOT_PY)]),
        r"^\.\./evil\.py: '\.\.' in a path is not allowed$",
    ),
    "dot-dot inside a deeper tar path": (
        lambda: tar_bytes([*good_members(), file_info("lib/../../evil.py", BOT_PY)]),
        r"'\.\.' in a path is not allowed",
    ),
    "dot-dot path in a zip": (
        lambda: zip_bytes([("septet-bot.toml", manifest()), ("../../evil.py", BOT_PY)]),
        r"^\.\./\.\./evil\.py: '\.\.' in a path is not allowed$",
    ),
    "absolute path in a tar": (
        lambda: tar_bytes([*good_members(), file_info("/etc/cron.d/evil", BOT_PY)]),
        r"^/etc/cron\.d/evil: absolute paths are not allowed$",
    ),
    "absolute path in a zip": (
        lambda: zip_bytes([("septet-bot.toml", manifest()), ("/tmp/evil", BOT_PY)]),
        r"^/tmp/evil: absolute paths are not allowed$",
    ),
    "backslash path in a zip": (
        lambda: zip_bytes([("septet-bot.toml", manifest()), ("..\\..\\evil.py", BOT_PY)]),
        r"unsafe name",
    ),
    "symlink in a tar": (
        lambda: tar_bytes([*good_members(), special_info("passwd", tarfile.SYMTYPE, "/etc/passwd")]),
        r"^passwd: a symlink; only files and folders are allowed$",
    ),
    "symlink in a zip": (
        lambda: zip_bytes([("septet-bot.toml", manifest()), zip_symlink("passwd", "/etc/passwd")]),
        r"^passwd: a symlink; only files and folders are allowed$",
    ),
    "hardlink in a tar": (
        lambda: tar_bytes([*good_members(), special_info("shadow", tarfile.LNKTYPE, "/etc/shadow")]),
        r"^shadow: a hardlink; only files and folders are allowed$",
    ),
    "character device in a tar": (
        lambda: tar_bytes([*good_members(), special_info("null", tarfile.CHRTYPE)]),
        r"^null: a character device",
    ),
    "block device in a tar": (
        lambda: tar_bytes([*good_members(), special_info("sda", tarfile.BLKTYPE)]),
        r"^sda: a block device",
    ),
    "fifo in a tar": (
        lambda: tar_bytes([*good_members(), special_info("pipe", tarfile.FIFOTYPE)]),
        r"^pipe: a fifo",
    ),
    "sparse file in a tar": (_sparse_member, r"^sparse\.bin: a sparse file"),
    "2,001 entries (the limit is 2,000)": (
        lambda: _many_files(1999),
        r"^archive has more than 2000 entries$",
    ),
    "one file of 10 MiB + 1 byte": (
        lambda: tar_bytes([*good_members(), file_info("big.bin", bytes(10 * MiB + 1))], gz=False),
        r"^big\.bin: 10,485,761 bytes, over the limit of 10 MiB per file$",
    ),
    "files totalling 54 MiB in a zip": (
        lambda: _sized_files([9 * MiB] * 6),
        r"^files total 56,623,\d{3} bytes, over the limit of 50 MiB per bot$",
    ),
    "a tar.gz unpacking to 60 MiB": (
        lambda: tar_bytes(
            [*good_members(), *(file_info(f"b{i}.bin", _compressible(6 * MiB)) for i in range(10))]
        ),
        r"^archive decompresses to over 50 MiB, the limit for a bot folder$",
    ),
    "archive of 20 MiB + 1 byte": (
        lambda: b"\x1f\x8b" + bytes(20 * MiB - 1),
        r"^archive is 20,971,521 bytes, over the limit of 20 MiB$",
    ),
    "zip bomb: 9 MiB of zeros in one entry": (
        lambda: zip_bytes([("septet-bot.toml", manifest()), ("zeros.bin", bytes(9 * MiB))]),
        r"^zeros\.bin: compresses \d+ to 1, over the limit of 100 to 1 \(a zip bomb\?\)$",
    ),
    "zip bomb: 40 small-enough entries of zeros": (
        lambda: zip_bytes([("septet-bot.toml", manifest()), *((f"z{i}", bytes(MiB)) for i in range(40))]),
        r"^files total \d+ times the archive's size, over the limit of 100 \(a compression bomb\?\)$",
    ),
    "tar.gz bomb: 5 MiB of zeros": (
        lambda: _gzip_of_zeros(5 * MiB),
        r"^archive decompresses to over 100 times its size \(a compression bomb\?\)$",
    ),
    "tar.gz bomb: 1 GiB of zeros": (
        lambda: _gzip_of_zeros(1024 * MiB),
        r"^archive decompresses to over 50 MiB, the limit for a bot folder$",
    ),
    "tar header says 10 bytes, 2 KiB follow": (
        lambda: tar_with_lying_size(b"x" * 2048, declared=10),
        r"^data after the last member its headers account for \(a header that lies about a size\?\)$",
    ),
    "tar header says 1 MiB, 100 bytes follow": (
        lambda: tar_with_lying_size(b"x" * 100, declared=MiB)[:-1024],
        r"^bot\.py: its header says 1048576 bytes but the archive ends after \d+$",
    ),
    "zip header says 5 bytes, 15 are stored": (
        lambda: zip_with_declared_size([("septet-bot.toml", manifest()), ("bot.py", BOT_PY)], "bot.py", 5),
        r"^bot\.py: corrupt data \(Bad CRC-32 for file 'bot\.py'\)$",
    ),
    "zip header says 5000 bytes, 15 are stored": (
        lambda: zip_with_declared_size([("septet-bot.toml", manifest()), ("bot.py", BOT_PY)], "bot.py", 5000),
        r"^bot\.py: holds 15 bytes but its header says 5000$",
    ),
    "a path given twice": (
        lambda: tar_bytes([*good_members(), file_info("bot.py", b"evil")]),
        r"^bot\.py: appears twice in the archive$",
    ),
    "a file inside a file": (
        lambda: tar_bytes([*good_members(), file_info("bot.py/x", b"x")]),
        r"^bot\.py/x: inside bot\.py, which is a file$",
    ),
    "no manifest": (
        lambda: tar_bytes([file_info("bot.py", BOT_PY)]),
        r"^no septet-bot\.toml at the root of the archive or inside its single top-level folder$",
    ),
    "manifest two folders deep": (
        lambda: tar_bytes([file_info("a/b/septet-bot.toml", manifest())]),
        r"^no septet-bot\.toml at the root",
    ),
    "manifests in two top-level folders": (
        lambda: tar_bytes(
            [file_info("a/septet-bot.toml", manifest()), file_info("b/septet-bot.toml", manifest())]
        ),
        r"^no septet-bot\.toml at the root",
    ),
    "manifest that is not TOML": (
        lambda: tar_bytes([file_info("septet-bot.toml", b"name = [unclosed\n")]),
        r"^septet-bot\.toml: not valid TOML",
    ),
    "manifest without a command": (
        lambda: tar_bytes([file_info("septet-bot.toml", manifest(command=""))]),
        r"^septet-bot\.toml: command must be a list of words",
    ),
    "manifest with a bad name": (
        lambda: tar_bytes([file_info("septet-bot.toml", manifest(name="../Evil"))]),
        r"^septet-bot\.toml: name must be 1-40 characters",
    ),
    "manifest with an unknown game id": (
        lambda: tar_bytes([file_info("septet-bot.toml", manifest(games='["oh-hell", "poker"]'))]),
        r"^septet-bot\.toml: unknown game 'poker' \(games: ",
    ),
    "not an archive: text": (
        lambda: b"print('hello')\n",
        r"^not an archive: expected \.tar\.gz, \.tar or \.zip",
    ),
    "not an archive: a PNG": (lambda: b"\x89PNG\r\n\x1a\n" + bytes(100), r"^not an archive"),
    "gzip of something else": (
        lambda: gzip.compress(b"just text " * 100),
        r"^a gzip file that does not hold a tar archive$",
    ),
    "gzip cut short": (lambda: tar_bytes(good_members())[:40], r"^corrupt gzip data"),
    "zip cut short": (lambda: zip_bytes([("septet-bot.toml", manifest())])[:60], r"^corrupt zip archive"),
    "empty bytes": (
        lambda: b"",
        r"^empty upload: expected a \.tar\.gz, \.tar or \.zip archive of a bot folder$",
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize("tried", list(BAD_ARCHIVES))
def test_a_bad_archive_is_refused_and_nothing_is_stored(
    tried: str, alice: User, archives: Path, scratch: Path
) -> None:
    build, reason = BAD_ARCHIVES[tried]
    data = build()
    with pytest.raises(ArchiveRejected, match=reason) as refused:
        bot_version_submit(owner=alice, archive=data)
    assert "\n" not in str(refused.value)
    assert not Bot.objects.exists() and not BotVersion.objects.exists()
    assert _files_under(archives) == []
    assert _files_under(scratch) == []


@pytest.mark.parametrize("tried", list(BAD_ARCHIVES))
def test_a_bad_archive_leaves_nothing_in_the_destination(tried: str, tmp_path: Path) -> None:
    build, reason = BAD_ARCHIVES[tried]
    destination = tmp_path / "out"
    destination.mkdir()
    with pytest.raises(ArchiveRejected, match=reason):
        unpack_archive(build(), destination)
    assert list(destination.iterdir()) == []
    with pytest.raises(ArchiveRejected, match=reason):
        unpack_archive(build(), tmp_path / "new")
    assert not (tmp_path / "new").exists()


# Whose bot it is, and failures after the checks ----------------------------------------------------


@pytest.mark.django_db
def test_someone_elses_bot_name_is_refused_and_nothing_is_stored(
    alice: User, bob: User, archives: Path, tmp_path: Path
) -> None:
    folder = random_copy(tmp_path)
    bot_version_submit(owner=alice, archive=pack_folder(folder))
    before = _files_under(archives)
    with pytest.raises(BotNameTaken, match=r"^the bot name 'my-random' belongs to another user") as refused:
        bot_version_submit(owner=bob, archive=pack_folder(folder))
    assert isinstance(refused.value, PermissionDenied)
    assert BotVersion.objects.count() == 1 and Bot.objects.get().owner == alice
    assert _files_under(archives) == before


@pytest.mark.django_db
def test_a_database_failure_after_the_file_is_written_removes_the_file(
    alice: User, archives: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(**fields: object) -> BotVersion:
        assert (archives / "my-random" / "v1.tar.gz").is_file()  # written before the row
        raise RuntimeError("database went away")

    monkeypatch.setattr(BotVersion.objects, "create", broken)
    with pytest.raises(RuntimeError, match="database went away"):
        bot_version_submit(owner=alice, archive=pack_folder(random_copy(tmp_path)))
    assert not Bot.objects.exists() and not BotVersion.objects.exists()
    assert _files_under(archives) == []


@pytest.mark.django_db(transaction=True)
def test_concurrent_first_submissions_of_one_bot_become_versions_1_and_2(
    alice: User, archives: Path, tmp_path: Path
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks (and serializes writers anyway); this needs PostgreSQL")
    packed = pack_folder(random_copy(tmp_path))
    start = threading.Barrier(4)
    numbers: list[int] = []
    errors: list[BaseException] = []

    def submit() -> None:
        try:
            start.wait(timeout=30)
            numbers.append(bot_version_submit(owner=alice, archive=packed).number)
        except BaseException as error:  # reported by the main thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=submit) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == [] and sorted(numbers) == [1, 2, 3, 4]
    assert Bot.objects.count() == 1
    assert sorted(path.name for path in (archives / "my-random").iterdir()) == [
        f"v{n}.tar.gz" for n in range(1, 5)
    ]


# Selectors ------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_bot_get_names_the_bot_it_could_not_find() -> None:
    with pytest.raises(Bot.DoesNotExist, match="no bot named 'nobody'"):
        bot_get(name="nobody")


@pytest.mark.django_db
def test_bot_versions_for_lists_only_that_bots_versions_newest_first(
    alice: User, archives: Path, tmp_path: Path
) -> None:
    mine = random_copy(tmp_path / "a", name="mine")
    other = random_copy(tmp_path / "b", name="other")
    for folder in (mine, other, mine):
        bot_version_submit(owner=alice, archive=pack_folder(folder))
    assert [str(version) for version in bot_versions_for(bot=bot_get(name="mine"))] == ["mine v2", "mine v1"]
