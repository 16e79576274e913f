"""Bot folders: a manifest (`septet-bot.toml`) and the process it starts, health-checked.

A bot folder is what an author writes, runs locally and submits, as it is:

    name = "greedy"                               # [a-z0-9-], 1-40 characters
    games = ["oh-hell", "oh7"]                    # game ids it plays
    command = ["python", "bot.py", "--address", "{address}"]
    build = ["npm", "ci"]                         # optional: run once, see below
    description = "..."                           # optional

`command` runs in the folder; `{address}` becomes the address to serve on (`unix:/path` or
`host:port`); a first word `python` means the interpreter running Septet, so a bot uses the
SDK from the same environment. `start_bot` starts the process in its own process group, waits
until the standard gRPC health service says SERVING, and `RunningBot.stop` ends the whole group;
a local process started from the main thread also dies with the tool (PR_SET_PDEATHSIG, set by
`setpriv --pdeathsig KILL`), so even a tool killed with SIGKILL leaves no bot running.
Given a `referee.tools.sandbox.Sandbox`, the same process runs inside bubblewrap: no network, a
read-only view of the runtime and of its folder, its socket in a private folder, limits; the
platform always passes one for submitted bots, `septet match` on your own folders need not.

`build` runs locally before the first unsandboxed start of your own folder (again when the manifest
or a lock file changes; the stamp lives in a cache folder outside the bot folder). A sandboxed
start never builds: the platform builds a version once, at submission, offline, in its own
sandbox (`referee.tools.building`), and plays only the built, read-only folder.
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
import stat
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.engine.games import all_games
from referee.tools.bot_logs import read_log_tail
from referee.tools.building import bounded_log
from referee.tools.sandbox import BOT_ADDRESS, SOCKET_DIR, SOCKET_NAME, Prepared, Sandbox
from referee.tools.sandbox_cgroups import SandboxGroup

MANIFEST = "septet-bot.toml"
NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
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
    return Manifest(folder, name, tuple(dict.fromkeys(games)), command, build, description)


def _words(value: object, path: Path, key: str, *, required: bool = True) -> tuple[str, ...]:
    words_ok = isinstance(value, list) and all(isinstance(word, str) and word for word in value)
    if words_ok and (value or not required):
        return tuple(value)  # type: ignore[arg-type]
    raise BotFolderError(f'{path}: {key} must be a list of words, like ["python", "bot.py"]')


def resolve_command(words: Sequence[str], address: str = "") -> list[str]:
    """The command line to run: `{address}` filled in, `python` as this interpreter."""
    resolved = [word.replace("{address}", address) for word in words]
    if resolved and resolved[0] in ("python", "python3"):
        resolved[0] = sys.executable
    return resolved


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
    """An exclusive lock on a folder's build, across threads and processes (flock)."""
    key = hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"septet-build-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build_once(manifest: Manifest, *, quiet: bool) -> None:
    stamp = _build_stamp(manifest)
    if stamp.is_file():
        return
    command = resolve_command(manifest.build)
    if shutil.which(command[0]) is None and not Path(command[0]).is_file():
        raise BotFolderError(f"{manifest.name}: its build needs {command[0]!r}, which is not installed")
    done = subprocess.run(
        command, cwd=manifest.folder, capture_output=quiet, text=True, timeout=600, check=False
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

    @property
    def name(self) -> str:
        return self.manifest.name

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
    raise BotFolderError(f"made no socket at {SOCKET_DIR}/{SOCKET_NAME} in time")


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
) -> RunningBot:
    """Builds if needed, starts the bot on `address` (default: a private unix socket) and waits
    until it is healthy; raises BotFolderError with its stderr tail when it does not get there.
    With a `sandbox` the bot always serves on the private socket (it has no network), and a
    sandbox that cannot be made raises `referee.tools.sandbox.SandboxError` (not the bot's fault)."""
    bot = launch_bot(folder, address=address, sandbox=sandbox)
    bot.wait_until_healthy(startup_timeout)
    return bot


def launch_bot(
    folder: str | Path | Manifest, *, address: str | None = None, sandbox: Sandbox | None = None
) -> RunningBot:
    """`start_bot` without the wait: builds, starts the process and returns at once, so several
    bots can start together and be waited for at the same time (`RunningBot.wait_until_healthy`).
    Call it on a thread that outlives the bot: a sandboxed bot dies with the thread that started it
    (bubblewrap's --die-with-parent follows the parent thread)."""
    manifest = folder if isinstance(folder, Manifest) else load_manifest(folder)
    if sandbox is not None and address is not None:
        raise ValueError("a sandboxed bot has no network: it serves on its private unix socket")
    build(manifest, sandbox=sandbox)
    scratch = Path(tempfile.mkdtemp(prefix=f"septet-{manifest.name}-"))
    if sandbox is None:
        run_dir = scratch / "run"
        run_dir.mkdir()
        address = address or f"unix:{run_dir / 'bot.sock'}"
    else:
        address = BOT_ADDRESS  # inside the sandbox; the host's way to it is found once it serves
    log_path = scratch / "stderr.log"
    command = resolve_command(manifest.command, address)
    if shutil.which(command[0]) is None and not Path(command[0]).is_file():
        shutil.rmtree(scratch, ignore_errors=True)
        raise BotFolderError(f"{manifest.name}: its command needs {command[0]!r}, which is not installed")
    bot_env = {"SEPTET_BOT_ADDRESS": address, "PYTHONUNBUFFERED": "1"}
    if sandbox is None:
        return _spawn(
            manifest, command, address, log_path, scratch, env=_process_env(bot_env, sandboxed=False)
        )
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
) -> RunningBot:
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*command] if sandboxed else [*lifeline(), *command],
            cwd=manifest.folder,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
            pass_fds=pass_fds,
        )
    return RunningBot(manifest, address, process, log_path, scratch)


HEALTH_POLL_SECONDS = (0.1, 1.0)
"""How long one health poll waits for the bot's server before the next tries afresh: the first
this long, each next one twice as long up to the second figure (a busy machine answers late)."""


def _process_env(bot_env: dict[str, str], *, sandboxed: bool) -> dict[str, str]:
    """A local bot inherits our environment; a sandboxed one gets only `bot_env` inside, and the
    sandbox's own processes (which a bot could inspect) only PATH: never the worker's secrets."""
    if sandboxed:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return {**os.environ, **bot_env}


def wait_until_serving(
    address: str, timeout: float, *, process: subprocess.Popen[bytes] | None = None
) -> None:
    """Polls the standard health service until SERVING; BotFolderError on exit or timeout.

    Each poll is a channel of its own that waits for the server (wait_for_ready) a while
    (HEALTH_POLL_SECONDS). One channel for every poll went wrong two ways: gRPC backs off a second
    before it reconnects to an address that refused it, and on gRPC's iomgr transport
    (referee.grpc_transport) a connection made while the bot had bound its socket but not yet
    started its server waited 5 s for the server's first frame, and every poll with it.
    """
    deadline = time.monotonic() + timeout
    status, patience = "no answer", HEALTH_POLL_SECONDS[0]
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
                patience = min(2 * patience, HEALTH_POLL_SECONDS[1])
            else:
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
                status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        time.sleep(0.02)
    raise BotFolderError(f"not healthy on {address} within {timeout:g} s (health: {status})")
