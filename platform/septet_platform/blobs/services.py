"""Moving an existing platform's archives and replays from one store to the other (`storage_copy`).

A platform that kept its files in the data folder (SEPTET_STORAGE=local) switches to the database
(SEPTET_STORAGE=database) so that workers on other machines need no shared folder; the rows it
already recorded name files that are only in the folder. `storage_copy` copies every file a row
names (each bot version's upload and built archive, each match's replay) into the other store, so
that after the switch every row still finds its file.

Every file is checked against the size and SHA-256 its row recorded before it is written: a damaged
or replaced file is refused (nothing is written for it), never made to look whole by being copied
into a store that then vouches for it. A file already in the target with the recorded checksum is
left as it is, so the copy can be run again (after an interruption, or once more after the switch)
and copies only what is still missing; a damaged copy in the target is replaced by a good source.
Each file is committed on its own, so an interrupted run keeps what it copied.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum

from django.core.exceptions import SuspiciousFileOperation
from django.db.models import F
from django.utils.module_loading import import_string

from septet_platform.blobs.backends import BlobCorrupt, SeptetStorage, StorageUnavailable
from septet_platform.blobs.selection import ARCHIVES, REPLAYS, storage_backends
from septet_platform.blobs.stores import read_checked
from septet_platform.bots.models import BotVersion
from septet_platform.matches.models import Match

AREAS = {ARCHIVES: "archives", REPLAYS: "replays"}
"""The two stores by the area their files are in (the database backend's `Blob.area`)."""
SOURCES = {"database": "local", "local": "database"}
"""Where a copy into each kind reads from: the folder into the database, and back."""


class Outcome(StrEnum):
    """What became of one named file."""

    COPIED = "copied"
    ALREADY_THERE = "already there"
    REFUSED = "refused"
    """Its source bytes disagree with its row (or cannot be read): nothing written."""
    MISSING = "missing"
    """In neither store: its row names a file nobody has (it was unreadable before the copy too)."""


@dataclass(frozen=True)
class NamedFile:
    """A file a database row names, with what that row recorded of it."""

    area: str
    name: str
    size: int
    """Bytes recorded with the row; 0 when none were (rows older than sizes)."""
    sha256: str
    """SHA-256 recorded with the row; "" for matches recorded before checksums were."""
    named_by: str
    """The row, for messages: "greedy v3", "greedy v3 (built)", "match 42"."""


@dataclass(frozen=True)
class FileCopied:
    """One file done: what became of it and why, and how far the run is."""

    file: NamedFile
    outcome: Outcome
    reason: str
    done: int
    total: int
    unchecked: bool = False
    """No checksum was recorded with its row: copied (or found) as it was."""


@dataclass
class CopyReport:
    """A whole run: counts by outcome, and the files refused or missing with their reasons."""

    source: str
    target: str
    counts: Counter[Outcome] = field(default_factory=Counter)
    problems: list[FileCopied] = field(default_factory=list)
    unchecked: int = 0

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def stores_of(kind: str) -> dict[str, SeptetStorage]:
    """The archive and replay stores SEPTET_STORAGE=`kind` would use, by area, whatever this
    process's own setting is (the copy reads one kind and writes the other)."""
    entries = storage_backends(kind)
    return {
        AREAS[alias]: import_string(entry["BACKEND"])(**entry.get("OPTIONS", {}))
        for alias, entry in entries.items()
    }


def named_files() -> Iterator[NamedFile]:
    """Every file the database names: each version's upload and its built archive (when it is a
    file of its own), then each match's replay. Versions whose archives were pruned for their
    owner's quota name none: they never play again and their files were deleted."""
    versions = (
        BotVersion.objects.filter(archive_pruned__isnull=True)
        .exclude(archive="")
        .order_by("pk")
        .values_list(
            "bot__name",
            "number",
            "archive",
            "archive_bytes",
            "archive_sha256",
            "built_archive",
            "built_bytes",
            "built_sha256",
        )
    )
    for bot, number, archive, size, digest, built, built_size, built_digest in versions.iterator():
        yield NamedFile("archives", archive, size, digest, f"{bot} v{number}")
        if built and built != archive:
            yield NamedFile("archives", built, built_size, built_digest, f"{bot} v{number} (built)")
    replays = Match.objects.exclude(replay="").order_by("pk")
    for match_id, name, size, digest in replays.values_list(
        "pk", "replay", "replay_size", "replay_sha256"
    ).iterator():
        yield NamedFile("replays", name, size or 0, digest, f"match {match_id}")


def named_file_count() -> int:
    """How many files `named_files` yields (for progress), counted by the database."""
    versions = BotVersion.objects.filter(archive_pruned__isnull=True).exclude(archive="")
    built = versions.exclude(built_archive="").exclude(built_archive=F("archive"))
    return versions.count() + built.count() + Match.objects.exclude(replay="").count()


def storage_copy(*, to: str, on_file: Callable[[FileCopied], None] | None = None) -> CopyReport:
    """Copies every named file from the other store into the `to` store ("database" or "local"),
    checked against its row (see the module docstring); `on_file` hears of each file as it is done.
    Raises StorageUnavailable when either store cannot be reached (the run stops: what was copied
    stays copied); ValueError for an unknown `to`."""
    if to not in SOURCES:
        raise ValueError(f"cannot copy to {to!r}: expected one of {', '.join(SOURCES)}")
    source_kind = SOURCES[to]
    sources, targets = stores_of(source_kind), stores_of(to)
    report = CopyReport(source=source_kind, target=to)
    total = named_file_count()
    for file in named_files():
        outcome, reason, unchecked = _copy_one(file, sources[file.area], targets[file.area])
        report.counts[outcome] += 1
        report.unchecked += unchecked
        done = FileCopied(file, outcome, reason, report.total, max(total, report.total), unchecked)
        if outcome in (Outcome.REFUSED, Outcome.MISSING):
            report.problems.append(done)
        if on_file is not None:
            on_file(done)
    return report


def _copy_one(file: NamedFile, source: SeptetStorage, target: SeptetStorage) -> tuple[Outcome, str, bool]:
    """(outcome, reason, unchecked) of copying one file: the target's copy when it is already whole,
    else the source's bytes once they agree with the row."""
    if file.sha256 and _holds(target, file):
        return Outcome.ALREADY_THERE, f"in {target.where}", False
    try:
        if file.sha256:
            data = read_checked(source, file.name, size=file.size, sha256=file.sha256)
        else:
            data = source.read_bytes(file.name)
    except FileNotFoundError:
        return Outcome.MISSING, f"in neither {source.where} nor {target.where}", False
    except StorageUnavailable:
        raise
    except BlobCorrupt as error:
        return Outcome.REFUSED, f"{error.strerror} in {source.where}; nothing written", False
    except (OSError, SuspiciousFileOperation) as error:
        return Outcome.REFUSED, f"unreadable in {source.where} ({error}); nothing written", False
    if not file.sha256:  # nothing recorded to check against: the source's own bytes are the measure
        found = replace(file, size=len(data), sha256=hashlib.sha256(data).hexdigest())
        if _holds(target, found):
            return Outcome.ALREADY_THERE, f"in {target.where} (no checksum recorded)", True
    target.write_durably(file.name, data)
    return Outcome.COPIED, f"to {target.where}", not file.sha256


def _holds(store: SeptetStorage, file: NamedFile) -> bool:
    """Whether `store` has `file` whole, as its row recorded it. A damaged copy there is not whole
    (the copy replaces it); a store that cannot be read stops the run (StorageUnavailable)."""
    try:
        read_checked(store, file.name, size=file.size, sha256=file.sha256)
    except (FileNotFoundError, BlobCorrupt):
        return False
    return True
