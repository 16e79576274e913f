"""Bot versions stored with real archives, for the tests that play them through the platform
(tests/platform, tests/sandbox): a folder packed as the intake stores it, and the ACTIVE version
row pointing at it."""

from __future__ import annotations

import hashlib
import io
import tarfile
from collections.abc import Sequence
from pathlib import Path

from django.conf import settings

from septet_platform.bots.models import Bot, BotVersion


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
