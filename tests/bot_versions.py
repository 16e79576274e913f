"""Bot versions for the platform's tests: rows alone (`version_row`, for ratings, pages, events),
or stored with a real archive that workers unpack and run (`tar_folder` + `version_from_archive`)."""

from __future__ import annotations

import hashlib
import io
import tarfile
from collections.abc import Sequence
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User

from septet_platform.bots.models import Bot, BotVersion

ALL_GAMES = ("oh7", "oh7-advanced", "oh7-duel", "oh-hell", "black-sevens", "seven-up-seven-down")


def version_row(
    owner: User | str,
    name: str,
    *,
    number: int = 1,
    games: Sequence[str] = ALL_GAMES,
    status: str = BotVersion.Status.ACTIVE,
    error_log: str = "",
    is_house: bool = False,
) -> BotVersion:
    """Version `number` of bot `name` (created for `owner`, a user or a username, on first use),
    its manifest declaring `games`; the archive it names is not on disk."""
    user = owner if isinstance(owner, User) else User.objects.get_or_create(username=owner)[0]
    bot, _ = Bot.objects.get_or_create(name=name, defaults={"owner": user, "is_house": is_house})
    digest = hashlib.sha256(f"{name}/{number}".encode()).hexdigest()
    return BotVersion.objects.create(
        bot=bot,
        number=number,
        archive=f"{digest}.tar.gz",
        archive_sha256=digest,
        manifest={"name": name, "games": list(games)},
        status=status,
        error_log=error_log,
    )


def tar_folder(folder: Path, extra: dict[str, str] | None = None) -> bytes:
    """A tar.gz of the files at the top of `folder`, with `extra` files (name -> text) added or
    put in place of the folder's files of the same name."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.iterdir()):
            if path.is_file() and path.name not in (extra or {}):
                archive.add(path, arcname=path.name)
        for name, text in (extra or {}).items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def version_from_archive(
    owner: object, name: str, data: bytes, *, games: Sequence[str] = (), is_house: bool = False
) -> BotVersion:
    """An ACTIVE version 1 of a new bot `name`, its archive `data` stored where the workers look;
    the manifest lists `games` (none: a manifest the matchmaking ignores)."""
    bot = Bot.objects.create(owner=owner, name=name, is_house=is_house)
    path = Path(settings.SEPTET_ARCHIVES_DIR) / name / "v1.tar.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return BotVersion.objects.create(
        bot=bot,
        number=1,
        archive=f"{name}/v1.tar.gz",
        archive_sha256=hashlib.sha256(data).hexdigest(),
        manifest={"games": list(games)} if games else {},
        status=BotVersion.Status.ACTIVE,
    )
