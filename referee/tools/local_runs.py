"""How `septet check`, `match` and `compare` run bot folders on your machine: in the sandbox by
default, and never with your secrets.

A folder named on the command line may be someone else's: a bot downloaded to play against, a
colleague's. So a folder runs by default as the platform runs a submitted bot, inside bubblewrap
(`referee.tools.sandbox`): no network, a read-only view of its folder and the runtime, none of
your files. `--no-sandbox` runs it as a plain process of yours (a one-line warning says what that
lets it do); where bubblewrap cannot make a sandbox, one line says so and folders run bare. Either
way a bot gets only the environment a runtime needs (`botfolder.bot_environment`), never the
SEPTET_TOKEN you exported for `septet submit`, nor cloud keys; a variable your own bot needs is
passed by name (`--env NAME[=VALUE]`). `--sandbox` insists on the sandbox: it fails, saying why,
where there is none (and is what the default does where there is one).

A sandboxed start never runs a folder's `build` on the host. A folder with a build step is built
the platform's way (`referee.tools.building.build_in_sandbox`: offline, from a read-only copy)
into a cache folder outside it, once per content of the folder (`built_copy`), and the copy is
what plays. Your own folder's build therefore has to work offline, as it must on the platform.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import shutil
import stat
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.tools.botfolder import (
    MANIFEST,
    BotFolderError,
    Manifest,
    build_cache_dir,
    command_line,
    load_manifest,
    resolve_command,
)
from referee.tools.building import build_in_sandbox
from referee.tools.sandbox import BOT_ADDRESS, Sandbox, SandboxError, check_available

SANDBOX_HELP = (
    "require the sandbox, failing where bubblewrap cannot make one (the default already uses it where it can)"
)
NO_SANDBOX_HELP = (
    "run bot folders as plain processes with YOUR rights: a folder can then read and change your "
    "files (SSH keys, credentials files, other projects) and use the network; only for your own "
    "folders. By default folders run in the sandbox the platform runs submitted bots in (no "
    "network, read-only runtime and folder, per-sandbox memory, process and CPU limits, seccomp), "
    "and in either case a bot gets none of your environment's credentials (tokens, cloud keys)"
)
ENV_HELP = (
    "give bot folders this environment variable (NAME=VALUE, or NAME to pass yours); repeatable. "
    "Otherwise a bot gets only PATH, HOME, the locale, TMPDIR and its runtime's variables"
)
BARE_WARNING = (
    "septet: --no-sandbox: bot folders run as plain processes with your rights: they can read and "
    "change your files and use the network (your environment's credentials are not passed)"
)
"""The one line `--no-sandbox` prints on stderr before any folder starts."""
NO_SANDBOX_NOTE = (
    "septet: {reason}: bot folders run as plain processes with your rights, without your "
    "environment's credentials; install bubblewrap (Debian package bubblewrap) to confine them"
)
"""The one line printed where the default sandbox cannot be had."""
BUILT_COPIES = "sandboxed"
"""The folder of the build cache (`botfolder.build_cache_dir`) holding sandbox-built copies."""
UNUSED_COPY_SECONDS = 30 * 24 * 3600
"""A built copy no run used for this long (its folder deleted or moved, say) is removed."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`--sandbox`, `--no-sandbox` and `--env` of a command that runs bot folders."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--sandbox", action="store_true", help=SANDBOX_HELP)
    where.add_argument("--no-sandbox", action="store_true", help=NO_SANDBOX_HELP)
    parser.add_argument("--env", action="append", default=[], metavar="NAME[=VALUE]", help=ENV_HELP)


@dataclass(frozen=True)
class LocalRun:
    """How a command's bot folders run: in `sandbox` (None: bare) with `env` added."""

    sandbox: Sandbox | None
    env: dict[str, str]


def local_run(args: argparse.Namespace, *, has_folders: bool) -> LocalRun:
    """The sandbox (or none) for a command's bot folders, from `--sandbox`/`--no-sandbox`, and the
    variables of `--env`. Prints on stderr the one line a bare run deserves: the
    `--no-sandbox` warning, or that bubblewrap cannot make a sandbox here. Nothing is probed or
    printed when the command runs no folder (built-in bots and addresses only). `--sandbox` where
    there is no sandbox raises BotFolderError naming the reason and the way out."""
    env = parse_env(args.env)
    if not has_folders:
        return LocalRun(None, env)
    if args.no_sandbox:
        print(BARE_WARNING, file=sys.stderr, flush=True)
        return LocalRun(None, env)
    try:
        check_available()
    except SandboxError as error:
        if args.sandbox:
            raise BotFolderError(
                f"--sandbox: {error}; install bubblewrap, or run your own folders with --no-sandbox"
            ) from None
        print(NO_SANDBOX_NOTE.format(reason=error), file=sys.stderr, flush=True)
        return LocalRun(None, env)
    return LocalRun(Sandbox(), env)


def parse_env(words: Iterable[str]) -> dict[str, str]:
    """`--env` words as variables: NAME=VALUE, or NAME for the caller's own value (BotFolderError
    for a bad name, or a NAME that is not set)."""
    env: dict[str, str] = {}
    for word in words:
        name, sep, value = word.partition("=")
        if not name or not (name[0].isalpha() or name[0] == "_") or not name.replace("_", "a").isalnum():
            raise BotFolderError(f"--env takes NAME=VALUE or NAME, not {word!r}")
        if not sep:
            if name not in os.environ:
                raise BotFolderError(f"--env {name}: {name} is not set here (give NAME=VALUE)")
            value = os.environ[name]
        env[name] = value
    return env


def prepared_for_sandbox(manifest: Manifest, sandbox: Sandbox) -> Manifest:
    """The manifest to start in `sandbox` for a local run: the folder itself, or for a folder with
    a `build` its sandbox-built copy (`built_copy`). Raises BotFolderError when the sandbox's own
    user could not read the folder (`readable_by_sandbox`) or the build fails."""
    if manifest.build:
        return built_copy(manifest, sandbox)
    command_line(manifest, BOT_ADDRESS, sandboxed=True)  # a missing program first: the plainer fault
    readable_by_sandbox(manifest.folder)
    return manifest


def readable_by_sandbox(folder: Path) -> None:
    """Run as root, a sandboxed bot is a fresh unprivileged user who reads its folder as `others`
    do: refuses a folder where a file is not readable by others (or a folder not enterable), with
    the fix, instead of a bot dying with "Permission denied" before it serves. As anyone else the
    sandbox's user is the caller, and this checks nothing."""
    if os.geteuid() != 0:
        return
    for path in _walk(folder):
        mode = path.lstat().st_mode
        needed = 0o005 if stat.S_ISDIR(mode) else 0o004
        if not stat.S_ISLNK(mode) and mode & needed != needed:
            shown = path.relative_to(folder).as_posix() if path != folder else "the folder itself"
            raise BotFolderError(
                f"{folder}: the sandbox runs the bot as an unprivileged user, who cannot read "
                f"{shown} (mode {stat.filemode(mode)}): chmod -R o+rX {folder} (or --no-sandbox for "
                "your own folder)"
            )


def _walk(folder: Path) -> Iterable[Path]:
    """The folder and everything under it, links not followed."""
    yield folder
    for root, dirs, files in os.walk(folder):
        for name in sorted(dirs) + sorted(files):
            yield Path(root) / name


def content_fingerprint(folder: Path, build: Sequence[str]) -> str:
    """What a sandbox-built copy depends on: the build command and every file's path, size,
    modification time and mode under `folder` (links not followed). Any edit makes a new copy."""
    digest = hashlib.sha256("\0".join(build).encode())
    for path in _walk(folder):
        facts = path.lstat()
        relative = path.relative_to(folder).as_posix()
        digest.update(f"{relative}\0{facts.st_size}\0{facts.st_mtime_ns}\0{facts.st_mode}\n".encode())
    return digest.hexdigest()


def built_copy(manifest: Manifest, sandbox: Sandbox) -> Manifest:
    """The folder built in the sandbox, as the platform builds a submitted version (offline, from a
    read-only view, the result read back as a tar), kept in the build cache and reused while the
    folder's content is the same. The older copies of the same folder are removed. A failed build
    raises BotFolderError with its reason and the end of its log."""
    readable_by_sandbox(manifest.folder)
    folder_key = hashlib.sha256(str(manifest.folder).encode()).hexdigest()[:16]
    key = f"{folder_key}-{content_fingerprint(manifest.folder, manifest.build)[:24]}"
    copies = build_cache_dir() / BUILT_COPIES
    target = copies / key
    if (target / MANIFEST).is_file():
        os.utime(target)  # used now: kept by the pruning of unused copies
        return load_manifest(target)
    print(
        f"septet: building {manifest.name} in the sandbox, offline as the platform builds it "
        "(again only when the folder changes)",
        file=sys.stderr,
        flush=True,
    )
    outcome = build_in_sandbox(manifest.folder, resolve_command(manifest.build), sandbox)
    if not outcome.ok:
        log = outcome.log.strip()
        tail = ("\n  " + "\n  ".join(log.splitlines()[-10:])) if log else ""
        raise BotFolderError(
            f"{manifest.name}: {outcome.reason}; in the sandbox a build runs offline, as on the "
            f"platform: ship what it downloads (run `npm ci` yourself for node_modules, vendor Go "
            f"modules), or run your own folder with --no-sandbox{tail}"
        )
    copies.mkdir(parents=True, exist_ok=True, mode=0o700)
    staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=copies))
    try:
        _unpack(outcome.tar, staging)
        staging.chmod(0o755)  # the sandbox's own user reads the copy (its parents need not allow it)
        try:
            staging.rename(target)
        except OSError:  # another run built the same content meanwhile: keep theirs
            shutil.rmtree(staging, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _prune(copies, keep=target, folder_key=folder_key)
    try:
        return load_manifest(target)
    except BotFolderError as error:
        raise BotFolderError(f"{manifest.name}: its built folder is not usable: {error}") from None


def _prune(copies: Path, *, keep: Path, folder_key: str) -> None:
    """Removes the older copies of the same folder, and any copy unused for UNUSED_COPY_SECONDS."""
    stale = time.time() - UNUSED_COPY_SECONDS
    for copy in copies.iterdir():
        if copy == keep or copy.name.startswith("."):
            continue
        with contextlib.suppress(OSError):
            if copy.name.startswith(f"{folder_key}-") or copy.stat().st_mtime < stale:
                shutil.rmtree(copy, ignore_errors=True)


def _unpack(tar: bytes, into: Path) -> None:
    """Unpacks a build's tar with tarfile's `data` filter (regular files and folders inside `into`
    only: no absolute paths, no links out, no devices, no set-id bits, owned by us), then makes it
    readable by others, as the sandbox's own user reads it whatever our umask."""
    with tarfile.open(fileobj=io.BytesIO(tar), mode="r:") as archive:
        try:
            archive.extractall(into, filter="data")
        except tarfile.TarError as error:
            raise BotFolderError(f"the build's output was refused: {error}") from None
    for path in _walk(into):
        mode = path.lstat().st_mode
        if stat.S_ISDIR(mode):
            path.chmod(0o755)
        elif stat.S_ISREG(mode):
            path.chmod(0o755 if mode & 0o100 else 0o644)
