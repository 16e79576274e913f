"""Running a bot's process inside bubblewrap (`bwrap`, Debian package `bubblewrap`).

A submitted bot is untrusted code. `Sandbox.command` wraps its command line so that it runs with:

- no network: a new network namespace holding only a loopback; the referee reaches the bot
  through a unix socket in a folder bound into the sandbox at the same path on both sides;
- a read-only view of the runtime (/usr, a few files of /etc such as the dynamic loader's cache,
  the Python installation and the SDK) and of the bot's own folder; nothing else of the machine
  (no /home, /root, /var, no other bots, no database, no /etc/passwd or /etc/shadow);
- a private /tmp (a size-limited tmpfs) and an empty environment but for a few variables;
- new PID, IPC, UTS and cgroup namespaces and `--die-with-parent`: killing the bwrap process
  (the process group `botfolder.RunningBot.stop` signals) kills the namespace's first process,
  and with it every process of the bot, orphans and daemons included;
- a user of its own with no capabilities: when the referee runs as root, bwrap sets up the
  namespaces and `setpriv` then drops to an unprivileged uid picked for this start, so file
  permissions, /proc/sys and RLIMIT_NPROC hold (root is exempt from the process limit); when it
  runs as an ordinary user, bwrap puts the bot in a user namespace without capabilities;
- resource limits set by `prlimit` before bwrap (inherited by every process): address space
  (memory), CPU seconds, processes and threads, file size, open files.

A build step (`npm ci`) gets the same sandbox with the network shared and its own folder
writable, since installing packages needs both; the bot that runs afterwards has neither.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import referee

BWRAP = "bwrap"
SETPRIV = "/usr/bin/setpriv"
PRLIMIT = "prlimit"
SANDBOX_UID_FIRST = 200_000
"""Sandboxed bots run as uids from here when the referee is root (no passwd entry needed)."""
SANDBOX_UID_COUNT = 50_000
ETC_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "localtime",
    "nsswitch.conf",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
)
"""The parts of /etc a runtime may need; never passwd, shadow, hosts' secrets or config."""
BUILD_ETC_FILES = ("resolv.conf", "hosts", "gai.conf")
"""What name resolution needs, for builds that download packages."""
RUNTIME_SYMLINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
MiB = 1 << 20


class SandboxError(Exception):
    """The sandbox cannot be used here (bwrap missing or refused by the kernel): not the bot's fault."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of every process of a sandboxed bot (setrlimit, inherited across fork)."""

    memory_bytes: int = 4096 * MiB
    """RLIMIT_AS: address space per process. Generous because runtimes reserve far more than they
    touch (Node's V8, glibc's per-thread arenas); an allocation past it fails (MemoryError)."""
    cpu_seconds: int = 900
    """RLIMIT_CPU: CPU time per process; SIGXCPU at this, SIGKILL 5 s later. Decision deadlines
    stop a spinning bot long before; this ends one that spins after the match."""
    processes: int = 256
    """RLIMIT_NPROC: processes and threads of the sandbox's uid (a gRPC server uses dozens)."""
    file_bytes: int = 64 * MiB
    """RLIMIT_FSIZE: the largest file a bot may write, its stdout/stderr log included."""
    open_files: int = 1024
    """RLIMIT_NOFILE."""
    tmp_bytes: int = 256 * MiB
    """Size of the private /tmp (tmpfs)."""

    def prlimit(self) -> list[str]:
        """The `prlimit` command prefix that sets these limits and execs the rest (thread-safe,
        unlike a preexec function in a threaded worker)."""
        return [
            PRLIMIT,
            f"--as={self.memory_bytes}",
            f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 5}",
            f"--nproc={self.processes}",
            f"--fsize={self.file_bytes}",
            f"--nofile={self.open_files}",
            "--core=0",
            "--",
        ]


BUILD_LIMITS = Limits(cpu_seconds=1800, file_bytes=512 * MiB, tmp_bytes=1024 * MiB, processes=512)
"""A build (`npm ci`) writes more and longer than a bot that plays."""


@dataclass(frozen=True)
class Sandbox:
    """How bot processes are confined; `command()` wraps one command line for one start."""

    limits: Limits = field(default_factory=Limits)
    read_only: tuple[Path, ...] = ()
    """Further folders visible read-only at their own paths (a runtime outside /usr, say)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Further environment variables for the bot (the sandbox starts from an empty one)."""

    def command(
        self,
        words: Sequence[str],
        *,
        folder: Path,
        run_dir: Path,
        env: Mapping[str, str] | None = None,
        build: bool = False,
    ) -> list[str]:
        """The command line running `words` in `folder` under its limits and bwrap. `run_dir` is
        bound read-write (the bot's socket lives there); `folder` is read-only, or read-write
        with the network shared when `build`; `env` adds variables."""
        check_available()
        limits = BUILD_LIMITS if build else self.limits
        uid = _sandbox_uid()
        if uid is not None:
            os.chown(run_dir, uid, uid)
            if build:
                _chown_tree(folder, uid)
        binds: list[tuple[str, Path]] = [("--ro-bind", path) for path in _runtime_paths(self.read_only)]
        binds.append(("--bind" if build else "--ro-bind", folder))
        binds.append(("--bind", run_dir))
        etc = ETC_FILES + (BUILD_ETC_FILES if build else ())
        args = [*limits.prlimit(), BWRAP, "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
        args.append("--unshare-cgroup-try")
        args += ["--die-with-parent", "--new-session", "--hostname", "septet-bot"]
        if not build:
            args.append("--unshare-net")
        if uid is None:
            args += ["--unshare-user", "--cap-drop", "ALL"]
        for name in RUNTIME_SYMLINKS:
            target = Path("/") / name
            if target.is_symlink():
                args += ["--symlink", os.readlink(target), str(target)]
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
        created: set[Path] = {Path("/"), Path("/tmp"), Path("/proc"), Path("/dev")}
        bound = [path for _, path in binds]
        for name in etc:
            path = Path("/etc") / name
            if path.exists():
                binds.append(("--ro-bind", path))
        for flag, path in sorted(binds, key=lambda bind: len(bind[1].parts)):
            for parent in reversed(path.parents):
                if parent not in created and parent not in bound:
                    args += ["--perms", "0755", "--dir", str(parent)]
                    created.add(parent)
            args += [flag, str(path), str(path)]
            created.add(path)
        variables = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": "/tmp",
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "MALLOC_ARENA_MAX": "2",  # fewer per-thread heaps: less address space for the same work
            **_protos_env(),
            **self.env,
            **(env or {}),
        }
        args += ["--clearenv"]
        for key, value in variables.items():
            args += ["--setenv", key, value]
        args += ["--chdir", str(folder), "--"]
        if uid is not None:
            args += [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
            args += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
        return args + list(words)

    def finish_build(self, folder: Path) -> None:
        """Gives a built folder back to the referee's user (a sandboxed build owned it)."""
        if _sandbox_uid() is not None:
            _chown_tree(folder, os.geteuid())


def _sandbox_uid() -> int | None:
    """A fresh unprivileged uid when we are root (bwrap then runs privileged); None otherwise."""
    if os.geteuid() != 0:
        return None
    return SANDBOX_UID_FIRST + secrets.randbelow(SANDBOX_UID_COUNT)


def _chown_tree(folder: Path, uid: int) -> None:
    os.chown(folder, uid, uid, follow_symlinks=False)
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)


def _runtime_paths(extra: Iterable[Path]) -> list[Path]:
    """/usr, this Python (installation and environment) and the SDK package, plus `extra`;
    nested paths are dropped (their parent is bound already)."""
    candidates = [Path("/usr"), Path(sys.base_prefix), Path(sys.prefix), Path(sys.exec_prefix)]
    candidates += [Path(referee.__file__).resolve().parent, *(Path(path) for path in extra)]
    protos = os.environ.get("SEPTET_PROTOS") or str(_repository_protos() or "")
    if protos:
        candidates.append(Path(protos))
    resolved = sorted({path.resolve() for path in candidates if path.exists()}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in resolved:
        if not any(path.is_relative_to(parent) for parent in kept):
            kept.append(path)
    return kept


def _repository_protos() -> Path | None:
    """The protos/ folder beside the SDK's package, in a source checkout."""
    path = Path(referee.__file__).resolve().parents[1] / "protos"
    return path if path.is_dir() else None


def _protos_env() -> dict[str, str]:
    """SEPTET_PROTOS for bots that load the .proto files at run time (the Node.js example)."""
    protos = os.environ.get("SEPTET_PROTOS") or str(_repository_protos() or "")
    return {"SEPTET_PROTOS": str(Path(protos).resolve())} if protos else {}


@functools.cache
def check_available() -> None:
    """Raises SandboxError unless bwrap is installed and can make the namespaces here."""
    if shutil.which(BWRAP) is None:
        raise SandboxError("bubblewrap is not installed (Debian package `bubblewrap`, command bwrap)")
    if (os.geteuid() == 0 and not Path(SETPRIV).is_file()) or shutil.which(PRLIMIT) is None:
        raise SandboxError(f"the sandbox needs {SETPRIV} and {PRLIMIT} (Debian package util-linux)")
    probe = [BWRAP, "--unshare-pid", "--unshare-net", "--die-with-parent", "--ro-bind", "/usr", "/usr"]
    for name in RUNTIME_SYMLINKS:
        target = Path("/") / name
        if target.is_symlink():
            probe += ["--symlink", os.readlink(target), str(target)]
    probe += ["--proc", "/proc", "--dev", "/dev", "true"]
    if os.geteuid() != 0:
        probe.insert(1, "--unshare-user")
    done = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        reason = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise SandboxError(f"bubblewrap cannot make a sandbox here: {reason[0]}")


def available() -> bool:
    """Whether `check_available` passes."""
    try:
        check_available()
    except SandboxError:
        return False
    return True
