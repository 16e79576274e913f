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

import base64
import os
import tempfile
from pathlib import Path
from typing import Any

import grpc
import pytest
from bot_versions import tar_folder, version_from_archive
from platform_support import EXAMPLES, match_with

from referee.botkit.protocol import arena_pb2 as pb
from referee.tools.botfolder import BotFolderError
from referee.tools.building import MiB, built_output_limit
from septet_platform.bots.archives import unpacked_bytes
from septet_platform.bots.models import BotVersion
from septet_platform.bots.qualification import bot_version_qualify
from septet_platform.bots.quota import StorageQuotaExceeded, storage_use
from septet_platform.bots.services import OFFLINE_HINT, bot_version_submit
from septet_platform.ladders.services import ladders_ensure
from septet_platform.matches import services
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.unpacked import UnpackedArchiveCorrupt


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


MEGABYTE_BUILD = """import os
with open("blob.bin", "wb") as out:
    out.write(os.urandom(1 << 20))   # within the build's own limit, past its owner's room
"""


@pytest.mark.django_db(transaction=True)
def test_a_built_archive_past_its_owners_quota_is_not_stored_and_the_build_says_why(
    django_user_model: type, platform_folders: Path, settings: Any
) -> None:
    # what was tried: a build writing 1 MiB (its limit is 32 MiB) when its owner has 64 KiB left
    owner = django_user_model.objects.create_user("roomless")
    upload = _with_build("roomless", MEGABYTE_BUILD)
    settings.SEPTET_STORAGE_PER_USER = len(upload) + 64 * 1024

    version = _qualified(bot_version_submit(owner=owner, archive=upload))

    assert version.build_status == BotVersion.Build.FAILED and version.built_archive == ""
    assert "the built folder was not stored: storage quota: " in version.build_log, version.build_log
    assert OFFLINE_HINT not in version.build_log
    assert list(_files(platform_folders / "archives")) == ["roomless/v1.tar.gz"]
    assert storage_use(owner_id=owner.pk).used == len(upload)


# A user's stored archives: a quota, old versions pruned first --------------------------------------


def _padded(name: str, number: int) -> bytes:
    """A plain random bot `name` with 300 KiB of incompressible padding (a version's archive)."""
    manifest = (
        f'name = "{name}"\ngames = ["oh-hell"]\ncommand = ["python", "bot.py", "--address", "{{address}}"]\n'
    )
    padding = base64.b64encode(os.urandom(300 * 1024)).decode()
    return tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest, f"padding-{number}.txt": padding})


def _status(version: BotVersion, status: str) -> None:
    """What qualification does to a version: ACTIVE when it passes, RETIRED when a newer one does."""
    BotVersion.objects.filter(pk=version.pk).update(status=status)


@pytest.mark.django_db(transaction=True)
def test_past_the_quota_old_archives_are_pruned_results_kept_then_submissions_refused(
    django_user_model: type, platform_folders: Path, settings: Any
) -> None:
    # what was tried: submitting version after version of one bot past its owner's storage quota
    # (the audit kept every version's archive, 199 MB each, with no limit per user)
    house = django_user_model.objects.create_user("house")
    opponents = [
        version_from_archive(house, name, tar_folder(EXAMPLES / "random")) for name in ("opp-a", "opp-b")
    ]
    owner = django_user_model.objects.create_user("hoarder")
    v1 = bot_version_submit(owner=owner, archive=_padded("hoarder", 1))
    settings.SEPTET_STORAGE_PER_USER = int(2.5 * v1.archive_bytes)  # room for two versions, not three
    _status(v1, BotVersion.Status.ACTIVE)
    match = match_with("oh-hell", [v1, *opponents])
    assert services.match_play(match_id=match.pk, worker="test").outcome == "recorded"
    match.refresh_from_db()
    replay = Path(settings.SEPTET_REPLAYS_DIR) / match.replay
    results = list(match.seats.order_by("seat").values_list("score", "rank", "forfeit_status"))
    v2 = bot_version_submit(owner=owner, archive=_padded("hoarder", 2))  # fits beside v1
    _status(v1, BotVersion.Status.RETIRED)
    _status(v2, BotVersion.Status.ACTIVE)
    assert storage_use(owner_id=owner.pk).used == v1.archive_bytes + v2.archive_bytes

    v3 = bot_version_submit(owner=owner, archive=_padded("hoarder", 3))  # v1's archive makes room

    v1.refresh_from_db()
    assert v1.archive_pruned is not None and v2.archive_pruned is None
    assert sorted(_files(platform_folders / "archives" / "hoarder")) == ["v2.tar.gz", "v3.tar.gz"]
    assert storage_use(owner_id=owner.pk).used == v2.archive_bytes + v3.archive_bytes
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and replay.is_file(), "the match and its replay are kept"
    assert list(match.seats.order_by("seat").values_list("score", "rank", "forfeit_status")) == results
    with pytest.raises(BotFolderError, match="archive pruned"):
        services.version_folder(BotVersion.objects.select_related("bot").get(pk=v1.pk))

    # v2 is active and v3 qualifies: nothing left to prune, so v4 is refused and nothing changes
    with pytest.raises(StorageQuotaExceeded, match="storage quota: your bots' stored archives take"):
        bot_version_submit(owner=owner, archive=_padded("hoarder", 4))
    assert BotVersion.objects.filter(bot__name="hoarder").count() == 3
    assert sorted(_files(platform_folders / "archives" / "hoarder")) == ["v2.tar.gz", "v3.tar.gz"]
    assert BotVersion.objects.get(pk=v3.pk).archive_pruned is None


@pytest.mark.django_db(transaction=True)
def test_a_version_with_a_match_still_to_play_keeps_its_archive_and_the_upload_is_refused_whole(
    django_user_model: type, platform_folders: Path, settings: Any
) -> None:
    # what was tried: a submission past the quota while the only old version has a match queued
    owner = django_user_model.objects.create_user("queued")
    v1 = bot_version_submit(owner=owner, archive=_padded("queued", 1))
    settings.SEPTET_STORAGE_PER_USER = int(2.5 * v1.archive_bytes)
    v2 = bot_version_submit(owner=owner, archive=_padded("queued", 2))
    _status(v1, BotVersion.Status.RETIRED)
    _status(v2, BotVersion.Status.ACTIVE)
    match_with("oh-hell", [v1, v2, v2])  # scheduled, not played yet

    with pytest.raises(StorageQuotaExceeded, match="would free only 0 bytes"):
        bot_version_submit(owner=owner, archive=_padded("queued", 3))

    assert BotVersion.objects.filter(archive_pruned__isnull=False).count() == 0
    assert sorted(_files(platform_folders / "archives" / "queued")) == ["v1.tar.gz", "v2.tar.gz"]


@pytest.mark.django_db(transaction=True)
def test_the_owner_reads_archive_pruned_and_the_arena_refuses_past_the_quota_as_exhausted(
    django_user_model: type, platform_folders: Path, settings: Any, arena: Any, client: Any
) -> None:
    # what was tried: SubmitBot past the quota twice: the first prunes v1, the second finds nothing
    from septet_platform.accounts.services import api_token_create

    owner = django_user_model.objects.create_user("shown")
    v1 = bot_version_submit(owner=owner, archive=_padded("shown", 1))
    settings.SEPTET_STORAGE_PER_USER = int(2.5 * v1.archive_bytes)
    v2 = bot_version_submit(owner=owner, archive=_padded("shown", 2))
    _status(v1, BotVersion.Status.RETIRED)
    _status(v2, BotVersion.Status.ACTIVE)
    _, token = api_token_create(user=owner, name="cli")
    metadata = [("authorization", f"Bearer {token}")]

    stored = arena.SubmitBot(iter([pb.SubmitBotChunk(data=_padded("shown", 3))]), metadata=metadata)
    with pytest.raises(grpc.RpcError) as refused:
        arena.SubmitBot(iter([pb.SubmitBotChunk(data=_padded("shown", 4))]), metadata=metadata)

    assert stored.version == 3
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused.value.details()
    assert refused.value.details().startswith("storage quota: your bots' stored archives take ")
    versions = {version.number: version for version in arena.GetBot(pb.GetBotRequest(name="shown")).versions}
    assert sorted(versions) == [1, 2, 3]
    assert [versions[number].archive_pruned for number in (1, 2, 3)] == [True, False, False]
    client.force_login(owner)
    bot_page = client.get("/bots/shown/").content.decode()
    assert bot_page.count("archive pruned") == 1, "v1's row, and only v1's"
    my_bots = client.get("/account/bots/").content.decode()
    assert "· archive pruned" in my_bots and "Stored archives: " in my_bots


# A worker unpacks a version once, into a bounded, read-only cache of its own ------------------------

PROBE = """import os, sys
results = {}
attempts = {
    "append": lambda: open("bot.py", "a").write("# changed"),
    "create": lambda: open("new-file.txt", "w").write("for the other seat"),
    "chmod": lambda: os.chmod("bot.py", 0o777),
    "rename": lambda: os.rename("probe.py", "moved.py"),
    "mkdir": lambda: os.mkdir("shared"),
}
for name, attempt in attempts.items():
    try:
        attempt()
        results[name] = "done"
    except OSError as error:
        results[name] = error.strerror
print("PROBE " + repr(sorted(results.items())), file=sys.stderr, flush=True)
exec(open("bot.py").read())
"""


@pytest.fixture
def worker_cache(settings: Any, tmp_path: Path) -> Path:
    """This test's own cache folder for the worker's unpacked versions."""
    settings.SEPTET_UNPACKED_DIR = tmp_path / "unpacked"
    return settings.SEPTET_UNPACKED_DIR


def _probe_version(owner: Any, name: str) -> BotVersion:
    command = 'command = ["python", "probe.py", "--address", "{address}"]'
    manifest = f'name = "{name}"\ngames = ["oh-hell"]\n{command}\n'
    archive = tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest, "probe.py": PROBE})
    return version_from_archive(owner, name, archive, games=["oh-hell"])


@pytest.mark.django_db(transaction=True)
def test_one_version_in_two_seats_and_two_matches_is_unpacked_once_read_only_on_the_workers_disk(
    django_user_model: type, platform_folders: Path, worker_cache: Path
) -> None:
    # what was tried: one version seated twice at a table, for two matches in a row, each of its
    # processes writing, creating, chmodding, renaming and making a folder in its bot folder
    owner = django_user_model.objects.create_user("twice")
    twice = _probe_version(owner, "twice")
    other = version_from_archive(owner, "other", tar_folder(EXAMPLES / "random"), games=["oh-hell"])
    cache = services.unpacked_folders()
    before = cache.unpacks

    first = match_with("oh-hell", [twice, other, twice], seed=11)
    second = match_with("oh-hell", [twice, twice, other], seed=12)
    Match.objects.filter(pk__in=[first.pk, second.pk]).update(rated=False)  # as a challenge seats it
    for match in (first, second):
        assert services.match_play(match_id=match.pk, worker="test").outcome == "recorded"

    assert cache.unpacks - before == 2, "one unpack per version, not per seat or match"
    folder = cache.folder / twice.archive_sha256
    assert folder.is_dir() and folder.resolve().is_relative_to(worker_cache.resolve())
    assert not (platform_folders / "data").exists(), "unpacked into the shared data folder"
    probes = [
        seat.log.text
        for seat in Seat.objects.filter(bot_version=twice).select_related("log").order_by("match", "seat")
    ]
    assert len(probes) == 4 and all("PROBE" in probe for probe in probes), probes
    assert not any("'done'" in probe for probe in probes), probes
    assert not Seat.objects.filter(match__in=[first, second]).exclude(forfeit_status="").exists()
    files = sorted(path.name for path in folder.rglob("*"))
    assert "new-file.txt" not in files and "shared" not in files and "probe.py" in files
    assert (folder / "bot.py").read_bytes() == (EXAMPLES / "random" / "bot.py").read_bytes()
    for path in [folder, *folder.rglob("*")]:
        assert path.stat().st_mode & 0o222 == 0, f"{path} is writable"


@pytest.mark.django_db(transaction=True)
def test_the_cache_keeps_its_bound_by_removing_the_least_recently_used_folder_no_bot_holds(
    django_user_model: type, platform_folders: Path, worker_cache: Path, settings: Any
) -> None:
    # what was tried: playing more versions than the cache may keep (the old cache kept every
    # version's folder forever, 199 MB each, in the data folder every worker shares)
    owner = django_user_model.objects.create_user("many")
    versions = [
        version_from_archive(owner, f"many-{number}", _padded(f"many-{number}", number), games=["oh-hell"])
        for number in range(3)
    ]
    cache = services.unpacked_folders()
    one = unpacked_bytes(services.version_folder(versions[0]))
    settings.SEPTET_UNPACKED_CACHE_BYTES = int(1.5 * one)  # room for one folder, not two

    playing = services.version_start(versions[0], sandbox=services.bot_sandbox())  # held while it runs
    try:
        services.version_folder(versions[1])  # not held: v1's folder stays, the bound is passed
        assert cache.digests() == [versions[0].archive_sha256, versions[1].archive_sha256]
        services.version_folder(versions[2])  # the least recently used one no bot holds goes
        assert cache.digests() == [versions[0].archive_sha256, versions[2].archive_sha256]
        assert playing.alive() and (cache.folder / versions[0].archive_sha256 / "bot.py").is_file()
    finally:
        playing.stop()
    services.version_folder(versions[1])  # once stopped, the playing bot's folder may go too

    assert cache.digests() == [versions[1].archive_sha256]
    kept = sorted(path.name for path in cache.folder.iterdir())
    assert kept == sorted([versions[1].archive_sha256, "lock"]), "a removed folder or scratch is left"
    assert cache.bytes_kept() <= settings.SEPTET_UNPACKED_CACHE_BYTES


@pytest.mark.django_db(transaction=True)
def test_an_archive_changed_on_disk_is_never_unpacked_and_its_match_is_voided_not_forfeited(
    django_user_model: type, platform_folders: Path, worker_cache: Path
) -> None:
    # what was tried: the stored archive replaced by other bytes after its digest was recorded
    owner = django_user_model.objects.create_user("changed")
    changed = version_from_archive(owner, "changed", tar_folder(EXAMPLES / "random"), games=["oh-hell"])
    others = [
        version_from_archive(owner, name, tar_folder(EXAMPLES / "random"), games=["oh-hell"])
        for name in ("fine-a", "fine-b")
    ]
    swapped = _probe_version(owner, "swapped")
    archives = platform_folders / "archives"
    (archives / changed.archive).write_bytes((archives / swapped.archive).read_bytes())
    cache = services.unpacked_folders()
    before = cache.unpacks

    with pytest.raises(UnpackedArchiveCorrupt, match="do not match its recorded SHA-256"):
        services.version_folder(changed)
    played = services.match_play(match_id=match_with("oh-hell", [changed, *others]).pk, worker="test")

    assert played.outcome == "voided", "our storage's failure, not the bot's"
    assert cache.unpacks - before == 0 and not (cache.folder / changed.archive_sha256).exists()
    assert not Seat.objects.filter(bot_version=changed).exclude(forfeit_status="").exists()
