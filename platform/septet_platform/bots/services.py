"""Bot writes: a submitted archive becomes a new BotVersion, or nothing at all.

`bot_version_submit` checks and unpacks the archive in a scratch folder (bots.archives), reads its
manifest, and in one transaction creates the Bot on its first submission (the name is then its
owner's), numbers the version, and stores the archive in the archive store (`blobs.stores`: the
data folder's archives/, or the database) as `<bot name>/v<n>.tar.gz` with its SHA-256 and size.
Any error leaves no rows and no files: the archive is removed again when the transaction does not
commit.

`bot_version_build` then builds the version exactly once, before it qualifies: its manifest's
`build` runs offline in the sandbox on a copy of the stored folder (`referee.tools.building`), the tree
it leaves is checked like an upload (no links, devices or paths outside; size limits, the whole
tree at most `built_output_limit` of the upload's unpacked size) and stored as its own archive
`<bot name>/v<n>.built.tar.gz` with its SHA-256. Its outcome and a bounded log
are kept in the database; no stamp is ever written into a folder. Matches play the built archive.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, models, transaction
from django.db.models import F, Max
from django.utils import timezone

from referee.tools.botfolder import BotFolderError, Manifest, load_manifest, resolve_command
from referee.tools.building import BuildLimits, BuildOutcome, bounded_log, build_in_sandbox, build_unsandboxed
from referee.tools.packing import pack_tree
from referee.tools.sandbox import Sandbox
from septet_platform.blobs.stores import archive_store, read_checked
from septet_platform.bots.archives import (
    DEFAULT_LIMITS,
    GZIP_MAGIC,
    ArchiveLimits,
    ArchiveRejected,
    built_limits,
    unpack_archive,
    unpacked_bytes,
)
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.quota import StorageQuotaExceeded, owner_lock, storage_make_room


class BotNameTaken(PermissionDenied):
    """The manifest names a bot that belongs to another user."""


def bot_version_submit(
    *, owner: AbstractBaseUser, archive: bytes, limits: ArchiveLimits = DEFAULT_LIMITS
) -> BotVersion:
    """Stores a new QUALIFYING version of the bot the archive's manifest names (ArchiveRejected for
    a bad archive, BotNameTaken for someone else's bot name); all or nothing."""
    with tempfile.TemporaryDirectory(prefix="septet-intake-") as scratch:
        unpacked = Path(scratch) / "bot"
        root = unpack_archive(archive, unpacked, limits=limits)
        manifest = load_manifest(root)
        # Stored as .tar.gz: a gzip upload byte for byte, a .tar or .zip as the tree it unpacked to.
        stored = archive if archive.startswith(GZIP_MAGIC) else pack_tree(unpacked)
    return _version_store(owner=owner, manifest=manifest, stored=stored)


def _manifest_json(manifest: Manifest) -> dict[str, object]:
    data = dataclasses.asdict(manifest)
    del data["folder"]
    return {key: list(value) if isinstance(value, tuple) else value for key, value in data.items()}


def _version_store(*, owner: AbstractBaseUser, manifest: Manifest, stored: bytes) -> BotVersion:
    store = archive_store()
    written: str | None = None
    try:
        with transaction.atomic():
            bot = _bot_for(owner=owner, name=manifest.name)
            owner_lock(owner.pk)
            storage_make_room(owner_id=owner.pk, needed=len(stored))  # or StorageQuotaExceeded
            latest = BotVersion.objects.filter(bot=bot).aggregate(latest=Max("number"))["latest"]
            number = (latest or 0) + 1
            relative = f"{manifest.name}/v{number}.tar.gz"
            store.write_durably(relative, stored)
            written = relative
            return BotVersion.objects.create(
                bot=bot,
                number=number,
                archive=relative,
                archive_sha256=hashlib.sha256(stored).hexdigest(),
                archive_bytes=len(stored),
                manifest=_manifest_json(manifest),
                status=BotVersion.Status.QUALIFYING,
            )
    except BaseException:
        if written is not None:
            with contextlib.suppress(OSError):  # the error that got here is the one to report
                store.discard(written)
        raise


def _bot_for(*, owner: AbstractBaseUser, name: str) -> Bot:
    """The owner's bot called `name`, locked for numbering; created on its first submission."""
    bot = Bot.objects.select_for_update().filter(name=name).first()
    if bot is None:
        try:
            with transaction.atomic():
                bot = Bot.objects.create(owner=owner, name=name)
        except IntegrityError:  # created by a concurrent first submission
            bot = Bot.objects.select_for_update().get(name=name)
    if bot.owner_id != owner.pk:
        raise BotNameTaken(
            f"the bot name {name!r} belongs to another user; choose another name in septet-bot.toml"
        )
    if bot.self_hosted:
        raise BotNameTaken(
            f"{name!r} is a self-hosted bot (it plays over Connect, from your machine): submit under "
            "another name in septet-bot.toml"
        )
    return bot


OFFLINE_HINT = (
    "builds run once, at submission, with no network: ship what the bot needs in its folder "
    "(for Node.js run `npm ci` and submit node_modules; for Python vendor the packages), "
    "or make the build work offline"
)


def bot_version_build(
    *, version_id: int, sandbox: Sandbox | None, limits: BuildLimits | None = None
) -> BotVersion:
    """Builds a PENDING version once (see the module docstring) and records BUILT or FAILED; a
    version another call is building or has built is returned as it is. A sandbox that cannot be
    made raises SandboxError and puts the version back to PENDING (our failure, not the bot's)."""
    limits = limits or build_limits()
    if not build_claim(version_id=version_id, limits=limits):
        return BotVersion.objects.select_related("bot").get(pk=version_id)
    return bot_version_build_claimed(version_id=version_id, sandbox=sandbox, limits=limits)


def build_claimable(*, now: datetime, limits: BuildLimits) -> models.Q:
    """Versions whose build may be claimed at `now`: PENDING, or claimed longer ago than any live
    build can last (it died with its worker)."""
    abandoned = models.Q(build_status=BotVersion.Build.BUILDING, build_started__lt=now - build_grace(limits))
    return models.Q(build_status=BotVersion.Build.PENDING) | abandoned


def build_claim(*, version_id: int, limits: BuildLimits, now: datetime | None = None) -> bool:
    """Marks the version BUILDING for this caller (one atomic update); False when it is not
    claimable (built, failed, or another caller's build is live)."""
    now = now or timezone.now()
    claimed = BotVersion.objects.filter(build_claimable(now=now, limits=limits), pk=version_id).update(
        build_status=BotVersion.Build.BUILDING, build_started=now
    )
    return claimed == 1


def bot_version_build_claimed(*, version_id: int, sandbox: Sandbox | None, limits: BuildLimits) -> BotVersion:
    """Runs the build of a version the caller claimed (`build_claim`) and records its outcome and
    the wall seconds it took (`build_seconds`, what its owner's hourly build budget counts)."""
    version = BotVersion.objects.select_related("bot").get(pk=version_id)
    started = time.monotonic()
    try:
        built, outcome = _build_stored(version, sandbox, limits)
    except BaseException:
        BotVersion.objects.filter(pk=version_id).update(build_status=BotVersion.Build.PENDING)
        raise
    ran = bool(version.manifest.get("build"))  # a version with nothing to build used no build time
    timing = {"build_finished": timezone.now(), "build_seconds": time.monotonic() - started if ran else None}
    if built is None:
        reason = outcome.reason if outcome.ok or outcome.too_big else f"{outcome.reason}; {OFFLINE_HINT}"
        BotVersion.objects.filter(pk=version_id).update(
            build_status=BotVersion.Build.FAILED,
            build_log=bounded_log(f"{reason}\n{outcome.log}"),
            **timing,
        )
    else:
        relative, digest = built
        BotVersion.objects.filter(pk=version_id).update(
            build_status=BotVersion.Build.BUILT,
            built_archive=relative,
            built_sha256=digest,
            build_log=bounded_log(outcome.log),
            **timing,
        )
    return BotVersion.objects.select_related("bot").get(pk=version_id)


def build_grace(limits: BuildLimits) -> timedelta:
    """How long after its claim a build is certainly over (it is killed at its time limit)."""
    return timedelta(seconds=limits.seconds) + timedelta(minutes=5)


def build_limits() -> BuildLimits:
    """The organiser's limits for one build: SEPTET_BUILD_SECONDS (wall clock, default 600) and
    SEPTET_BUILD_DISK_BYTES (everything the build writes, default 512 MiB, held in memory)."""
    return BuildLimits(
        seconds=float(getattr(settings, "SEPTET_BUILD_SECONDS", 600)),
        disk_bytes=int(getattr(settings, "SEPTET_BUILD_DISK_BYTES", 512 * 1024 * 1024)),
    )


def _build_stored(
    version: BotVersion, sandbox: Sandbox | None, limits: BuildLimits
) -> tuple[tuple[str, str] | None, BuildOutcome]:
    """The built archive's path and SHA-256 (None when the build failed), and the build's outcome.
    A version without a build plays its upload as it is."""
    build = tuple(version.manifest.get("build", ()))
    if not build:
        return (version.archive, version.archive_sha256), BuildOutcome(True, "nothing to build", "")
    with tempfile.TemporaryDirectory(prefix="septet-build-") as scratch:
        upload = read_checked(
            archive_store(), version.archive, size=version.archive_bytes, sha256=version.archive_sha256
        )
        source = unpack_archive(upload, Path(scratch) / "source")
        os.chmod(scratch, 0o755)  # the sandbox's uid reads the source (unpacked 0644/0755)
        limits = limits.for_upload(unpacked_bytes(Path(scratch) / "source"))
        BotVersion.objects.filter(pk=version.pk).update(builds=F("builds") + 1)
        if sandbox is None:  # development only: SEPTET_ALLOW_UNSANDBOXED runs submitted code bare
            outcome = build_unsandboxed(source, resolve_command(build), limits=limits)
        else:
            outcome = build_in_sandbox(source, resolve_command(build), sandbox, limits=limits)
        if not outcome.ok:
            return None, outcome
        try:
            checked = built_limits(limits.output_bytes)  # this build's own limit, not the ceiling
            root = unpack_archive(outcome.tar, Path(scratch) / "built", limits=checked)
            load_manifest(root)
        except (ArchiveRejected, BotFolderError) as error:
            return None, BuildOutcome(False, f"the built folder was refused: {error}", outcome.log)
        packed = pack_tree(root)
    relative = f"{version.bot.name}/v{version.number}.built.tar.gz"
    try:
        _built_store(version, relative, packed)
    except StorageQuotaExceeded as error:
        refused = f"the built folder was not stored: {error}"
        return None, BuildOutcome(False, refused, outcome.log, too_big=True)
    return (relative, hashlib.sha256(packed).hexdigest()), outcome


def _built_store(version: BotVersion, name: str, packed: bytes) -> None:
    """Writes the built archive once its owner's quota has room for it (`bots.quota`), and counts it;
    StorageQuotaExceeded (nothing written) when it has none. A build run again after its worker
    died replaces its own earlier archive, which then counts no more."""
    with transaction.atomic():
        owner_lock(version.bot.owner_id)
        counted = BotVersion.objects.filter(pk=version.pk).values_list("built_bytes", flat=True).first() or 0
        storage_make_room(owner_id=version.bot.owner_id, needed=max(0, len(packed) - counted))
        archive_store().write_durably(name, packed)
        BotVersion.objects.filter(pk=version.pk).update(built_bytes=len(packed))
