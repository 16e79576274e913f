"""`manage.py storage_copy`: an existing platform's files moved from the data folder into the database
(and back), each checked against the size and SHA-256 its row recorded; run twice, it copies
nothing the second time; a damaged file is refused with nothing written for it. Real submissions,
a really recorded match, the real database; the site reads the copies once the setting switches.
"""

from __future__ import annotations

import hashlib
import io
import random
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
from bot_versions import tar_folder, version_row
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from platform_support import EXAMPLES, match_with

from referee.engine.match import play_match
from referee.engine.players import Player, RandomPlayer
from septet_platform.blobs.models import Blob, BlobChunk
from septet_platform.blobs.selection import storage_backends
from septet_platform.blobs.services import Outcome, storage_copy, stores_of
from septet_platform.blobs.stores import archive_store, read_checked, replay_store
from septet_platform.bots.models import BotVersion
from septet_platform.bots.services import bot_version_submit
from septet_platform.ladders.services import ladders_ensure
from septet_platform.matches import services
from septet_platform.matches.models import Match

pytestmark = pytest.mark.django_db(transaction=True)


class Platform:
    """A platform that kept its files in the data folder: three uploads, one built archive, one
    version pruned for its owner's quota (its files gone), two recorded matches' replays."""

    def __init__(self, owner: Any) -> None:
        ladders_ensure()
        self.upload = _submitted(owner, "copy-random", "random")
        self.built = _submitted(owner, "copy-greedy", "greedy")
        built = tar_folder(EXAMPLES / "greedy", {"BUILT": "the build's output\n"})
        self.built_name = f"{self.built.bot.name}/v1.built.tar.gz"
        archive_store().write_durably(self.built_name, built)
        BotVersion.objects.filter(pk=self.built.pk).update(
            build_status=BotVersion.Build.BUILT,
            built_archive=self.built_name,
            built_sha256=hashlib.sha256(built).hexdigest(),
            built_bytes=len(built),
        )
        self.other = _submitted(owner, "copy-random-b", "random")
        self.pruned = version_row(owner, "copy-pruned")  # its archive is on no disk
        BotVersion.objects.filter(pk=self.pruned.pk).update(archive_pruned=timezone.now())
        seated = [self.upload, self.built, self.other]
        BotVersion.objects.filter(pk__in=[v.pk for v in seated]).update(status=BotVersion.Status.ACTIVE)
        self.matches = [_recorded_match(seated, seed) for seed in (3, 4)]

    def archives(self) -> list[str]:
        return sorted([self.upload.archive, self.built.archive, self.other.archive, self.built_name])

    def replays(self) -> list[str]:
        return sorted(match.replay for match in self.matches)


def _submitted(owner: Any, name: str, example: str) -> BotVersion:
    manifest = (EXAMPLES / example / "septet-bot.toml").read_text()
    files = {"septet-bot.toml": manifest.replace(f'name = "{example}"', f'name = "{name}"')}
    return bot_version_submit(owner=owner, archive=tar_folder(EXAMPLES / example, files))


def _recorded_match(versions: list[BotVersion], seed: int) -> Match:
    """A match of `versions` played in this process (random players, no bot processes) and
    recorded: its replay in the store."""
    table = uuid.uuid4().hex[:8]
    match = match_with("oh-hell", versions, seed=seed)
    attempt = services.match_claim(match_id=match.pk, worker="w")
    assert attempt is not None
    players: list[Player] = [RandomPlayer(random.Random(seat)) for seat in range(3)]
    outcome = play_match("oh-hell", players, seed=match.seed, match_id=f"m-{table}")
    assert services.match_record(match_id=match.pk, attempt=attempt, outcome=outcome)
    match.refresh_from_db()
    return match


@pytest.fixture
def platform(storage: tuple[Path, Path], django_user_model: type) -> Platform:
    return Platform(django_user_model.objects.create_user("organiser"))


def _copy(to: str = "database") -> tuple[str, str]:
    """Runs the command as an organiser would: (its output, its error lines)."""
    out, err = io.StringIO(), io.StringIO()
    call_command("storage_copy", "--to", to, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _blobs(area: str) -> list[str]:
    return sorted(Blob.objects.filter(area=area).values_list("name", flat=True))


def _switch_to_database(settings: Any) -> None:
    settings.STORAGES = {**settings.STORAGES, **storage_backends("database")}


def test_every_named_file_is_copied_checked_and_a_second_run_copies_nothing(
    platform: Platform, storage: tuple[Path, Path], settings: Any
) -> None:
    out, err = _copy()

    assert "local -> database: 6 copied, 0 already there, 0 refused, 0 missing" in out, out
    assert "6 of 6 files" in out and err == ""
    assert _blobs("archives") == platform.archives(), "the uploads and the built archive, not the pruned"
    assert _blobs("replays") == platform.replays()

    again, _ = _copy()
    assert "0 copied, 6 already there, 0 refused, 0 missing" in again, again
    assert _blobs("archives") == platform.archives() and _blobs("replays") == platform.replays()

    # Switched, with the folder gone: every row finds its file, checked, through the site too.
    _switch_to_database(settings)
    for folder in storage:
        shutil.rmtree(folder)
    for version in (platform.upload, platform.built):
        version.refresh_from_db()
        read_checked(
            archive_store(), version.archive, size=version.archive_bytes, sha256=version.archive_sha256
        )
    built = BotVersion.objects.get(pk=platform.built.pk)
    read_checked(archive_store(), built.built_archive, size=built.built_bytes, sha256=built.built_sha256)
    for match in platform.matches:
        assert Client().get(f"/matches/{match.pk}/replay.json").status_code == 200
        assert len(replay_store().read_bytes(match.replay)) == match.replay_size


def test_a_damaged_file_is_refused_and_nothing_written_for_it_while_the_others_are_copied(
    platform: Platform, storage: tuple[Path, Path]
) -> None:
    archives, replays = storage
    changed = archives / platform.upload.archive
    data = changed.read_bytes()
    changed.write_bytes(bytes([data[0] ^ 1]) + data[1:])  # one byte, the size kept
    truncated = replays / platform.matches[0].replay
    replay = truncated.read_bytes()
    truncated.write_bytes(replay[:-10])
    (archives / platform.built_name).unlink()

    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError, match="2 files refused and 1 file missing"):
        call_command("storage_copy", "--to", "database", stdout=out, stderr=err)

    lines = err.getvalue().splitlines()
    assert any(
        line.startswith(f"refused: archives/{platform.upload.archive} (copy-random v1)") and "SHA-256" in line
        for line in lines
    ), lines
    assert any(
        line.startswith(f"refused: replays/{platform.matches[0].replay} (match {platform.matches[0].pk})")
        and "bytes" in line
        for line in lines
    ), lines
    assert any(line.startswith(f"missing: archives/{platform.built_name}") for line in lines), lines
    assert "3 copied, 0 already there, 2 refused, 1 missing" in out.getvalue()
    assert _blobs("archives") == sorted([platform.built.archive, platform.other.archive]), "none refused"
    assert _blobs("replays") == [platform.matches[1].replay]

    # Restored from a backup: the next run copies just those, and leaves the rest as it is.
    changed.write_bytes(data)
    truncated.write_bytes(replay)
    report = storage_copy(to="database")
    assert report.counts == {Outcome.COPIED: 2, Outcome.ALREADY_THERE: 3, Outcome.MISSING: 1}
    assert [(done.file.name, done.outcome) for done in report.problems] == [(platform.built_name, "missing")]


def test_a_damaged_copy_in_the_database_is_replaced_and_a_replay_without_a_checksum_is_taken_as_found(
    platform: Platform,
) -> None:
    _copy()
    chunk = BlobChunk.objects.get(blob__area="replays", blob__name=platform.matches[0].replay)
    BlobChunk.objects.filter(pk=chunk.pk).update(data=bytes(chunk.data)[:-1])
    Match.objects.filter(pk=platform.matches[1].pk).update(replay_sha256="", replay_size=None)

    out, _ = _copy()

    assert "1 copied, 5 already there, 0 refused, 0 missing" in out, out
    assert "1 had no checksum recorded and were taken as found" in out
    match = platform.matches[0]
    assert hashlib.sha256(stores_of("database")["replays"].read_bytes(match.replay)).hexdigest() == (
        match.replay_sha256
    )


def test_back_to_the_folder_from_the_database(
    platform: Platform, storage: tuple[Path, Path], settings: Any
) -> None:
    _copy()
    for folder in storage:
        shutil.rmtree(folder)

    out, _ = _copy(to="local")

    assert "database -> local: 6 copied" in out, out
    assert (
        sorted(str(path.relative_to(storage[0])) for path in storage[0].rglob("*.tar.gz"))
        == platform.archives()
    )
    assert sorted(path.name for path in storage[1].iterdir()) == platform.replays()
    assert "0 copied, 6 already there" in _copy(to="local")[0]
