"""A submitted version's build, attacked through the real intake path (bot_version_submit, then
bot_version_qualify as the qualification task runs it) with the real sandbox and real archives.

A build runs once, at intake, offline, on a copy in a size-limited tmpfs; the host reads back only
a tar it checks like an upload; matches play the built archive unpacked read-only and never build.
Each test performs one attack of issue 16's audit and asserts it is contained with nothing changed.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import stat
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bot_versions import tar_folder
from sandbox_helpers import EXAMPLES, processes, tree_digest

from referee.tools.botfolder import start_bot
from referee.tools.packing import pack_folder
from referee.tools.sandbox import Sandbox
from septet_platform.bots.models import BotVersion
from septet_platform.bots.qualification import bot_version_qualify
from septet_platform.bots.services import bot_version_submit
from septet_platform.ladders.models import Ladder
from septet_platform.ladders.services import ladders_ensure
from septet_platform.matches import services
from septet_platform.matches.models import Match, Seat

pytestmark = pytest.mark.django_db(transaction=True)
MiB = 1 << 20


@pytest.fixture(autouse=True)
def platform_folders(settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Private archive, data and build-cache folders; the ladders exist."""
    settings.SEPTET_ARCHIVES_DIR = tmp_path / "archives"
    settings.SEPTET_REPLAYS_DIR = tmp_path / "replays"
    settings.DATA_DIR = tmp_path / "data"
    monkeypatch.setenv("SEPTET_BUILD_CACHE", str(tmp_path / "build-cache"))
    ladders_ensure()
    return tmp_path


def _archive(name: str, build_py: str, extra: dict[str, str] | None = None) -> bytes:
    """The random example renamed `name`, with `build.py` as its build (`python build.py`)."""
    manifest = (
        f'name = "{name}"\ngames = ["oh-hell"]\n'
        'command = ["python", "bot.py", "--address", "{address}"]\n'
        'build = ["python", "build.py"]\n'
    )
    files = {"septet-bot.toml": manifest, "build.py": build_py, **(extra or {})}
    return tar_folder(EXAMPLES / "random", files)


def _submitted(owner: Any, name: str, build_py: str, extra: dict[str, str] | None = None) -> BotVersion:
    return bot_version_submit(owner=owner, archive=_archive(name, build_py, extra))


def _qualified(version: BotVersion) -> BotVersion:
    bot_version_qualify(version_id=version.pk)
    return BotVersion.objects.select_related("bot").get(pk=version.pk)


def _built_members(version: BotVersion, archives: Path) -> list[tarfile.TarInfo]:
    with tarfile.open(archives / version.built_archive) as archive:
        return archive.getmembers()


# Links: nothing the build leaves is followed -------------------------------------------------------

PLANT_LINKS = """import json, os, pathlib
target = json.load(open("target.json"))["path"]
for path in list(pathlib.Path(".").rglob("*")) + [pathlib.Path(".septet-build")]:
    if path.is_file() or not path.exists():
        path.unlink(missing_ok=True)
        path.symlink_to(target)            # every file it can, and the old stamp, now point outside
pathlib.Path("node_modules/.bin").mkdir(parents=True)
pathlib.Path("node_modules/.bin/tool").symlink_to(target)
pathlib.Path("escape").symlink_to("/")
"""


def test_a_build_that_replaces_its_files_by_links_to_a_root_file_changes_nothing_outside(
    django_user_model: type, platform_folders: Path
) -> None:
    # what was tried: every file of the folder, the former stamp .septet-build, node_modules/.bin
    # and a folder link made symlinks to a 0600 root-owned file outside (the audit's overwrite)
    secret = Path(tempfile.mkdtemp(prefix="septet-secret-")) / "root-only"
    secret.write_bytes(b"root's file, untouched\n")
    secret.chmod(0o600)
    before = (secret.read_bytes(), secret.stat())
    owner = django_user_model.objects.create_user("mallory")
    version = _submitted(owner, "linker", PLANT_LINKS, {"target.json": json.dumps({"path": str(secret)})})

    version = _qualified(version)

    after = secret.stat()
    assert secret.read_bytes() == before[0], "the root file was written through a link"
    assert (after.st_mode, after.st_uid, after.st_mtime_ns) == (
        before[1].st_mode,
        before[1].st_uid,
        before[1].st_mtime_ns,
    )
    assert version.builds == 1
    assert version.build_status == BotVersion.Build.FAILED  # its manifest became a link: dropped
    assert version.status == BotVersion.Status.FAILED
    assert "septet-bot.toml" in version.build_log and len(version.error_log.encode()) <= 4096
    assert version.built_archive == ""
    leftovers = [path for path in platform_folders.rglob("*") if path.is_symlink()]
    assert leftovers == [], "a link the build made reached the host"


LINKS_BESIDE_A_GOOD_BOT = """import pathlib
pathlib.Path("node_modules/.bin").mkdir(parents=True)
pathlib.Path("node_modules/left-pad.js").write_text("module.exports = 1\\n")
pathlib.Path("node_modules/.bin/left-pad").symlink_to("../left-pad.js")
pathlib.Path("passwd").symlink_to("/etc/passwd")
"""


def test_links_a_build_makes_beside_a_good_bot_are_dropped_and_the_bot_qualifies(
    django_user_model: type, platform_folders: Path
) -> None:
    # what was tried: npm-style node_modules/.bin links and a link to /etc/passwd next to a good bot
    owner = django_user_model.objects.create_user("nora")
    version = _qualified(_submitted(owner, "npmish", LINKS_BESIDE_A_GOOD_BOT))

    assert version.status == BotVersion.Status.ACTIVE, version.error_log
    members = _built_members(version, platform_folders / "archives")
    names = {member.name for member in members}
    assert "node_modules/left-pad.js" in names
    assert "passwd" not in names and "node_modules/.bin/left-pad" not in names
    assert all(member.isfile() or member.isdir() for member in members)


# Network: a build has none -------------------------------------------------------------------------

REACH = """import json, socket
result = {}
for port in json.load(open("ports.json")):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        result[port] = "connected"
    except OSError as error:
        result[port] = type(error).__name__
open("reached.json", "w").write(json.dumps(result))
"""


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.running:
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self.running = False
        self.thread.join()
        self.server.close()


@pytest.fixture
def listeners() -> Iterator[list[Listener]]:
    opened = [Listener(), Listener()]
    yield opened
    for listener in opened:
        listener.close()


def test_a_build_reaches_no_listener_on_the_host(
    django_user_model: type, platform_folders: Path, listeners: list[Listener]
) -> None:
    # what was tried: TCP connections from the build to two listeners this test started on
    # 127.0.0.1 and to the test's PostgreSQL (5432) and Redis (6379)
    ports = [listener.port for listener in listeners] + [5432, 6379]
    owner = django_user_model.objects.create_user("eve")
    version = _qualified(_submitted(owner, "reacher", REACH, {"ports.json": json.dumps(ports)}))

    assert [listener.accepted for listener in listeners] == [0, 0], "the build connected to the host"
    assert version.build_status == BotVersion.Build.BUILT
    with tarfile.open(platform_folders / "archives" / version.built_archive) as archive:
        member = archive.extractfile("reached.json")
        assert member is not None
        reached = json.loads(member.read())
    assert set(reached) == {str(port) for port in ports}
    assert "connected" not in reached.values(), reached


# Once: however many matches ------------------------------------------------------------------------

STAMPED = """import os, pathlib
pathlib.Path("built.txt").write_text(os.urandom(16).hex())   # a second build would change it
stamp = pathlib.Path(".septet-build")
stamp.unlink(missing_ok=True)
stamp.symlink_to("/dev/null")   # the audit's trick: a stamp that never sticks
"""


def _match_of(versions: list[BotVersion], seed: int) -> Match:
    ladder = Ladder.objects.get(game="oh-hell", pool=Ladder.Pool.SANDBOXED)
    match = Match.objects.create(ladder=ladder, seed=seed)
    for seat, version in enumerate(versions):
        Seat.objects.create(match=match, seat=seat, bot_version=version)
    return match


def test_a_version_is_built_once_however_many_matches_it_plays_and_its_folder_never_changes(
    django_user_model: type, platform_folders: Path
) -> None:
    # what was tried: playing a built version in several rated matches (the audit saw 179 builds)
    owner = django_user_model.objects.create_user("olga")
    version = _qualified(_submitted(owner, "once", STAMPED))
    assert version.status == BotVersion.Status.ACTIVE, version.error_log
    others = [
        _qualified(bot_version_submit(owner=_user(django_user_model, name), archive=_plain(name)))
        for name in ("plain-a", "plain-b")
    ]
    folder = services.version_folder(version)
    before = tree_digest(folder)

    for seed in (1, 2):
        played = services.match_play(match_id=_match_of([version, *others], seed).pk, worker="test")
        assert played.outcome == "recorded"

    assert tree_digest(folder) == before, "the folder changed between matches"
    version.refresh_from_db()
    assert version.builds == 1, "the version was built again for a match"
    assert services.version_folder(version) == folder
    assert Seat.objects.filter(bot_version=version, forfeit_status="").count() == 2


def _user(model: Any, name: str) -> Any:
    return model.objects.create_user(name)


def _plain(name: str) -> bytes:
    command = 'command = ["python", "bot.py", "--address", "{address}"]'
    manifest = f'name = "{name}"\ngames = ["oh-hell"]\n{command}\n'
    return tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest})


# Limits: disk in total, time ---------------------------------------------------------------------

FILL_DISK = """import os
import shutil
for number in range(3):
    with open(f"big-{number}.bin", "wb") as out:
        for _ in range(512):
            out.write(b"x" * (1 << 20))   # 3 x 512 MiB, as in the audit
"""


def test_a_build_writing_three_times_512_mib_is_stopped_by_its_total_disk_limit(
    django_user_model: type, platform_folders: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what was tried: a build writing 3 x 512 MiB into its folder, under a 64 MiB build budget
    settings.SEPTET_BUILD_DISK_BYTES = 64 * MiB
    scratch = platform_folders / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # the intake's scratch folders go here
    owner = django_user_model.objects.create_user("filler")
    version = _qualified(_submitted(owner, "filler", FILL_DISK))

    assert version.build_status == BotVersion.Build.FAILED and version.status == BotVersion.Status.FAILED
    assert "64 MiB of disk" in version.build_log, version.build_log
    stored = sorted(path.name for path in (platform_folders / "archives").rglob("*") if path.is_file())
    assert stored == ["v1.tar.gz"], "only the upload is stored"
    assert not (platform_folders / "data").exists() or not any((platform_folders / "data").rglob("big-*"))
    assert os.listdir(scratch) == [], "the build's scratch was left on disk"


SLEEPER = """import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3601)"])
time.sleep(3600)
"""


def test_a_build_that_sleeps_past_its_limit_fails_the_version_and_holds_no_match(
    django_user_model: type, platform_folders: Path, settings: Any
) -> None:
    # what was tried: a build that sleeps (the audit held both worker slots past the match lease)
    settings.SEPTET_BUILD_SECONDS = 3
    owner = django_user_model.objects.create_user("sloth")
    others = [
        _qualified(bot_version_submit(owner=_user(django_user_model, name), archive=_plain(name)))
        for name in ("plain-c", "plain-d", "plain-e")
    ]
    pending = _submitted(owner, "sloth", SLEEPER)
    finished: dict[str, Any] = {}

    def qualify() -> None:
        started = time.monotonic()
        finished["version"] = _qualified(pending)
        finished["seconds"] = time.monotonic() - started

    qualifying = threading.Thread(target=qualify)
    qualifying.start()
    time.sleep(0.5)  # the build is running now
    started = time.monotonic()
    played = services.match_play(match_id=_match_of(others, 3).pk, worker="test")
    match_seconds = time.monotonic() - started
    qualifying.join(timeout=60)

    assert played.outcome == "recorded" and match_seconds < 30
    version = finished["version"]
    assert version.status == BotVersion.Status.FAILED
    assert "ran past its limit of 3 s" in version.error_log, version.error_log
    assert finished["seconds"] < 30
    assert not [cmd for _, cmd in processes().values() if "time.sleep(3601)" in cmd], "the build lives on"
    stored = sorted(path.name for path in (platform_folders / "archives" / "sloth").iterdir())
    assert stored == ["v1.tar.gz"] and version.built_archive == "", "only the upload is stored"


# The playing bot: a read-only folder, the build long gone ----------------------------------------

SIGNAL_BOT = """import fcntl, os, pathlib, sys
results = {}
for name in ("left-by-build.txt", "bot.py", "new-file.txt"):
    try:
        with open(name, "a") as out:
            out.write("signal")
        results[name] = "written"
    except OSError as error:
        results[name] = error.strerror
try:
    with open("left-by-build.txt") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        results["flock"] = "locked"
except OSError as error:
    results["flock"] = error.strerror
print("PROBE " + repr(sorted(results.items())), file=sys.stderr, flush=True)
sys.argv = [sys.argv[0]] + sys.argv[1:]
exec(open("bot.py").read())
"""

LEAVE_A_FILE = """import pathlib, subprocess, sys
pathlib.Path("left-by-build.txt").write_text("for the bot")
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # a would-be partner
"""


def test_a_playing_bot_cannot_write_its_folder_and_its_build_is_gone(
    django_user_model: type, platform_folders: Path
) -> None:
    # what was tried: the build leaves a file and a background process; the bot then writes to its
    # folder and flocks the build's file to signal (finding 5: build and bot shared one folder)
    owner = django_user_model.objects.create_user("signal")
    manifest = (
        'name = "signal"\ngames = ["oh-hell"]\n'
        'command = ["python", "probe.py", "--address", "{address}"]\nbuild = ["python", "build.py"]\n'
    )
    archive = tar_folder(
        EXAMPLES / "random", {"septet-bot.toml": manifest, "build.py": LEAVE_A_FILE, "probe.py": SIGNAL_BOT}
    )
    version = _qualified(bot_version_submit(owner=owner, archive=archive))
    assert version.status == BotVersion.Status.ACTIVE, version.error_log
    assert not [cmd for _, cmd in processes().values() if "time.sleep(600)" in cmd], "the build lives on"

    folder = services.version_folder(version)
    for path in [folder, *folder.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o222 == 0 and path.stat().st_uid == os.geteuid(), f"{path}: {oct(mode)}"
    before = tree_digest(folder)
    with start_bot(folder, sandbox=Sandbox()) as bot:
        probe = bot.stderr_tail()
    assert "PROBE" in probe and "'written'" not in probe, probe  # bot.py, the build's file, a new one
    assert "'locked'" not in probe, probe  # and no partner to signal to: the build's processes are gone
    assert tree_digest(folder) == before


# Logs: bounded for every writer ------------------------------------------------------------------

LOUD_BUILD = """import sys
for number in range(20):
    sys.stderr.write(str(number) * (3 * (1 << 20)) + "\\n")   # 20 lines, 60 MiB, no newline inside
sys.exit(1)
"""

LOUD_BOT = """import sys
for number in range(20):
    sys.stderr.write(str(number) * (3 * (1 << 20)) + "\\n")
sys.exit(3)
"""


def test_a_bot_printing_64_mib_at_build_and_at_start_leaves_a_few_kib_and_its_owner_reads_it(
    django_user_model: type, platform_folders: Path, arena_address: str
) -> None:
    # what was tried: 20 lines of 3 MiB each, once from the build and once from the starting bot
    import grpc

    from referee.botkit.protocol import arena_pb2 as pb
    from referee.botkit.protocol import arena_pb2_grpc
    from septet_platform.accounts.services import api_token_create

    owner = django_user_model.objects.create_user("loud")
    at_build = _qualified(_submitted(owner, "loud", LOUD_BUILD))
    manifest = 'name = "loud"\ngames = ["oh-hell"]\ncommand = ["python", "loud.py", "{address}"]\n'
    at_start = _qualified(
        bot_version_submit(
            owner=owner,
            archive=tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest, "loud.py": LOUD_BOT}),
        )
    )

    for version in (at_build, at_start):
        assert version.status == BotVersion.Status.FAILED
        assert len(version.error_log.encode()) <= 4096 and len(version.build_log.encode()) <= 4096
        assert "[...]" in version.error_log, version.error_log
    _, token = api_token_create(user=owner, name="cli")
    with grpc.insecure_channel(arena_address) as channel:
        reply = arena_pb2_grpc.ArenaStub(channel).GetBot(
            pb.GetBotRequest(name="loud"), metadata=[("authorization", f"Bearer {token}")]
        )
    assert len(reply.versions) == 2 and all(version.error_log for version in reply.versions)


# Qualification looks like a match ----------------------------------------------------------------


def test_two_qualifications_have_different_random_ids_and_seeds_kept_for_the_owner(
    django_user_model: type,
) -> None:
    # what was tried: recognising qualification by its id (qualify-<pk>-<game>) or constant seed
    owner = django_user_model.objects.create_user("twice")
    first = _qualified(bot_version_submit(owner=owner, archive=_plain("twice")))
    second = _qualified(bot_version_submit(owner=owner, archive=_plain("twice")))

    games = [first.qualification["oh-hell"], second.qualification["oh-hell"]]
    assert first.status == second.status == BotVersion.Status.ACTIVE
    assert games[0]["match_id"] != games[1]["match_id"] and games[0]["seed"] != games[1]["seed"]
    for played, version in zip(games, (first, second), strict=True):
        assert "qualify" not in played["match_id"] and str(version.pk) not in played["match_id"].split("-")


def test_qualification_seats_the_ladders_house_bots_as_a_rated_table_would(django_user_model: type) -> None:
    house = django_user_model.objects.create_user("house")
    for name in ("house-a", "house-b"):
        version = _qualified(bot_version_submit(owner=house, archive=_plain(name)))
        version.bot.is_house = True
        version.bot.save()
    owner = django_user_model.objects.create_user("newbie")
    version = _qualified(bot_version_submit(owner=owner, archive=_plain("newbie")))

    played = version.qualification["oh-hell"]
    assert version.status == BotVersion.Status.ACTIVE
    assert sorted(played["seats"]) == ["house-a v1", "house-b v1", "newbie v1"]
    assert played["seats"][played["seat"]] == "newbie v1"


def test_the_built_archive_is_what_the_database_says(django_user_model: type, platform_folders: Path) -> None:
    import hashlib

    owner = django_user_model.objects.create_user("digest")
    version = _qualified(_submitted(owner, "digest", STAMPED))
    data = (platform_folders / "archives" / version.built_archive).read_bytes()
    assert hashlib.sha256(data).hexdigest() == version.built_sha256
    assert version.built_archive != version.archive
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        assert "built.txt" in archive.getnames()


# The Node.js example: ships node_modules, builds offline --------------------------------------------

NODE_RANDOM = EXAMPLES / "node-random"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_random_packed_with_its_node_modules_builds_offline_and_qualifies(
    django_user_model: type, platform_folders: Path
) -> None:
    # as `septet up` registers it: built by the trusted launcher on the host, packed, submitted
    archive = pack_folder(NODE_RANDOM, build_first=True)
    owner = django_user_model.objects.create_user("house")
    version = _qualified(bot_version_submit(owner=owner, archive=archive))

    assert version.status == BotVersion.Status.ACTIVE, version.error_log
    assert version.builds == 1 and version.build_status == BotVersion.Build.BUILT
    members = _built_members(version, platform_folders / "archives")
    names = {member.name for member in members}
    assert any(name.startswith("node_modules/@grpc/grpc-js/") for name in names)
    assert not any("/.bin/" in f"/{name}" for name in names), "npm's .bin links were packed"
    assert all(member.isfile() or member.isdir() for member in members)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_node_bot_submitted_without_node_modules_fails_saying_what_to_do(
    django_user_model: type, platform_folders: Path, tmp_path: Path
) -> None:
    # what was tried: `npm ci` at intake, which needs the network the build does not have
    folder = tmp_path / "bare-node"
    shutil.copytree(NODE_RANDOM, folder, ignore=shutil.ignore_patterns("node_modules"))
    manifest = folder / "septet-bot.toml"
    manifest.write_text(manifest.read_text().replace('name = "node-random"', 'name = "bare-node"'))
    owner = django_user_model.objects.create_user("newcomer")
    version = _qualified(bot_version_submit(owner=owner, archive=pack_folder(folder)))

    assert version.status == BotVersion.Status.FAILED and version.build_status == BotVersion.Build.FAILED
    assert "no network" in version.error_log and "submit node_modules" in version.error_log
    assert version.built_archive == ""


# A worker that died mid-build; local builds ------------------------------------------------------


def test_a_build_left_by_a_dead_worker_is_claimed_again_and_a_live_one_is_left_alone(
    django_user_model: type,
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    owner = django_user_model.objects.create_user("orphan")
    live = _submitted(owner, "orphan", STAMPED)
    BotVersion.objects.filter(pk=live.pk).update(build_status="building", build_started=timezone.now())
    assert _qualified(live).status == BotVersion.Status.QUALIFYING  # another worker is building it
    assert BotVersion.objects.get(pk=live.pk).builds == 0

    dead = timezone.now() - timedelta(hours=1)
    BotVersion.objects.filter(pk=live.pk).update(build_started=dead)
    version = _qualified(live)
    assert version.status == BotVersion.Status.ACTIVE and version.builds == 1, version.error_log


COUNTED_BUILD = """import pathlib
counter = pathlib.Path("builds.txt")
counter.write_text((counter.read_text() if counter.exists() else "") + "built\\n")
"""


def test_a_local_build_keeps_its_stamp_outside_the_folder_and_follows_no_link(tmp_path: Path) -> None:
    # what was tried: the author's folder holds `.septet-build` as a link to a 0600 root file
    from referee.tools.botfolder import build, load_manifest

    secret = tmp_path / "root-only"
    secret.write_bytes(b"untouched")
    secret.chmod(0o600)
    folder = tmp_path / "local"
    folder.mkdir()
    (folder / "build.py").write_text(COUNTED_BUILD)
    (folder / "septet-bot.toml").write_text(
        'name = "local"\ngames = ["oh-hell"]\ncommand = ["python", "bot.py", "{address}"]\n'
        'build = ["python", "build.py"]\n'
    )
    (folder / ".septet-build").symlink_to(secret)
    manifest = load_manifest(folder)

    build(manifest)
    build(manifest)

    assert secret.read_bytes() == b"untouched"
    assert (folder / "builds.txt").read_text() == "built\n", "a local build runs once per fingerprint"
    assert os.readlink(folder / ".septet-build") == str(secret)


def test_without_a_sandbox_development_builds_on_a_copy_and_packs_no_link(
    django_user_model: type, platform_folders: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SEPTET_ALLOW_UNSANDBOXED on a machine without bubblewrap: bot_sandbox() gives None
    from septet_platform.bots import qualification

    monkeypatch.setattr(qualification, "bot_sandbox", lambda: None)
    owner = django_user_model.objects.create_user("bare")
    version = _qualified(_submitted(owner, "bare", LINKS_BESIDE_A_GOOD_BOT))

    assert version.status == BotVersion.Status.ACTIVE, version.error_log
    members = _built_members(version, platform_folders / "archives")
    assert "node_modules/left-pad.js" in {member.name for member in members}
    assert all(member.isfile() or member.isdir() for member in members)
    assert version.builds == 1
