"""Bot folders: a manifest (`septet-bot.toml`) and the process it starts, health-checked.

A bot folder is what an author writes, runs locally and submits, as it is:

    name = "greedy"                               # [a-z0-9-], 1-40 characters
    games = ["oh-hell", "oh7"]                    # game ids it plays
    command = ["python", "bot.py", "--address", "{address}"]
    build = ["npm", "ci"]                         # optional: run once, see below
    description = "..."                           # optional: plain text, at most 300 characters

`command` runs in the folder; `{address}` becomes the address to serve on (`unix:/path` or
`host:port`); a first word `python` means the interpreter running Septet, so a bot uses the
SDK from the same environment; a first word that is a relative path (`./go-lowest`, `bin/bot`)
is the folder's own program wherever the tool was started (`command_line`, the one place).
`start_bot` starts the process in its own process group, waits until the standard gRPC health
service says SERVING, and `RunningBot.stop` ends the whole group; a local process started from the
main thread also dies with the tool (PR_SET_PDEATHSIG, set by `setpriv --pdeathsig KILL`), so even
a tool killed with SIGKILL leaves no bot running. A process that dies mid-game is reported with
its exit code or signal (`RunningBot.exit_status`) and, locally, its output's tail.
Given a `referee.tools.sandbox.Sandbox`, the same process runs inside bubblewrap: no network, a
read-only view of the runtime and of its folder, its socket in a private folder, limits; the
platform always passes one for submitted bots, and `septet check`, `match` and `compare` by default
(`referee.tools.local_runs`). Bare or sandboxed, a bot gets only the environment a runtime needs
(`bot_environment`): never the caller's tokens and keys.

`build` runs locally before the first unsandboxed start of your own folder (again when the manifest
or a lock file changes; the stamp lives in a cache folder outside the bot folder). A sandboxed
start never builds: the platform builds a version once, at submission, offline, in its own
sandbox (`referee.tools.building`), and plays only the built, read-only folder; the local tools
build a folder the same way into a copy outside it first (`referee.tools.local_runs.built_copy`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.engine.games import all_games
from referee.tools.bot_logs import read_log_tail
from referee.tools.building import bounded_log
from referee.tools.sandbox import (
    BOT_ADDRESS,
    BOT_DIR,
    SOCKET_DIR,
    SOCKET_NAME,
    Prepared,
    Sandbox,
    _protos_env,
)
from referee.tools.sandbox_cgroups import SandboxGroup

MANIFEST = "septet-bot.toml"
NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
DESCRIPTION_MAX_CHARS = 300
"""A description is one short paragraph: it is shown on the bot's page and lists, kept with every
version and loaded with every active manifest by matchmaking, so it is bounded like a name. 300
characters hold the longest example's (about 150) twice over, and a page of them stays small."""
NOT_PLAIN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Unicode categories a description may not hold: control characters (newlines and tabs too),
format characters (the bidi overrides and isolates U+202A-U+202E, U+2066-U+2069, the marks
U+200E, U+200F, U+061C, zero-width joiners), surrogates, private-use and unassigned code points,
line and paragraph separators. What is left prints as it reads: text shown beside another bot's
cannot reorder, hide or break the line it sits in. Ordinary spaces (category Zs) are allowed."""
BUILD_STAMP = ".septet-build"
"""The name of the old in-folder stamp; never written now, still left out when packing."""
STDERR_TAIL_LINES = 20
STDERR_TAIL_BYTES = 2048
STDERR_TAIL_READ_BYTES = 64 * 1024
"""How much of a log's end is read to find its last lines."""


class BotFolderError(Exception):
    """A bot folder that cannot be used: bad manifest, failed build, no healthy start (one line,
    or a line and the stderr tail of the bot)."""


@dataclass(frozen=True)
class Manifest:
    """A validated `septet-bot.toml`."""

    folder: Path
    name: str
    games: tuple[str, ...]
    command: tuple[str, ...]
    build: tuple[str, ...] = ()
    description: str = ""


def is_bot_folder(path: str | Path) -> bool:
    return (Path(path) / MANIFEST).is_file()


def load_manifest(folder: str | Path) -> Manifest:
    """Reads and checks a bot folder's manifest; any problem raises BotFolderError naming it."""
    folder = Path(folder).resolve()
    path = folder / MANIFEST
    if not folder.is_dir():
        raise BotFolderError(f"{folder} is not a folder")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BotFolderError(f"{folder} has no {MANIFEST}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise BotFolderError(f"{path}: not valid TOML ({error})") from None
    known = {"name", "games", "command", "build", "description"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise BotFolderError(f"{path}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(known))})")
    name = data.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise BotFolderError(f"{path}: name must be 1-40 characters of a-z, 0-9 and '-', not {name!r}")
    games = data.get("games")
    if not isinstance(games, list) or not games or not all(isinstance(game, str) for game in games):
        raise BotFolderError(f"{path}: games must be a non-empty list of game ids")
    unknown_games = [game for game in games if game not in all_games()]
    if unknown_games:
        raise BotFolderError(f"{path}: unknown game {unknown_games[0]!r} (games: {', '.join(all_games())})")
    command = _words(data.get("command"), path, "command")
    if not any("{address}" in word for word in command):
        raise BotFolderError(f"{path}: command must pass the address to serve on, as {{address}}")
    build = _words(data.get("build", []), path, "build", required=False)
    description = data.get("description", "")
    if not isinstance(description, str):
        raise BotFolderError(f"{path}: description must be a string")
    _check_description(description, path)
    return Manifest(folder, name, tuple(dict.fromkeys(games)), command, build, description)


def _check_description(description: str, path: Path) -> None:
    """Refuses a description that is too long or not plain printable text (`NOT_PLAIN`), in one
    line naming the rule, the first offending character and the fix. Checked here, so `septet
    check`, `septet submit` and the platform's intake (which loads every archive's manifest with
    this function) refuse the same manifests."""
    if len(description) > DESCRIPTION_MAX_CHARS:
        raise BotFolderError(
            f"{path}: description is {len(description)} characters, over the limit of"
            f" {DESCRIPTION_MAX_CHARS}: shorten it to one short paragraph"
        )
    for position, char in enumerate(description):
        if unicodedata.category(char) in NOT_PLAIN:
            what = unicodedata.name(char, "a control or unassigned character")
            raise BotFolderError(
                f"{path}: description has U+{ord(char):04X} ({what}) at character {position + 1}:"
                " a description is plain printable text on one line, with no control, format or"
                " direction characters; remove it"
            )


def _words(value: object, path: Path, key: str, *, required: bool = True) -> tuple[str, ...]:
    words_ok = isinstance(value, list) and all(isinstance(word, str) and word for word in value)
    if words_ok and (value or not required):
        return tuple(value)  # type: ignore[arg-type]
    raise BotFolderError(f'{path}: {key} must be a list of words, like ["python", "bot.py"]')


def resolve_command(
    words: Sequence[str],
    address: str = "",
    *,
    folder: Path | None = None,
    seen_at: str | None = None,
    key: str = "command",
) -> list[str]:
    """The command line to run: `{address}` filled in, `python` as this interpreter, and a first
    word that is a relative path (`./bot`, `bin/bot`) as that file of the bot `folder`.

    This is the one place a manifest's words become a program, for every way a folder runs
    (check, match, compare, bot serve, the platform's qualification and rated play): a relative
    path means the folder's own file wherever the tool was started from, never a file of the
    caller's working directory. Given `folder`, that file is checked here (inside the folder, a
    file, executable) and a problem raises BotFolderError naming it folder-relative with the fix;
    it is then named absolutely, as the process sees the folder: at `seen_at` (the sandbox's
    /bot) or at `folder` itself. A first word without a slash is looked up on PATH, as a shell
    would (`node`, `java`). Without `folder` (a build command run in a copy of it) a relative
    first word is left as it is."""
    resolved = [word.replace("{address}", address) for word in words]
    if not resolved:
        return resolved
    first = resolved[0]
    if first in ("python", "python3"):
        resolved[0] = sys.executable
    elif folder is not None and "/" in first and not first.startswith("/"):
        relative = _folder_program(folder, first, key)
        resolved[0] = str(Path(seen_at or folder) / relative)
    return resolved


def _folder_program(folder: Path, word: str, key: str) -> str:
    """`word` (a relative path) as a path inside `folder`, checked: the file is there, is a
    regular file and is executable; else BotFolderError saying what to do."""
    where = Path(os.path.normpath(word))
    if where.is_absolute() or where.parts[:1] == ("..",) or where == Path("."):
        raise BotFolderError(f"its {key} {word!r} points outside the bot folder: name a file inside it")
    path = folder / where
    shown = f"{word!r} ({where.as_posix()} in {folder})"
    if not path.exists() and not path.is_symlink():
        hint = "build it into the folder (in the manifest's build step, or before you submit) or fix the path"
        raise BotFolderError(f"its {key} needs {shown}, which is not there: {hint}")
    if path.is_symlink() or not path.is_file():
        raise BotFolderError(f"its {key} needs {shown}, which is not a regular file")
    mode = path.stat().st_mode
    if not mode & 0o111:
        raise BotFolderError(
            f"its {key} needs {shown}, which is not executable: chmod +x {where.as_posix()}"
            " (or add a shebang line and chmod +x for a script)"
        )
    return where.as_posix()


def command_line(manifest: Manifest, address: str, *, sandboxed: bool = False) -> list[str]:
    """The words that start `manifest`'s bot serving on `address` (see `resolve_command`): its
    folder's own programs as the folder is seen by the process, /bot inside the sandbox. A
    program it needs that is missing raises BotFolderError with the manifest's name."""
    try:
        command = resolve_command(
            manifest.command, address, folder=manifest.folder, seen_at=BOT_DIR if sandboxed else None
        )
    except BotFolderError as error:
        raise BotFolderError(f"{manifest.name}: {error}") from None
    program = command[0]
    if "/" not in program and shutil.which(program) is None:
        ours = (manifest.folder / program).is_file()
        hint = f": it is a file of the folder, so write './{program}'" if ours else ""
        raise BotFolderError(f"{manifest.name}: its command needs {program!r}, which is not installed{hint}")
    if manifest.command[0].startswith("/") and not Path(program).is_file():
        raise BotFolderError(f"{manifest.name}: its command needs {program!r}, which is not installed")
    return command


def build(manifest: Manifest, *, quiet: bool = True, sandbox: Sandbox | None = None) -> None:
    """Runs the manifest's `build` for a local run of the author's own folder, once (again only when
    the manifest or a lock file changes). A sandboxed start never builds: the platform builds a
    version once at intake, offline (`referee.tools.building`), and starts only built folders, so
    nothing a bot's build wrote is run again or trusted later. The local stamp lives in a cache
    folder outside the bot folder, keyed by folder and fingerprint: a build cannot redirect it."""
    if not manifest.build or sandbox is not None:
        return
    with _build_lock(manifest.folder):  # two local runs starting one folder build it once
        _build_once(manifest, quiet=quiet)


def mark_built(manifest: Manifest) -> None:
    """Records that `manifest`'s folder is built as it is (a folder the platform built at intake),
    so a local unsandboxed start of it does not build again."""
    _write_stamp(_build_stamp(manifest))


@contextlib.contextmanager
def _build_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on a folder's build, across threads and processes (flock). The lock file
    lives beside the build stamps (one per folder, reused), not in the temporary folder, where
    every folder ever built left an empty file behind."""
    key = hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    locks = build_cache_dir() / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build_once(manifest: Manifest, *, quiet: bool) -> None:
    stamp = _build_stamp(manifest)
    if stamp.is_file():
        return
    try:
        command = resolve_command(manifest.build, folder=manifest.folder, key="build")
    except BotFolderError as error:
        raise BotFolderError(f"{manifest.name}: {error}") from None
    if "/" not in command[0] and shutil.which(command[0]) is None:
        raise BotFolderError(f"{manifest.name}: its build needs {command[0]!r}, which is not installed")
    done = subprocess.run(
        command,
        cwd=manifest.folder,
        capture_output=quiet,
        text=True,
        timeout=600,
        check=False,
        env={**bot_environment(), **_protos_env()},  # no secrets; SEPTET_PROTOS as in the sandbox
    )
    if done.returncode != 0:
        tail = _tail(done.stderr or done.stdout or "")
        raise BotFolderError(f"{manifest.name}: build {' '.join(command)} failed ({done.returncode}){tail}")
    _write_stamp(stamp)


def build_cache_dir() -> Path:
    """Where local build stamps live: never inside a bot folder (SEPTET_BUILD_CACHE overrides)."""
    configured = os.environ.get("SEPTET_BUILD_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "septet" / "builds"


def _build_stamp(manifest: Manifest) -> Path:
    """The stamp of this folder at this fingerprint: its existence means built."""
    key = hashlib.sha256(f"{manifest.folder}\0{_build_fingerprint(manifest)}".encode()).hexdigest()
    return build_cache_dir() / key


def _write_stamp(stamp: Path) -> None:
    """Creates the stamp without following a link (O_NOFOLLOW), in a cache folder only we write."""
    stamp.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    os.close(os.open(stamp, flags, 0o600))


def _build_fingerprint(manifest: Manifest) -> str:
    digest = hashlib.sha256(" ".join(manifest.build).encode())
    for name in (MANIFEST, "package-lock.json", "package.json", "requirements.txt"):
        path = manifest.folder / name
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _tail(text: str) -> str:
    """The last lines of a bot's output, bounded (`referee.tools.building.bounded_log`), indented."""
    lines = text.strip().splitlines()[-STDERR_TAIL_LINES:]
    kept = bounded_log("\n".join(lines), limit=STDERR_TAIL_BYTES)
    return ("\n  " + kept.replace("\n", "\n  ")) if kept else ""


@dataclass
class RunningBot:
    """A started bot process serving gRPC at `address`; `stop()` ends its whole process group.

    A sandboxed bot serves inside its sandbox; its `address` (unix:/proc/self/fd/N, a descriptor
    of the socket itself, valid in this process only) is known once `wait_until_healthy` found
    the socket."""

    manifest: Manifest
    address: str
    process: subprocess.Popen[bytes]
    log_path: Path
    _scratch: Path | None = field(default=None, repr=False)
    _sandboxed: Prepared | None = field(default=None, repr=False)
    _info_fd: int | None = field(default=None, repr=False)
    _socket_fd: int | None = field(default=None, repr=False)
    _when_stopped: list[Callable[[], None]] = field(default_factory=list, repr=False)

    @property
    def name(self) -> str:
        return self.manifest.name

    def when_stopped(self, callback: Callable[[], None]) -> None:
        """Calls `callback` once, after `stop()` has ended the bot's processes (a platform worker
        lets go of the unpacked folder the bot played from, say)."""
        self._when_stopped.append(callback)

    @property
    def sandbox_group(self) -> SandboxGroup | None:
        """The control group of a sandboxed bot (None when unsandboxed or without cgroups)."""
        return self._sandboxed.group if self._sandboxed is not None else None

    def alive(self) -> bool:
        return self.process.poll() is None

    def stderr_tail(self) -> str:
        """The last lines of the bot's output, read from the end with a byte cap (a bot may have
        written up to its file-size limit) and never through a link."""
        return _tail(read_log_tail(self.log_path, limit=STDERR_TAIL_READ_BYTES, whole_lines=False).text)

    def exit_status(self, wait: float = 0.0) -> str | None:
        """How the bot's process ended ("exited with code 3", "was killed by SIGSEGV"), waiting up
        to `wait` seconds for it to end; None while it runs. Safe to publish (no output of the bot)."""
        try:
            code = self.process.wait(timeout=wait) if wait > 0 else self.process.poll()
        except subprocess.TimeoutExpired:
            return None
        return None if code is None else describe_exit(code, sandboxed=self._sandboxed is not None)

    def crash_report(self, wait: float = 0.0) -> str | None:
        """`exit_status` and the tail of the bot's output, for the author running it locally (the
        output is the bot's own: never put it where others read, such as a published replay)."""
        status = self.exit_status(wait)
        return None if status is None else f"its process {status}{self.stderr_tail()}"

    def wait_until_healthy(self, timeout: float = 15.0) -> None:
        """Returns once the bot's health service says SERVING; otherwise stops the bot and raises
        BotFolderError with the tail of its stderr."""
        deadline = time.monotonic() + timeout
        try:
            if self._sandboxed is not None and self._socket_fd is None:
                self._socket_fd = _open_sandbox_socket(self, deadline)
                self.address = f"unix:/proc/self/fd/{self._socket_fd}"
                timeout = round(max(0.1, deadline - time.monotonic()), 1)  # what is left of it
            wait_until_serving(self.address, timeout, process=self.process)
        except BotFolderError as error:
            tail = self.stderr_tail()
            self.stop(grace=1.0)
            raise BotFolderError(f"{self.manifest.name}: {error}{tail}") from None

    def sandbox_pid(self, deadline: float) -> int:
        """The host pid of the sandbox's first process, from bwrap's --info-fd (waits for it)."""
        if self._info_fd is None:
            raise BotFolderError("not sandboxed")
        text = b""
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BotFolderError(f"exited with code {self.process.returncode} before serving")
            ready, _, _ = select.select([self._info_fd], [], [], 0.05)
            if ready:
                chunk = os.read(self._info_fd, 4096)
                text += chunk
                with contextlib.suppress(ValueError):
                    return int(json.loads(text)["child-pid"])
                if not chunk:
                    break
        raise BotFolderError("the sandbox did not say its process id")

    def stop(self, grace: float = 3.0) -> int | None:
        """SIGTERM to the bot's process group, SIGKILL after `grace` seconds; returns its exit code.
        A sandboxed bot's control group is then emptied and removed."""
        code = stop_process_group(self.process, grace)
        if self._sandboxed is not None:
            self._sandboxed.cleanup()
        for fd in (self._info_fd, self._socket_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._info_fd = self._socket_fd = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
        callbacks, self._when_stopped = self._when_stopped, []
        for callback in callbacks:
            callback()
        return code

    def __enter__(self) -> RunningBot:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


def _open_sandbox_socket(bot: RunningBot, deadline: float) -> int:
    """A descriptor (O_PATH) of the socket the bot made in its sandbox, once it is there.

    The path is resolved through the sandbox's own root, whose /run and /run/septet the bot cannot
    change; the last component is opened without following a link, and must be a socket owned by
    the sandbox's uid. Connecting through /proc/self/fd/N then reaches that very inode: a link or
    a swap made later by the bot is never followed by the host (which may be root)."""
    assert bot._sandboxed is not None
    path = f"/proc/{bot.sandbox_pid(deadline)}/root{SOCKET_DIR}/{SOCKET_NAME}"
    while time.monotonic() < deadline:
        if bot.process.poll() is not None:
            raise BotFolderError(f"exited with code {bot.process.returncode} before serving")
        try:
            fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            time.sleep(0.02)
            continue
        except OSError as error:
            raise BotFolderError(f"cannot reach its socket ({error.strerror})") from None
        found = os.fstat(fd)
        if stat.S_ISSOCK(found.st_mode) and found.st_uid == bot._sandboxed.uid:
            return fd
        os.close(fd)
        raise BotFolderError(
            f"{SOCKET_DIR}/{SOCKET_NAME} is not a socket of the bot (a link or a file): refused"
        )
    raise BotFolderError(
        f"not healthy: nothing is listening at {SOCKET_DIR}/{SOCKET_NAME} in its sandbox in time:"
        " does your bot serve on the {address} it was given (also in SEPTET_BOT_ADDRESS)?"
    )


def describe_exit(code: int, *, sandboxed: bool = False) -> str:
    """A process's return code in words: a negative one is the signal that killed it; in the
    sandbox the launcher passes on bubblewrap's code, where 128 + N means signal N."""
    number = -code if code < 0 else code - 128 if sandboxed and 128 < code < 128 + 65 else None
    if number is None:
        return f"exited with code {code}"
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    return f"was killed by {name}" if code < 0 else f"exited with code {code} (killed by {name})"


def stop_process_group(process: subprocess.Popen[bytes], grace: float = 3.0) -> int | None:
    """SIGTERM to a process group, SIGKILL after `grace` seconds, and SIGKILL to any orphans left."""
    _signal_group(process, signal.SIGTERM)
    try:
        code = process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        _signal_group(process, signal.SIGKILL)
        code = process.wait(timeout=grace)
    _signal_group(process, signal.SIGKILL)
    return code


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


def start_bot(
    folder: str | Path | Manifest,
    *,
    address: str | None = None,
    startup_timeout: float = 15.0,
    sandbox: Sandbox | None = None,
    env: Mapping[str, str] | None = None,
) -> RunningBot:
    """Builds if needed, starts the bot on `address` (default: a private unix socket) and waits
    until it is healthy; raises BotFolderError with its stderr tail when it does not get there.
    With a `sandbox` the bot always serves on the private socket (it has no network), and a
    sandbox that cannot be made raises `referee.tools.sandbox.SandboxError` (not the bot's fault).
    `env`: variables the caller gives the bot on purpose (see `launch_bot`)."""
    bot = launch_bot(folder, address=address, sandbox=sandbox, env=env)
    bot.wait_until_healthy(startup_timeout)
    return bot


MAX_SOCKET_PATH = 100
"""A unix socket's path must fit in 108 bytes (sun_path): a longer TMPDIR cannot hold the bot's."""


def _scratch_folder(prefix: str) -> Path:
    """A new private folder for one bot start (its socket, its log) in the temporary folder, or in
    /tmp when TMPDIR is too deep for a unix socket path below it (pytest's folders can be)."""
    base = tempfile.gettempdir()
    longest = len(os.path.join(base, f"{prefix}{'x' * 8}", "run", "bot.sock"))
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base if longest <= MAX_SOCKET_PATH else "/tmp"))


def launch_bot(
    folder: str | Path | Manifest,
    *,
    address: str | None = None,
    sandbox: Sandbox | None = None,
    env: Mapping[str, str] | None = None,
    show_output: bool = False,
) -> RunningBot:
    """`start_bot` without the wait: builds, starts the process and returns at once, so several
    bots can start together and be waited for at the same time (`RunningBot.wait_until_healthy`).
    Call it on a thread that outlives the bot: a sandboxed bot dies with the thread that started it
    (bubblewrap's --die-with-parent follows the parent thread). The bot's environment is
    `bot_environment()` bare, or the sandbox's own few variables, plus its address and `env`: the
    variables a caller passes on purpose (`septet check --env NAME=VALUE`). `show_output` (bare
    only): the bot writes to this process's stdout and stderr, the author's terminal, rather than
    to its log (`septet bot connect`, which runs the author's own bot for as long as it plays)."""
    manifest = folder if isinstance(folder, Manifest) else load_manifest(folder)
    if sandbox is not None and address is not None:
        raise ValueError("a sandboxed bot has no network: it serves on its private unix socket")
    if sandbox is not None and show_output:
        raise ValueError("a sandboxed bot's output goes to its log only")
    build(manifest, sandbox=sandbox)
    scratch = _scratch_folder(f"septet-{manifest.name}-")
    if sandbox is None:
        run_dir = scratch / "run"
        run_dir.mkdir()
        address = address or f"unix:{run_dir / 'bot.sock'}"
    else:
        address = BOT_ADDRESS  # inside the sandbox; the host's way to it is found once it serves
    log_path = scratch / "stderr.log"
    try:
        command = command_line(manifest, address, sandboxed=sandbox is not None)
    except BotFolderError:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    bot_env = {**(env or {}), "SEPTET_BOT_ADDRESS": address, "PYTHONUNBUFFERED": "1"}
    if sandbox is None:
        return _spawn(
            manifest, command, address, log_path, scratch,
            env=_process_env(bot_env, sandboxed=False), show_output=show_output,
        )  # fmt: skip
    info_read, info_write = _info_pipe()
    try:
        prepared = sandbox.prepare(command, folder=manifest.folder, env=bot_env, info_fd=info_write)
    except BaseException:
        os.close(info_read)
        os.close(info_write)
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    try:
        bot = _spawn(
            manifest, prepared.words, "", log_path, scratch,
            env=_process_env(bot_env, sandboxed=True), pass_fds=(info_write,), sandboxed=True,
        )  # fmt: skip
    except BaseException:
        os.close(info_read)
        prepared.cleanup()
        raise
    finally:
        os.close(info_write)
    bot._sandboxed = prepared
    bot._info_fd = info_read
    return bot


def _info_pipe() -> tuple[int, int]:
    """A pipe for bwrap's --info-fd; its write end numbered 10 or more, clear of the descriptors
    the sandbox's launcher uses (7, 8, 9)."""
    read, write = os.pipe()
    high = fcntl.fcntl(write, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(write)
    return read, high


SETPRIV = "setpriv"
"""util-linux's setpriv: `--pdeathsig KILL` sets PR_SET_PDEATHSIG and execs the command."""


def lifeline() -> list[str]:
    """Words to put before a local bot's command so it dies with the tool however the tool ends
    (SIGKILL included): `setpriv --pdeathsig KILL --`, which survives into the bot's exec.

    Not a `preexec_fn`: Python code between fork and exec runs the at-fork handlers of gRPC, whose
    child handler aborted the child now and then (exit -6 before serving). Only from the main
    thread: the signal follows the thread that forked, and a worker thread ending would kill a bot
    still in use; there (and where setpriv is missing) the process group that
    `stop_process_group` ends is what stops the bot."""
    if threading.current_thread() is not threading.main_thread():
        return []
    found = shutil.which(SETPRIV)
    return [found, "--pdeathsig", "KILL", "--"] if found else []


def _spawn(
    manifest: Manifest,
    command: Sequence[str],
    address: str,
    log_path: Path,
    scratch: Path,
    *,
    env: dict[str, str],
    pass_fds: tuple[int, ...] = (),
    sandboxed: bool = False,
    show_output: bool = False,
) -> RunningBot:
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*command] if sandboxed else [*lifeline(), *command],
            cwd=manifest.folder,
            stdin=subprocess.DEVNULL,
            stdout=None if show_output else log,
            stderr=None if show_output else subprocess.STDOUT,
            start_new_session=True,
            env=env,
            pass_fds=pass_fds,
        )
    return RunningBot(manifest, address, process, log_path, scratch)


HEALTH_POLL_SECONDS = (0.1, 1.0)
"""How long one health poll waits for the bot's server before the next tries afresh: the first
this long, each next one twice as long up to the second figure (a busy machine answers late)."""


def _process_env(bot_env: dict[str, str], *, sandboxed: bool) -> dict[str, str]:
    """A bot run bare gets only what a runtime needs of our environment (`bot_environment`), plus
    SEPTET_PROTOS as in the sandbox and `bot_env`; a sandboxed one gets only `bot_env` inside, and
    the sandbox's own processes (which a bot could inspect) only PATH. Never the caller's secrets
    (SEPTET_TOKEN, cloud keys) nor the worker's."""
    if sandboxed:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return {**bot_environment(), **_protos_env(), **bot_env}


BOT_ENV_NAMES = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR",
        "XDG_CACHE_HOME", "LD_LIBRARY_PATH", "SSL_CERT_FILE", "SSL_CERT_DIR",
        "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE",
        "NODE_PATH", "GOPATH", "GOROOT", "GOCACHE", "GOFLAGS", "GO111MODULE", "JAVA_HOME",
    }
)  # fmt: skip
"""What a bot (or its build) run bare keeps of the caller's environment: where programs, its home,
the locale, the temporary folder and the runtimes' own folders are (Python, Node.js, Go, Java);
and the locale's LC_* (`BOT_ENV_PREFIXES`). Nothing else: not SEPTET_TOKEN or SEPTET_SERVER, not
AWS_*, DATABASE_URL, REDIS_URL or any *_TOKEN, *_KEY, *_SECRET. An allow-list, because a deny-list
misses the credential nobody thought of. A variable a bot needs is passed by name
(`septet check --env NAME[=VALUE]`)."""
BOT_ENV_PREFIXES = ("LC_",)
SECRET_MARKERS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE")
"""Parts of a name that keep a variable out even when the allow-list would take it."""


def bot_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment (`environ`, default os.environ) cut down to what a bot run bare
    needs (`BOT_ENV_NAMES`, LC_*), with no name that looks like a secret (`SECRET_MARKERS`)."""
    source = os.environ if environ is None else environ
    return {
        name: value
        for name, value in source.items()
        if (name in BOT_ENV_NAMES or name.startswith(BOT_ENV_PREFIXES))
        and not any(marker in name.upper() for marker in SECRET_MARKERS)
    }


def wait_until_serving(
    address: str, timeout: float, *, process: subprocess.Popen[bytes] | None = None
) -> None:
    """Polls the standard health service until SERVING; BotFolderError on exit or timeout, saying
    which of the ways it failed: nothing listening at the address, a server without the health
    service (at once: a server's services are fixed once it serves), or an answer other than
    SERVING.

    Each poll is a channel of its own that waits for the server (wait_for_ready) a while
    (HEALTH_POLL_SECONDS). One channel for every poll went wrong two ways: gRPC backs off a second
    before it reconnects to an address that refused it, and on gRPC's iomgr transport
    (referee.grpc_transport) a connection made while the bot had bound its socket but not yet
    started its server waited 5 s for the server's first frame, and every poll with it. A bot
    given by address (no `process`: nothing of ours is starting) whose address refuses connections
    for REFUSED_GRACE seconds is not waited for any longer.
    """
    started = time.monotonic()
    deadline = started + timeout
    status, patience = "no answer", HEALTH_POLL_SECONDS[0]
    listening: bool | None = None
    while (left := deadline - time.monotonic()) > 0:
        if process is not None and process.poll() is not None:
            raise BotFolderError(f"exited with code {process.returncode} before serving")
        with grpc.insecure_channel(address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            try:
                reply = health.Check(
                    health_pb2.HealthCheckRequest(service=""),
                    timeout=min(patience, left),
                    wait_for_ready=True,
                )
            except grpc.RpcError as error:
                status = error.code().name
                if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                    raise BotFolderError(
                        f"answers on {address} but has no grpc.health.v1.Health service (UNIMPLEMENTED):"
                        f" serve it and answer SERVING, see {HEALTH_DOCS}"
                    ) from None
                patience = min(2 * patience, HEALTH_POLL_SECONDS[1])
                listening = is_listening(address)
                if listening is False and process is None and time.monotonic() - started >= REFUSED_GRACE:
                    break
            else:
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
                status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
                listening = True
        time.sleep(0.02)
    waited = time.monotonic() - started
    if listening is False:
        hint = (
            "does your bot serve on the {address} it was given (also in SEPTET_BOT_ADDRESS)?"
            if process is not None
            else "is the bot running and serving there?"
        )
        raise BotFolderError(f"not healthy: nothing is listening on {address} after {waited:.0f} s: {hint}")
    raise BotFolderError(f"not healthy on {address} within {timeout:g} s (health: {status})")


REFUSED_GRACE = 1.0
"""Seconds a bot given by address may refuse connections before the health wait gives up on it."""
HEALTH_DOCS = "docs/bots.md#health"


def is_listening(address: str, timeout: float = 0.2) -> bool | None:
    """Whether something accepts connections at a gRPC `address` (`unix:PATH`, `host:port`,
    `[v6]:port`): a plain connect, closed at once. None for a form it cannot probe."""
    if address.startswith("unix:"):
        path = address[len("unix:") :]
        path = path[2:] if path.startswith("//") else path
        family, target = socket.AF_UNIX, path
        try:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.settimeout(timeout)
                probe.connect(target)
        except OSError:
            return False
        return True
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or address.startswith(("dns:", "ipv4:", "ipv6:", "unix-abstract:")):
        return None
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except TimeoutError:
        return None  # a filtered port or a slow network: not known to be closed
    except OSError:
        return False
    return True
