"""Each user's share of the archive folder: SEPTET_STORAGE_PER_USER over their stored archives.

Every version keeps its upload and, when it has a build, its built archive (at most 20 MiB and
64 MiB); a user submitting a dozen versions an hour would otherwise fill the archive store (the data
folder, or the database).
So a submission, and a build before it stores its archive, first makes room
(`storage_make_room`): past the quota, the archives of the user's oldest versions that will never
play again are pruned, oldest first, until the new archive fits. Never pruned: an active or
qualifying version, the newest version of a bot, a version seated in a match still to play
(scheduled or running) or entered in a tournament not over. If pruning every other version would
not free enough, nothing is pruned and the submission (or the build) is refused with
StorageQuotaExceeded saying how much is used.

A pruned version's files are deleted once the transaction commits (a refused or rolled-back
submission deletes nothing); its row stays, with `archive_pruned` set, so its matches, ratings,
replays and logs stay as they were, its pages say "archive pruned", and
`matches.services.version_folder` refuses to play it.

Callers hold a lock on the owner's row for the transaction (`owner_lock`), so two submissions (or
a submission and a build) of one user count and prune one after another.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery, Sum
from django.utils import timezone

from referee.tools.building import size_text
from septet_platform.blobs.stores import archive_store
from septet_platform.bots.archives import ArchiveRejected
from septet_platform.bots.models import BotVersion

DEFAULT_STORAGE_PER_USER = 512 * 1024 * 1024


class StorageQuotaExceeded(ArchiveRejected):
    """The user's stored archives would pass SEPTET_STORAGE_PER_USER even with every old version's
    archives pruned; the message says how much is used and what could be freed."""


@dataclass(frozen=True)
class StorageUse:
    """What a user's stored archives take (`used`) of their quota, in bytes."""

    used: int
    quota: int

    @property
    def text(self) -> str:
        return f"{size_text(self.used)} of {size_text(self.quota)}"


def storage_per_user() -> int:
    """The organiser's quota per user (SEPTET_STORAGE_PER_USER, bytes; default 512 MiB)."""
    return int(getattr(settings, "SEPTET_STORAGE_PER_USER", DEFAULT_STORAGE_PER_USER))


def storage_use(*, owner_id: int) -> StorageUse:
    """What the user's versions' stored archives take now (pruned ones count nothing)."""
    kept = BotVersion.objects.filter(bot__owner_id=owner_id, archive_pruned__isnull=True)
    used = kept.aggregate(used=Sum(F("archive_bytes") + F("built_bytes")))["used"] or 0
    return StorageUse(int(used), storage_per_user())


def owner_lock(owner_id: int) -> None:
    """A row lock on the user until the transaction ends (see the module docstring)."""
    get_user_model()._default_manager.select_for_update().filter(pk=owner_id).exists()


def prunable_versions(*, owner_id: int) -> QuerySet[BotVersion]:
    """The user's versions whose archives may go, oldest first: retired or failed, not their
    bot's newest, in no match still to play nor in a tournament not over, with bytes to free."""
    from septet_platform.matches.models import Match, Seat
    from septet_platform.tournaments.models import Entrant, Tournament

    newest = BotVersion.objects.filter(bot=OuterRef("bot")).order_by("-number").values("number")[:1]
    waiting = Seat.objects.filter(
        bot_version=OuterRef("pk"), match__status__in=[Match.Status.SCHEDULED, Match.Status.RUNNING]
    )
    entered = Entrant.objects.filter(version=OuterRef("pk")).exclude(
        tournament__status__in=[Tournament.Status.FINISHED, Tournament.Status.CANCELLED]
    )
    return (
        BotVersion.objects.filter(
            bot__owner_id=owner_id,
            archive_pruned__isnull=True,
            status__in=[BotVersion.Status.RETIRED, BotVersion.Status.FAILED],
        )
        .filter(Q(archive_bytes__gt=0) | Q(built_bytes__gt=0))
        .exclude(number=Subquery(newest))
        .exclude(Exists(waiting))
        .exclude(Exists(entered))
        .select_related("bot")
        .order_by("created", "pk")
    )


def storage_make_room(*, owner_id: int, needed: int, now: datetime | None = None) -> list[BotVersion]:
    """Makes room for `needed` more bytes of the user's archives (call it inside a transaction
    holding `owner_lock`): nothing when they fit; else prunes the oldest prunable versions until
    they do and returns them; StorageQuotaExceeded (nothing pruned) when even all would not do."""
    use = storage_use(owner_id=owner_id)
    if use.used + needed <= use.quota:
        return []
    chosen: list[BotVersion] = []
    freed = 0
    for version in prunable_versions(owner_id=owner_id):
        chosen.append(version)
        freed += version.archive_bytes + version.built_bytes
        if use.used - freed + needed <= use.quota:
            _prune(chosen, now or timezone.now())
            return chosen
    raise StorageQuotaExceeded(
        f"storage quota: your bots' stored archives take {use.text} (SEPTET_STORAGE_PER_USER) and "
        f"this needs {size_text(needed)} more; pruning the archives of your old versions (retired or "
        f"failed, not a bot's newest, in no match or tournament still to play) would free only "
        f"{size_text(freed)}: ask the organiser for more room"
    )


def _prune(versions: list[BotVersion], now: datetime) -> None:
    """Marks `versions` pruned and deletes their archives from the archive store (a file, or a
    database blob) once the transaction commits."""
    names = [version.archive for version in versions if version.archive]
    names += [
        version.built_archive
        for version in versions
        if version.built_archive and version.built_archive != version.archive
    ]
    BotVersion.objects.filter(pk__in=[version.pk for version in versions]).update(archive_pruned=now)

    def delete() -> None:
        store = archive_store()
        for name in names:
            store.delete(name)

    transaction.on_commit(delete)
