"""Archives and replays kept where every machine reaches them, so that a worker on another machine
needs nothing from the centre but the network: in the database (SEPTET_STORAGE=database) and in an
S3 bucket (SEPTET_STORAGE=s3, a real S3 server over HTTP: `s3_support`). Real submissions, real bot
processes, the real site and Arena, the real database. The site's data folder and the worker's are
different folders here, and neither ever holds an archive or a replay. Each test runs for both
kinds unless it is about one kind's own records.
"""

from __future__ import annotations

import contextlib
import hashlib
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
from septet_platform.blobs.stores import archive_store, read_checked, replay_store
from septet_platform.bots.models import BotVersion
from septet_platform.bots.services import bot_version_submit
from septet_platform.ladders.services import ladders_ensure
from septet_platform.matches import services, storage
from septet_platform.matches.models import Match

pytestmark = pytest.mark.django_db(transaction=True)

SHARED_KINDS = ("database", "s3")
S3_PREFIX = "septet/test"


class Kind:
    """One SEPTET_STORAGE kind in use, and what a test does to its records behind the platform's
    back: list them, change a file's bytes, take the store away."""

    name = ""
    truncated = ""
    """What the store's own check says of a file cut short (a regular expression)."""
    outage_word = ""
    """A word the health check's reason names while the store is taken away."""

    def __init__(self, site: Path) -> None:
        self.site = site

    def names(self, area: str) -> list[str]:
        raise NotImplementedError

    def replace(self, area: str, name: str, data: bytes, *, agree: bool) -> None:
        """Puts `data` in place of the file's bytes: its store's own record of their size and
        digest kept as they were, or (`agree`) changed to match them."""
        raise NotImplementedError

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        """The store refuses every write meanwhile."""
        raise NotImplementedError
        yield


class DatabaseKind(Kind):
    name = "database"
    truncated = "{size} bytes"
    outage_word = "database"

    def names(self, area: str) -> list[str]:
        return sorted(Blob.objects.filter(area=area).values_list("name", flat=True))

    def replace(self, area: str, name: str, data: bytes, *, agree: bool) -> None:
        BlobChunk.objects.filter(blob__area=area, blob__name=name).update(data=data)  # one chunk: small files
        if agree:
            Blob.objects.filter(area=area, name=name).update(size=len(data), sha256=_sha(data))

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE blobs_blobchunk RENAME TO blobs_blobchunk_away")
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("ALTER TABLE blobs_blobchunk_away RENAME TO blobs_blobchunk")


class S3Kind(Kind):
    name = "s3"
    truncated = "do not match their stored SHA-256"  # S3 keeps the size itself: the digest tells
    outage_word = "NoSuchBucket"

    def __init__(self, site: Path, server: Any, bucket: str) -> None:
        super().__init__(site)
        self.server = server
        self.bucket = bucket

    def key(self, area: str, name: str) -> str:
        return f"{S3_PREFIX}/{area}/{name}"

    def names(self, area: str) -> list[str]:
        folder = self.key(area, "")
        return [key[len(folder) :] for key in self.server.keys(self.bucket) if key.startswith(folder)]

    def replace(self, area: str, name: str, data: bytes, *, agree: bool) -> None:
        """Written over with boto3, as anyone holding the bucket's keys could."""
        client = self.server.client()
        key = self.key(area, name)
        metadata = (
            {"sha256": _sha(data)} if agree else client.head_object(Bucket=self.bucket, Key=key)["Metadata"]
        )
        client.put_object(Bucket=self.bucket, Key=key, Body=data, Metadata=metadata)

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        """The bucket deleted (the server still answering: test_s3_storage.py stops a server)."""
        client = self.server.client()
        client.delete_bucket(Bucket=self.bucket)
        try:
            yield
        finally:
            client.create_bucket(Bucket=self.bucket)


@contextlib.contextmanager
def _kind_in_use(kind: str, request: pytest.FixtureRequest, settings: Any, tmp_path: Path) -> Iterator[Kind]:
    """`kind` for archives and replays; the site's data folder is not the worker's, and the
    worker's unpacked cache is a folder of its own. No file is left in a data folder."""
    site = tmp_path / "site-data"
    stored: Kind
    if kind == "s3":
        server = request.getfixturevalue("s3_server")
        bucket = server.new_bucket()
        backends = storage_backends("s3", s3=server.options(bucket, prefix=S3_PREFIX))
        stored = S3Kind(site, server, bucket)
    else:
        backends = storage_backends(kind)
        stored = DatabaseKind(site)
    settings.STORAGES = {**settings.STORAGES, **backends}
    settings.DATA_DIR = site
    settings.SEPTET_ARCHIVES_DIR = site / "archives"
    settings.SEPTET_REPLAYS_DIR = site / "replays"
    ladders_ensure()
    yield stored
    assert not (site / "archives").exists() and not (site / "replays").exists(), "a file was left in a folder"


@pytest.fixture(params=SHARED_KINDS)
def blob_storage(
    request: pytest.FixtureRequest, storage: tuple[Path, Path], settings: Any, tmp_path: Path
) -> Iterator[Kind]:
    """Each kind that needs no shared folder in turn."""
    with _kind_in_use(request.param, request, settings, tmp_path) as stored:
        yield stored


@pytest.fixture
def database_storage(
    request: pytest.FixtureRequest, storage: tuple[Path, Path], settings: Any, tmp_path: Path
) -> Iterator[Kind]:
    """The database kind (for the tests of its own rows and chunks)."""
    with _kind_in_use("database", request, settings, tmp_path) as stored:
        yield stored


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


def test_a_bot_submitted_and_played_with_archives_and_replays_in_the_store_and_no_shared_folder(
    blob_storage: Kind, arena_address: str, settings: Any, tmp_path: Path, django_user_model: type
) -> None:
    owner = django_user_model.objects.create_user("author")
    versions = [
        _submitted(owner, "db-random", "random"),
        _submitted(owner, "db-greedy", "greedy"),
        _submitted(owner, "db-random-b", "random"),
    ]
    assert blob_storage.names("archives") == [
        "db-greedy/v1.tar.gz",
        "db-random-b/v1.tar.gz",
        "db-random/v1.tar.gz",
    ]
    BotVersion.objects.filter(pk__in=[version.pk for version in versions]).update(
        status=BotVersion.Status.ACTIVE
    )

    worker = _as_worker(settings, tmp_path)
    match = match_with("oh-hell", versions, seed=5)
    assert services.match_play(match_id=match.pk, worker="far-away").outcome == "recorded"
    match.refresh_from_db()
    assert blob_storage.names("replays") == [match.replay]
    assert not (worker / "archives").exists() and not (worker / "replays").exists()
    cache = services.unpacked_folders()
    assert {version.archive_sha256 for version in versions} <= set(cache.digests()), "cached by SHA-256"
    assert cache.folder.is_relative_to(tmp_path / "worker-cache")

    # Read back through the site and the Arena, checked as a file is.
    settings.DATA_DIR = blob_storage.site
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
    blob_storage: Kind, arena_address: str, django_user_model: type
) -> None:
    match = _recorded_replay()
    original = replay_store().read_bytes(match.replay)
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

    # One byte changed, the size kept: the store's own checksum refuses it.
    changed = bytes([original[0] ^ 1]) + original[1:]
    blob_storage.replace("replays", match.replay, changed, agree=False)
    with pytest.raises(BlobCorrupt, match="do not match their stored SHA-256"):
        replay_store().read_bytes(match.replay)
    response = Client().get(f"/matches/{match.pk}/replay.json")
    assert response.status_code == 404 and "SHA-256" in response.content.decode()
    assert arena_code() == grpc.StatusCode.DATA_LOSS

    # Truncated: the size (the digest, where the store keeps the size itself) refuses it.
    blob_storage.replace("replays", match.replay, original[:-10], agree=False)
    with pytest.raises(BlobCorrupt, match=blob_storage.truncated.format(size=len(original) - 10)):
        replay_store().read_bytes(match.replay)
    assert Client().get(f"/matches/{match.pk}/replay.json").status_code == 404
    assert arena_code() == grpc.StatusCode.DATA_LOSS

    # Changed bytes whose store record was "fixed" to agree: the match's own record still refuses them.
    blob_storage.replace("replays", match.replay, changed, agree=True)
    assert replay_store().read_bytes(match.replay) == changed
    with pytest.raises(BlobCorrupt, match="recorded SHA-256"):
        read_checked(replay_store(), match.replay, size=match.replay_size or 0, sha256=match.replay_sha256)
    response = Client().get(f"/matches/{match.pk}/replay.json")
    assert response.status_code == 404 and "checksum" in response.content.decode()
    assert arena_code() == grpc.StatusCode.DATA_LOSS

    # Restored: served again.
    blob_storage.replace("replays", match.replay, original, agree=True)
    assert Client().get(f"/matches/{match.pk}/replay.json").status_code == 200
    assert arena_code() is None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_large_blobs_are_chunked_and_read_back_whole(database_storage: Kind) -> None:
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
    blob_storage: Kind, settings: Any, django_user_model: type
) -> None:
    owner = django_user_model.objects.create_user("prolific")
    first = _submitted(owner, "db-pruned", "random", edit="v1")
    second = _submitted(owner, "db-pruned", "random", edit="v2")
    BotVersion.objects.filter(pk=first.pk).update(status=BotVersion.Status.RETIRED)
    settings.SEPTET_STORAGE_PER_USER = first.archive_bytes + second.archive_bytes + first.archive_bytes // 2
    third = _submitted(owner, "db-pruned", "random", edit="v3")
    first.refresh_from_db()
    assert first.archive_pruned is not None
    assert blob_storage.names("archives") == sorted([second.archive, third.archive])


def test_the_health_check_tells_the_truth_about_the_storage(blob_storage: Kind) -> None:
    assert storage.replays_writable(fresh=True).ok and storage.storage_check()[1]
    assert blob_storage.names("replays") == [], "the probe left its file"
    with blob_storage.outage():
        health = storage.replays_writable(fresh=True)
        assert not health.ok and blob_storage.outage_word in health.reason
        assert "matches are paused" in health.reason
        assert storage.storage_check() == ("storage", False, health.reason)
        response = Client().get("/healthz")
        assert response.status_code == 503 and response.json()["checks"]["storage"] == health.reason
    assert storage.replays_writable(fresh=True).ok


def test_the_reliability_checker_reads_replays_from_the_database_and_reports_damage(
    database_storage: Kind,
) -> None:
    """The cluster's exactly-once check (benchmarks/reliability.py `check` with its
    DatabaseReplays, our own SQL over the blob tables) passes a recorded match, and fails it on
    purpose: a chunk's bytes changed behind the platform's back, then the blob deleted."""
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "reliability.py"
    spec = importlib.util.spec_from_file_location("reliability_benchmark", path)
    assert spec is not None and spec.loader is not None
    checker = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = checker
    spec.loader.exec_module(checker)

    match = _recorded_replay()

    def replay_findings() -> tuple[int, list[str]]:
        """Replays verified, and what was found of the match's replay (this match was recorded
        but never rated here: the rating's finding is not this test's)."""
        with connection.cursor() as cursor:
            findings = checker.check(cursor, checker.DatabaseReplays(cursor))
        return findings.replays_verified, [why for why in findings.lost.get(match.pk, []) if "replay" in why]

    assert replay_findings() == (1, [])

    chunk = BlobChunk.objects.filter(blob__area="replays", blob__name=match.replay).order_by("index").first()
    assert chunk is not None
    changed = bytearray(bytes(chunk.data))
    changed[len(changed) // 2] ^= 0xFF
    BlobChunk.objects.filter(pk=chunk.pk).update(data=bytes(changed))
    verified, found = replay_findings()
    assert verified == 0 and len(found) == 1 and "SHA-256" in found[0]

    Blob.objects.filter(area="replays", name=match.replay).delete()
    verified, found = replay_findings()
    assert verified == 0 and len(found) == 1 and "missing" in found[0]
