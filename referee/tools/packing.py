"""Packing a bot folder into the archive that `septet submit` uploads.

The archive is a reproducible tar.gz (entries sorted, times and owners zeroed), so packing one
folder twice gives the same bytes and the platform's SHA-256 of a version means something. Local
environments and caches stay home (.venv, __pycache__, .git). node_modules goes WITH the folder:
the platform builds a version once and offline, so a Node.js bot ships its installed packages
(`npm ci` before `septet submit`); the links npm makes in node_modules/.bin are left out (never
followed), every other link is refused. It lives in `referee` because the CLI packs on the
author's machine, where the platform is not installed.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import tarfile
from collections.abc import Iterator
from pathlib import Path

from referee.tools.botfolder import BUILD_STAMP, BotFolderError, build, load_manifest

SKIPPED_WHEN_PACKING = frozenset({".venv", "__pycache__", BUILD_STAMP, ".git"})
LINKS_DROPPED_UNDER = "node_modules"
"""Symbolic links below a folder of this name (npm's .bin links) are left out, not refused."""


def pack_folder(folder: Path | str, *, build_first: bool = False) -> bytes:
    """A reproducible tar.gz of a bot folder (its files at the archive root), without .venv,
    __pycache__, .septet-build and .git. Leaves out links inside node_modules; refuses any other
    link and special files. `build_first` runs the manifest's build here first, as the caller
    (only for a folder the caller trusts: its own, or the platform's house examples), so that what
    the offline platform build needs (node_modules) is packed; a failing build is left for the
    platform's build to report."""
    folder = Path(folder)
    manifest = load_manifest(folder)  # raises BotFolderError naming the problem
    if build_first:
        with contextlib.suppress(BotFolderError):
            build(manifest)
    return pack_tree(folder, skip=SKIPPED_WHEN_PACKING)


def pack_tree(folder: Path, *, skip: frozenset[str] = frozenset()) -> bytes:
    """A reproducible tar.gz of everything under `folder` but names in `skip` (at any depth)."""
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as compressed,
        tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as archive,
    ):
        for path in _walk(Path(folder), skip):
            relative = path.relative_to(folder).as_posix()
            info = tarfile.TarInfo(relative)
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if path.is_dir():
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                archive.addfile(info)
                continue
            info.size = path.stat().st_size
            info.mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
            with path.open("rb") as stream:
                archive.addfile(info, stream)
    return buffer.getvalue()


def _walk(folder: Path, skip: frozenset[str], base: Path | None = None) -> Iterator[Path]:
    base = folder if base is None else base
    for path in sorted(folder.iterdir(), key=lambda item: item.name):
        if path.name in skip:
            continue
        if path.is_symlink() and LINKS_DROPPED_UNDER in path.relative_to(base).parts[:-1]:
            continue  # npm's node_modules/.bin links: never followed, never packed
        if path.is_symlink():
            raise BotFolderError(
                f"{path.relative_to(base)}: a symlink; bot folders hold files and folders only"
            )
        if path.is_dir():
            yield path
            yield from _walk(path, skip, base)
        elif path.is_file():
            yield path
        else:
            raise BotFolderError(f"{path.relative_to(base)}: not a regular file")
