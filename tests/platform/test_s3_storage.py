"""SEPTET_STORAGE=s3 on its own: where the objects go, names that cannot leave the prefix, objects
changed behind the platform's back, and clear errors when the extra, the bucket or the server is
missing. Against moto's S3 server over HTTP (`s3_support`); the behaviour the s3 kind shares with
the database kind (a match played, damaged replays, quota pruning, /healthz) is tested for both in
test_database_storage.py.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bot_versions import tar_folder
from django.core.exceptions import ImproperlyConfigured, SuspiciousFileOperation
from django.core.files.storage import storages
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from platform_support import EXAMPLES

from septet_platform.blobs import selection
from septet_platform.blobs.backends import BlobCorrupt, StorageUnavailable
from septet_platform.blobs.checks import UNREACHABLE, storage_reachable
from septet_platform.blobs.selection import ARCHIVES, REPLAYS, storage_backends
from septet_platform.blobs.stores import archive_store, read_checked, replay_store
from septet_platform.bots.models import BotVersion
from septet_platform.bots.services import bot_version_submit
from septet_platform.matches import storage as replay_health

pytestmark = pytest.mark.django_db(transaction=True)

REPO = Path(__file__).resolve().parents[2]
PREFIX = "platforms/one"


def _use_bucket(settings: Any, server: Any, bucket: str, **options: Any) -> None:
    settings.STORAGES = {
        **settings.STORAGES,
        **storage_backends("s3", s3=server.options(bucket, prefix=PREFIX, **options)),
    }


@pytest.fixture
def bucket(s3_server: Any, storage: tuple[Path, Path], settings: Any) -> str:
    """A bucket of its own, the platform's archives and replays in it under PREFIX."""
    name: str = s3_server.new_bucket()
    _use_bucket(settings, s3_server, name)
    return name


def _submitted(owner: Any, name: str) -> BotVersion:
    manifest = (EXAMPLES / "random" / "septet-bot.toml").read_text()
    files = {"septet-bot.toml": manifest.replace('name = "random"', f'name = "{name}"')}
    return bot_version_submit(owner=owner, archive=tar_folder(EXAMPLES / "random", files))


def test_objects_are_kept_whole_under_the_prefix_with_their_digest(
    s3_server: Any, bucket: str, django_user_model: type
) -> None:
    version = _submitted(django_user_model.objects.create_user("author"), "s3-random")
    replay_store().write_durably("7-a1.json.gz", b"\x1f\x8b replay bytes")
    assert s3_server.keys(bucket) == [
        f"{PREFIX}/archives/s3-random/v1.tar.gz",
        f"{PREFIX}/replays/7-a1.json.gz",
    ]

    stored = s3_server.client().head_object(Bucket=bucket, Key=f"{PREFIX}/archives/s3-random/v1.tar.gz")
    assert stored["ContentLength"] == version.archive_bytes
    assert stored["Metadata"] == {"sha256": version.archive_sha256}
    replay = s3_server.client().head_object(Bucket=bucket, Key=f"{PREFIX}/replays/7-a1.json.gz")
    # Never labelled gzip-encoded: nothing on the way may decompress the bytes that were hashed.
    assert replay["ContentType"] == "application/octet-stream" and "ContentEncoding" not in replay

    archives = archive_store()
    assert archives.listdir("") == (["s3-random"], [])
    assert archives.listdir("s3-random") == ([], ["v1.tar.gz"])
    assert archives.exists("s3-random/v1.tar.gz") and not archives.exists("s3-random/v2.tar.gz")
    assert archives.size("s3-random/v1.tar.gz") == version.archive_bytes
    with pytest.raises(FileNotFoundError, match="not in the S3 bucket"):
        archives.read_bytes("s3-random/v2.tar.gz")
    archives.write_durably("s3-random/v1.tar.gz", b"in place of the earlier bytes")
    assert archives.read_bytes("s3-random/v1.tar.gz") == b"in place of the earlier bytes"
    archives.discard("s3-random/v1.tar.gz")
    archives.discard("s3-random/v1.tar.gz")  # a missing file: nothing
    assert s3_server.keys(bucket) == [f"{PREFIX}/replays/7-a1.json.gz"]


@pytest.mark.parametrize(
    "name", ["../escaped", "a/../../escaped", "/absolute", "a//b", "./a", "..\\escaped", "a\x00b", ""]
)
def test_a_name_that_would_leave_the_prefix_is_refused_before_any_request(
    s3_server: Any, bucket: str, name: str
) -> None:
    store = replay_store()
    for use in (
        lambda: store.write_durably(name, b"x"),
        lambda: store.read_bytes(name),
        lambda: store.delete(name),
        lambda: store.exists(name),
        lambda: store.size(name),
    ):
        with pytest.raises(SuspiciousFileOperation):
            use()
    assert s3_server.keys(bucket) == []


def test_a_prefix_that_could_name_other_keys_is_refused_at_start() -> None:
    for prefix in ("../other", "a/../b", "a//b", "a\\b"):
        with pytest.raises(ImproperlyConfigured, match="SEPTET_S3_PREFIX"):
            storage_backends("s3", s3={"bucket": "b", "prefix": prefix})
    entries = storage_backends("s3", s3={"bucket": "b", "prefix": "/a/b/"})
    assert entries[REPLAYS]["OPTIONS"]["prefix"] == "a/b"


def test_an_archive_changed_behind_the_platforms_back_is_refused_on_read(
    s3_server: Any, bucket: str, django_user_model: type
) -> None:
    version = _submitted(django_user_model.objects.create_user("author"), "s3-changed")
    key = f"{PREFIX}/archives/{version.archive}"
    original = s3_server.client().get_object(Bucket=bucket, Key=key)["Body"].read()

    def read() -> bytes:
        return read_checked(
            archive_store(), version.archive, size=version.archive_bytes, sha256=version.archive_sha256
        )

    assert read() == original
    changed = bytes([original[0] ^ 1]) + original[1:]
    # Written over with boto3 and no digest (as `aws s3 cp` would): the version's record refuses it.
    s3_server.client().put_object(Bucket=bucket, Key=key, Body=changed)
    with pytest.raises(BlobCorrupt, match="recorded SHA-256"):
        read()
    # Written over keeping the object's digest: the store's own check refuses it first.
    s3_server.client().put_object(
        Bucket=bucket, Key=key, Body=changed, Metadata={"sha256": version.archive_sha256}
    )
    with pytest.raises(BlobCorrupt, match="do not match their stored SHA-256"):
        read()
    # Lengthened, its digest "fixed" to agree: the recorded size refuses it.
    longer = original + b"\0"
    s3_server.client().put_object(
        Bucket=bucket, Key=key, Body=longer, Metadata={"sha256": hashlib.sha256(longer).hexdigest()}
    )
    with pytest.raises(BlobCorrupt, match=f"has {len(longer)} bytes, {len(original)} were stored"):
        read()


def test_a_server_that_stops_answering_is_a_clear_error_at_start_and_on_every_use(
    storage: tuple[Path, Path], settings: Any, django_user_model: type
) -> None:
    pytest.importorskip("moto.server")
    from s3_support import S3Server

    server = S3Server()
    try:
        bucket = server.new_bucket()
        _use_bucket(settings, server, bucket, connect_timeout=1.0, attempts=1)
        replay_store().write_durably("1-a1.json.gz", b"replay")
        assert storage_reachable() == [] and replay_health.replays_writable(fresh=True).ok
    finally:
        server.stop()

    # At start: Django's system check (django-admin migrate, arena, check) names the endpoint.
    (error,) = storage_reachable()
    assert error.id == UNREACHABLE and "Could not connect" in error.msg and server.endpoint in error.msg
    with pytest.raises(SystemCheckError, match=UNREACHABLE):
        call_command("check")

    # On use: an OSError naming the bucket, so matches pause and /healthz says why.
    with pytest.raises(StorageUnavailable, match=f"cannot be read from the S3 bucket '{bucket}'"):
        replay_store().read_bytes("1-a1.json.gz")
    with pytest.raises(StorageUnavailable, match="Could not connect to the endpoint URL"):
        replay_store().write_durably("2-a1.json.gz", b"replay")
    health = replay_health.replays_writable(fresh=True)
    assert not health.ok and "Could not connect" in health.reason and "matches are paused" in health.reason
    owner = django_user_model.objects.create_user("author")
    with pytest.raises(StorageUnavailable):
        _submitted(owner, "s3-unstored")
    assert not BotVersion.objects.exists(), "a version was recorded without its archive"


def test_the_s3_kind_without_its_extra_or_a_bucket_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ImproperlyConfigured, match="SEPTET_S3_BUCKET"):
        storage_backends("s3", s3={"bucket": " "})
    real_find_spec = selection.importlib.util.find_spec
    monkeypatch.setattr(
        selection.importlib.util,
        "find_spec",
        lambda name, *rest: None if name == "storages" else real_find_spec(name, *rest),
    )
    with pytest.raises(ImproperlyConfigured, match=r"s3 extra \(storages not installed\).*septet\[s3\]"):
        storage_backends("s3", s3={"bucket": "b"})


def _started(data: Path, **environment: str) -> subprocess.CompletedProcess[str]:
    """`manage.py check` in a process of its own, as a deploy's first step starts one."""
    env = {**os.environ, "SEPTET_STORAGE": "s3", "SEPTET_DATA_DIR": str(data), **environment}
    return subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "check"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_process_started_with_the_s3_kind_checks_its_bucket(s3_server: Any, tmp_path: Path) -> None:
    bucket = s3_server.new_bucket()
    answers = {
        "SEPTET_S3_BUCKET": bucket,
        "SEPTET_S3_ENDPOINT_URL": s3_server.endpoint,
        "SEPTET_S3_REGION": "us-east-1",
        "SEPTET_S3_ACCESS_KEY_ID": "k",
        "SEPTET_S3_SECRET_ACCESS_KEY": "s",
    }
    started = _started(tmp_path, **answers)
    assert started.returncode == 0, started.stderr
    missing = _started(tmp_path, **{**answers, "SEPTET_S3_BUCKET": "septet-no-such-bucket"})
    assert missing.returncode != 0 and UNREACHABLE in missing.stderr
    assert "SEPTET_S3_BUCKET" in missing.stderr, "the hint names the settings to look at"
    unnamed = _started(tmp_path, **{**answers, "SEPTET_S3_BUCKET": ""})
    assert unnamed.returncode != 0 and "needs the bucket's name in SEPTET_S3_BUCKET" in unnamed.stderr


def test_both_stores_share_one_bucket_and_one_check(s3_server: Any, bucket: str) -> None:
    archives, replays = storages[ARCHIVES], storages[REPLAYS]
    assert (archives.bucket_name, archives.location) == (bucket, f"{PREFIX}/archives")
    assert (replays.bucket_name, replays.location) == (bucket, f"{PREFIX}/replays")
    assert storage_reachable() == []
