"""`manage.py storage_copy --to database`: an existing platform's archives and replays, copied from
the data folder into the database before it switches to SEPTET_STORAGE=database (deploy/README.md,
"Moving files into the database"). The work and its checks are `blobs.services.storage_copy`'s."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from septet_platform.blobs.backends import StorageUnavailable
from septet_platform.blobs.services import SOURCES, CopyReport, FileCopied, Outcome, storage_copy

PROGRESS_EVERY = 200
"""Files between two progress lines: a line per file would bury the refused ones."""


class Command(BaseCommand):
    help = (
        "Copies every bot archive and replay the database names from the other store into the one "
        "--to names (database: from SEPTET_DATA_DIR's archives/ and replays/), each checked against "
        "the size and SHA-256 its row recorded. Files already there whole are skipped, so it can be "
        "run again; a file that disagrees with its row is refused and nothing is written for it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--to",
            required=True,
            choices=sorted(SOURCES),
            help="the store to copy into: database (from the data folder) or local (back into it)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = storage_copy(to=options["to"], on_file=self._progress)
        except StorageUnavailable as error:
            raise CommandError(f"stopped: {error.strerror}; run it again once it answers") from None
        self.stdout.write(_summary(report))
        refused, missing = report.counts[Outcome.REFUSED], report.counts[Outcome.MISSING]
        if refused or missing:
            raise CommandError(
                f"{_files(refused)} refused and {_files(missing)} missing (named above): nothing was "
                "written for them. They were unreadable before the copy too; restore them from a "
                "backup and run it again, or switch knowing their rows find no file."
            )

    def _progress(self, done: FileCopied) -> None:
        if done.outcome in (Outcome.REFUSED, Outcome.MISSING):
            where = f"{done.file.area}/{done.file.name} ({done.file.named_by})"
            self.stderr.write(f"{done.outcome}: {where}: {done.reason}")
        if done.done % PROGRESS_EVERY == 0 or done.done == done.total:
            self.stdout.write(f"{done.done:,} of {done.total:,} files")


def _summary(report: CopyReport) -> str:
    counts = ", ".join(f"{report.counts[outcome]:,} {outcome}" for outcome in Outcome)
    line = f"{report.source} -> {report.target}: {counts} (of {report.total:,} files the database names)"
    if report.unchecked:
        line += f"; {report.unchecked:,} had no checksum recorded and were taken as found"
    return line


def _files(count: int) -> str:
    return f"{count:,} file" + ("" if count == 1 else "s")
