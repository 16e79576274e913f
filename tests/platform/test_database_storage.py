"""Archives and replays kept in the database (SEPTET_STORAGE=database), so that a worker on another
machine needs nothing from the centre but the network: real submissions, real bot processes, the
real site and Arena, the real database. The site's data folder and the worker's are different
folders here, and neither ever holds an archive or a replay.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from bot_versions import tar_folder, version_row
from django.db import connection
from django.test import Client
from platform_support import EXAMPLES, match_with

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from referee.engine import replay as replays
from referee.engine.match import play_match
from referee.engine.players import Player, RandomPlayer
from septet_platform.accounts.services import api_token_create
from septet_platform.blobs.backends import BlobCorrupt, DatabaseStorage
from septet_platform.blobs.models import Blob, BlobChunk
from septet_platform.blobs.selection import storage_backends
from septet_platform.blobs.stores import archive_store, replay_store
from septet_platform.bots.models import BotVersion
from septet_platform.bots.services import bot_version_submit
from septet_platform.ladders.services import ladders_ensure
from septet_platform.matches import services, storage
from septet_platform.matches.models import Match

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def database_storage(storage: tuple[Path, Path], settings: Any, tmp_path: Path) -> Iterator[Path]:
    """The database backend for archives and replays; the site's data folder (returned) is not
    the worker's, and the worker's unpacked cache is a folder of its own."""
    settings.STORAGES = {**settings.STORAGES, **storage_backends("database")}
    site = tmp_path / "site-data"
    settings.DATA_DIR = site
    settings.SEPTET_ARCHIVES_DIR = site / "archives"
    settings.SEPTET_REPLAYS_DIR = site / "replays"
    ladders_ensure()
    yield site
    assert not (site / "archives").exists() and not (site / "replays").exists(), "a file was left in a folder"


def _as_worker(settings: Any, tmp_path: Path) -> Path:
    """From here on this process is a worker on another machine: another data folder, its own
    unpacked cache, nothing of the site's."""
    worker = tmp_path / "worker-data"
    settings.DATA_DIR = worker
    settings.SEPTET_ARCHIVES_DIR = worker / "archives"
    settings.SEPTET_REPLAYS_DIR = worker / "replays"
    settings.SEPTET_UNPACKED_DIR = tmp_path / "worker-cache"
    return worker


def _submitted(owner: Any, name: str, example: str, *, edit: str = "") -> BotVersion:
    manifest = (
        (EXAMPLES / example / "septet-bot.toml")
        .read_text()
        .replace(f'name = "{example}"', f'name = "{name}"')
    )
    files = {"septet-bot.toml": manifest}
    if edit:
        files["bot.py"] = (EXAMPLES / example / "bot.py").read_text() + f"\n# {edit}\n"
    return bot_version_submit(owner=owner, archive=tar_folder(EXAMPLES / example, files))


def _blob_names(area: str) -> list[str]:
    return sorted(Blob.objects.filter(area=area).values_list("name", flat=True))


def test_a_bot_submitted_and_played_with_archives_and_replays_in_the_database_and_no_shared_folder(
    database_storage: Path, arena_address: str, settings: Any, tmp_path: Path, django_user_model: type
) -> None:
    owner = django_user_model.objects.create_user("author")
    versions = [
        _submitted(owner, "db-random", "random"),
        _submitted(owner, "db-greedy", "greedy"),
        _submitted(owner, "db-random-b", "random"),
    ]
    assert _blob_names("archives") == ["db-greedy/v1.tar.gz", "db-random-b/v1.tar.gz", "db-random/v1.tar.gz"]
    BotVersion.objects.filter(pk__in=[version.pk for version in versions]).update(
        status=BotVersion.Status.ACTIVE
    )

    worker = _as_worker(settings, tmp_path)
    match = match_with("oh-hell", versions, seed=5)
    assert services.match_play(match_id=match.pk, worker="far-away").outcome == "recorded"
    match.refresh_from_db()
    assert _blob_names("replays") == [match.replay]
    assert not (worker / "archives").exists() and not (worker / "replays").exists()
    cache = services.unpacked_folders()
    assert {version.archive_sha256 for version in versions} <= set(cache.digests()), "cached by SHA-256"
    assert cache.folder.is_relative_to(tmp_path / "worker-cache")

    # Read back through the site and the Arena, checked as a file is.
    settings.DATA_DIR = database_storage
    document = Client().get(f"/matches/{match.pk}/replay.json")
    assert document.status_code == 200 and document.json()["match_id"] == match.replay_match_id
    page = Client().get(f"/matches/{match.pk}/")
    assert page.status_code == 200 and "unreadable" not in page.content.decode()
    _, token = api_token_create(user=django_user_model.objects.create_user("reader"), name="cli")
    with grpc.insecure_channel(arena_address) as channel:
        chunks = list(
            arena_pb2_grpc.ArenaStub(channel).GetReplay(
                pb.GetReplayRequest(match_id=match.pk), metadata=[("authorization", f"Bearer {token}")]
            )
        )
    stored = replay_store().read_bytes(match.replay)
    assert len(stored) == match.replay_size
    assert replays.parse(stored, match.replay)["match_id"] == match.replay_match_id
    assert chunks, "the Arena sent the replay"


def _recorded_replay() -> Match:
    """A match played in this process (no bot processes) and recorded: its replay in the store."""
    table = uuid.uuid4().hex[:8]
    versions = [version_row("house", f"house-{table}-{seat}", is_house=True) for seat in range(3)]
    match = match_with("oh-hell", versions, seed=7)
    attempt = services.match_claim(match_id=match.pk, worker="w")
    assert attempt is not None
    players: list[Player] = [RandomPlayer(random.Random(seat)) for seat in range(3)]
    outcome = play_match("oh-hell", players, seed=match.seed, match_id=f"m-{table}")
    assert services.match_record(match_id=match.pk, attempt=attempt, outcome=outcome)
    match.refresh_from_db()
    return match


def test_a_damaged_blob_is_refused_on_every_read_with_a_clear_error(
    database_storage: Path, arena_address: str, django_user_model: type
) -> None:
    match = _recorded_replay()
    chunk = BlobChunk.objects.get(blob__area="replays", blob__name=match.replay)
    original = bytes(chunk.data)
    assert Client().get(f"/matches/{match.pk}/replay.json").status_code == 200
    _, token = api_token_create(user=django_user_model.objects.create_user("reader"), name="cli")

    def arena_code() -> grpc.StatusCode | None:
        with grpc.insecure_channel(arena_address) as channel:
            try:
                list(
                    arena_pb2_grpc.ArenaStub(channel).GetReplay(
                        pb.GetReplayRequest(match_id=match.pk),
                        metadata=[("authorization", f"Bearer {token}")],
                    )
                )
            except grpc.RpcError as error:
                return error.code()
        return None

    # One byte changed, the size kept: the blob's own checksum refuses it.
    changed = bytes([original[0] ^ 1]) + original[1:]
    BlobChunk.objects.filter(pk=chunk.pk).update(data=changed)
    with pytest.raises(BlobCorrupt, match="do not match their stored SHA-256"):
        replay_store().read_bytes(match.replay)
    response = Client().get(f"/matches/{match.pk}/replay.json")
    assert response.status_code == 404 and "SHA-256" in response.content.decode()
    assert arena_code() == grpc.StatusCode.DATA_LOSS

    # Truncated: the size refuses it.
    BlobChunk.objects.filter(pk=chunk.pk).update(data=original[:-10])
    with pytest.raises(BlobCorrupt, match=f"{len(original) - 10} bytes"):
        replay_store().read_bytes(match.replay)
    assert Client().get(f"/matches/{match.pk}/replay.json").status_code == 404
    assert arena_code() == grpc.StatusCode.DATA_LOSS

    # Changed bytes whose blob row was "fixed" to agree: the match's own record still refuses them.
    Blob.objects.filter(area="replays", name=match.replay).update(size=len(changed), sha256=_sha(changed))
    BlobChunk.objects.filter(pk=chunk.pk).update(data=changed)
    response = Client().get(f"/matches/{match.pk}/replay.json")
    assert response.status_code == 404 and "checksum" in response.content.decode()
    assert arena_code() == grpc.StatusCode.DATA_LOSS

    # Restored: served again.
    Blob.objects.filter(area="replays", name=match.replay).update(size=len(original), sha256=_sha(original))
    BlobChunk.objects.filter(pk=chunk.pk).update(data=original)
    assert Client().get(f"/matches/{match.pk}/replay.json").status_code == 200
    assert arena_code() is None


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def test_large_blobs_are_chunked_and_read_back_whole(database_storage: Path) -> None:
    store = archive_store()
    assert isinstance(store, DatabaseStorage)
    data = random.Random(1).randbytes(3 * (1 << 20) + 17)
    store.write_durably("big/v1.tar.gz", data)
    assert BlobChunk.objects.filter(blob__name="big/v1.tar.gz").count() == 4
    assert store.read_bytes("big/v1.tar.gz") == data and store.size("big/v1.tar.gz") == len(data)
    store.write_durably("big/v1.tar.gz", b"smaller")  # in place of the earlier bytes
    assert store.read_bytes("big/v1.tar.gz") == b"smaller" and store.listdir("big") == ([], ["v1.tar.gz"])
    BlobChunk.objects.filter(blob__name="big/v1.tar.gz").delete()
    with pytest.raises(BlobCorrupt, match="missing"):
        store.read_bytes("big/v1.tar.gz")
    store.delete("big/v1.tar.gz")
    with pytest.raises(FileNotFoundError):
        store.read_bytes("big/v1.tar.gz")


def test_quota_pruning_deletes_the_pruned_versions_blobs(
    database_storage: Path, settings: Any, django_user_model: type
) -> None:
    owner = django_user_model.objects.create_user("prolific")
    first = _submitted(owner, "db-pruned", "random", edit="v1")
    second = _submitted(owner, "db-pruned", "random", edit="v2")
    BotVersion.objects.filter(pk=first.pk).update(status=BotVersion.Status.RETIRED)
    settings.SEPTET_STORAGE_PER_USER = first.archive_bytes + second.archive_bytes + first.archive_bytes // 2
    third = _submitted(owner, "db-pruned", "random", edit="v3")
    first.refresh_from_db()
    assert first.archive_pruned is not None
    assert _blob_names("archives") == [second.archive, third.archive]


def test_the_health_check_tells_the_truth_about_the_database_storage(database_storage: Path) -> None:
    assert storage.replays_writable(fresh=True).ok and storage.storage_check()[1]
    assert not Blob.objects.exists(), "the probe left its blob"
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE blobs_blobchunk RENAME TO blobs_blobchunk_away")
    try:
        health = storage.replays_writable(fresh=True)
        assert not health.ok and "database" in health.reason and "matches are paused" in health.reason
        assert storage.storage_check() == ("storage", False, health.reason)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE blobs_blobchunk_away RENAME TO blobs_blobchunk")
    assert storage.replays_writable(fresh=True).ok
