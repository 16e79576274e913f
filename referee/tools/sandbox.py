"""Running a bot's process inside bubblewrap (`bwrap`, Debian package `bubblewrap`).

A submitted bot is untrusted code. `Sandbox.command` wraps its command line so that it runs with:

- no network: a new network namespace holding only a loopback; the bot creates its socket in a
  private 1 MiB tmpfs inside the sandbox (/run/septet), which the host reaches through the
  sandbox's root (/proc/<sandbox pid>/root) without following anything the bot wrote
  (`referee.tools.botfolder` opens it O_PATH|O_NOFOLLOW, checks it is a socket of the sandbox's uid and
  connects through the descriptor);
- a read-only view of the runtime (/usr, a few files of /etc such as the dynamic loader's cache,
  the Python installation and the SDK) and of the bot's own folder at /bot; nothing else of the
  machine (no /home, /root, /var, no other bots, no database, no /etc/passwd or /etc/shadow);
  bwrap gets its arguments through a pipe (`--args`), so /proc/1/cmdline shows no host path;
- a private /tmp (a size-limited tmpfs) and an empty environment but for a few variables;
- a /proc of its own that shows nothing of the machine (`referee.tools.sandbox_proc`): its own
  processes, constant /proc/stat, meminfo (its memory limit), loadavg and uptime, and every other
  machine-wide file or folder (cmdline, pressure, sys with the boot id...) masked, so no sandbox
  sees another's load, memory or threads (a covert channel) nor the host's facts;
- new PID, IPC, UTS and cgroup namespaces and `--die-with-parent`: killing the bwrap process
  (the process group `botfolder.RunningBot.stop` signals) kills the namespace's first process,
  and with it every process of the bot, orphans and daemons included;
- a user of its own with no capabilities: when the referee runs as root, bwrap sets up the
  namespaces and `setpriv` then drops to an unprivileged uid picked for this start, so file
  permissions, /proc/sys and RLIMIT_NPROC hold (root is exempt from the process limit); when it
  runs as an ordinary user, bwrap puts the bot in a user namespace without capabilities;
- a control group of its own where the machine allows it (`referee.tools.sandbox_cgroups`): memory of
  all its processes together, processes, an equal CPU share and a one-core quota;
- a seccomp filter (`referee.tools.sandbox_seccomp`): no namespaces, ptrace, SysV IPC, file locks,
  mounts and other calls a bot never needs;
- resource limits set by `prlimit` (inherited by every process): CPU seconds, processes and
  threads, file size, open files, and address space where no memory cgroup applies.

`describe_limits()` says in one line which of these hold on this machine. A build runs in the same
sandbox, also without network, from a read-only copy of the source into a size-limited tmpfs
(see `Sandbox.command`).
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import referee
from referee.tools import sandbox_cgroups, sandbox_proc, sandbox_seccomp
from referee.tools.sandbox_cgroups import SandboxGroup

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
RUNTIME_SYMLINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
MiB = 1 << 20


class SandboxError(Exception):
    """The sandbox cannot be used here (bwrap missing or refused by the kernel): not the bot's fault."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of every process of a sandboxed bot (setrlimit, inherited across fork)."""

    memory_bytes: int = 4096 * MiB
    """The sandbox's memory: with a memory cgroup, resident memory of all its processes together
    (shared memory, memfd and tmpfs pages included; the kernel's OOM killer ends a process past
    it); without one, RLIMIT_AS, address space per process. Generous because runtimes reserve far
    more than they touch (Node's V8, glibc's per-thread arenas); an allocation past it fails (MemoryError)."""
    cpu_seconds: int = 900
    """RLIMIT_CPU: CPU time per process; SIGXCPU at this, SIGKILL 5 s later. Decision deadlines
    stop a spinning bot long before; this ends one that spins after the match."""
    processes: int = 256
    """Processes and threads of the sandbox: pids.max of its cgroup, and RLIMIT_NPROC of its uid
    (a gRPC server uses dozens)."""
    file_bytes: int = 64 * MiB
    """RLIMIT_FSIZE: the largest file a bot may write, its stdout/stderr log included."""
    open_files: int = 1024
    """RLIMIT_NOFILE."""
    tmp_bytes: int = 256 * MiB
    """Size of the private /tmp (tmpfs; its pages count to the sandbox's memory group)."""
    socket_bytes: int = 1 * MiB
    """Size of the private tmpfs holding the bot's socket (/run/septet): a flood stops there."""
    build_bytes: int = 512 * MiB
    """Size of the build's writable /bot (tmpfs): the whole built folder, not one file."""
    cpu_cores: float | None = 1.0
    """CPU quota of one sandbox (cgroup), on top of its share equal to every other sandbox's."""

    def prlimit(self, *, address_space: bool = True) -> list[str]:
        """The `prlimit` command prefix that sets these limits and execs the rest (thread-safe,
        unlike a preexec function in a threaded worker). `address_space` False drops RLIMIT_AS
        where a memory cgroup counts the sandbox's resident memory instead (runtimes reserve far
        more address space than they touch)."""
        return [
            PRLIMIT,
            f"--as={self.memory_bytes if address_space else 'unlimited'}",
            f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 5}",
            f"--nproc={self.processes}",
            f"--fsize={self.file_bytes}",
            f"--nofile={self.open_files}",
            "--core=0",
            "--",
        ]


BUILD_LIMITS = Limits(cpu_seconds=1800, file_bytes=512 * MiB, processes=512)
"""A build (`npm ci`) runs longer and starts more processes than a bot that plays; its time and
process limits replace the play limits' in build mode (memory and disk stay as in play)."""


LAUNCHER = r"""
seccomp=$1; bwrap=$2; shift 2
groups=
while [ "$1" != "--" ]; do
    echo $$ > "$1" || exit 125
    groups="$groups $1"
    shift
done
shift
texts=$1; shift
fds=
while [ "$texts" -gt 0 ]; do
    eval "text_$1=\$2"
    fds="$fds $1"
    shift 2
    texts=$((texts - 1))
done
options=$1; shift
trap : TERM INT HUP
exec 9<&0
if [ -n "$seccomp" ]; then exec 8<"$seccomp" || exit 125; fi
{ n=0; while [ "$n" -lt "$options" ]; do printf '%s\0' "$1"; shift; n=$((n + 1)); done; } |
    { exec 7<&0 0<&9 9<&-
      for fd in $fds; do eval "exec $fd<<SEPTET_TEXT
\$text_$fd
SEPTET_TEXT"; done
      shift "$options"; exec "$bwrap" --args 7 "$@"; }
code=$?
exec 8<&-
for procs in $groups; do
    group=${procs%/cgroup.procs}
    echo $$ > "${group%/*}/cgroup.procs"
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
        for pid in $(cat "$procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        rmdir "$group" 2>/dev/null && break
        sleep 0.05
    done
done
exit $code
"""
"""Runs outside the sandbox, as its first process: joins the sandbox's control groups before
anything forks, opens the seccomp program as fd 8, hands bwrap its arguments through a pipe (fd 7,
`--args`: the sandbox's /proc/1/cmdline then shows no host path), opens each of /proc's constant
texts on the descriptor bwrap's `--ro-bind-data` names (a here-document: a pipe, no file), and once
bwrap ended kills what is left in the groups and removes them. Arguments: seccomp path or "", bwrap,
cgroup.procs files, `--`, the number of texts, each text's descriptor and text (without its last
newline, which the here-document adds), the number of bwrap's options, its options, then the
command (setpriv and the bot's words)."""
SECCOMP_FD = 8
BOT_DIR = "/bot"
"""Where the bot's folder (play) or its empty build folder (build) is, inside the sandbox."""
SOURCE_DIR = "/src"
"""Where a build sees the submitted source, read-only."""
SOCKET_DIR = "/run/septet"
"""A small private tmpfs inside the sandbox where the bot creates its socket."""
SOCKET_NAME = "bot.sock"
BOT_ADDRESS = f"unix:{SOCKET_DIR}/{SOCKET_NAME}"
"""The address a sandboxed bot serves on, inside its sandbox."""


@dataclass
class Prepared:
    """A command line ready to run, and the control group it joins (remove it after the run)."""

    words: list[str]
    group: SandboxGroup | None
    uid: int
    """The uid the sandboxed process runs as, seen from outside (it owns the bot's socket)."""

    def cleanup(self) -> None:
        """Kills what is left of the sandbox's processes and removes its group (idempotent)."""
        if self.group is not None:
            self.group.remove()


@dataclass(frozen=True)
class Sandbox:
    """How bot processes are confined; `command()` wraps one command line for one start."""

    limits: Limits = field(default_factory=Limits)
    read_only: tuple[Path, ...] = ()
    """Further folders visible read-only at their own paths (a runtime outside /usr, say)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Further environment variables for the bot (the sandbox starts from an empty one)."""
    _mask_proc: bool = field(default=True, repr=False)
    """False shows the machine-wide files of /proc as they are: for benchmarks/proc_channel.py's
    figures of the covert channel the masking closes, never for a bot the platform runs."""

    def command(
        self,
        words: Sequence[str],
        *,
        folder: Path,
        run_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
        build: bool = False,
    ) -> list[str]:
        """The command line running `words` in the sandbox (see `prepare`); its launcher removes
        its control group when bwrap ends.

        Build mode (`build=True`), the contract for intake builds: NO network (as in play); the
        source `folder` is bound read-only at /src; an empty writable tmpfs of
        `limits.build_bytes` is mounted at /bot and is the working folder; BUILD_LIMITS apply for
        time and processes (memory and disk as in play); stdout is whatever `words` print, so a
        wrapper such as `sh -c 'cp -R /src/. /bot/ && <build> && tar -C /bot -cf - .'` hands the
        built folder back as a tar on stdout. Nothing is written to `folder` or `run_dir`
        (`run_dir` is accepted for older callers and unused: sockets live inside the sandbox)."""
        del run_dir
        return self.prepare(words, folder=folder, env=env, build=build).words

    def prepare(
        self,
        words: Sequence[str],
        *,
        folder: Path,
        env: Mapping[str, str] | None = None,
        build: bool = False,
        info_fd: int | None = None,
    ) -> Prepared:
        """`words` inside bwrap, in a control group of its own when the machine has them, under
        the seccomp filter when libseccomp is here. Play: `folder` read-only at /bot (the working
        folder) and a private tmpfs at /run/septet for the socket (`BOT_ADDRESS`). `info_fd`
        (a descriptor the caller passes to the process) receives bwrap's JSON with the sandbox's
        first pid, through which the host reaches the socket."""
        check_available()
        limits = self._effective_limits(build)
        group = sandbox_cgroups.create_group(limits.memory_bytes, limits.processes, limits.cpu_cores)
        try:
            proc = self._proc_mask(limits, info_fd)
            options = self._bwrap_options(folder, limits, env, proc, build=build, info_fd=info_fd)
            seccomp = _seccomp_path()
            prefix = limits.prlimit(address_space=group is None or group.support.memory is None)
            procs = [str(path) for path in group.procs_files()] if group else []
            launcher = [*prefix, *_dies_with_parent(), "/bin/sh", "-c", LAUNCHER, "septet-sandbox", seccomp]
            launcher.append(_bwrap_path())
            launcher += [*procs, "--", str(len(proc.data))]
            for fd, text in proc.data.items():
                launcher += [str(fd), text.removesuffix("\n")]
            launcher += [str(len(options)), *options]
        except BaseException:
            if group is not None:
                group.remove(timeout=1.0)
            raise
        uid = _sandbox_uid()
        return Prepared(
            launcher + _dropped_privileges(words, uid), group, os.geteuid() if uid is None else uid
        )

    def _proc_mask(self, limits: Limits, info_fd: int | None) -> sandbox_proc.ProcMask:
        """What the sandbox's /proc shows of the machine: nothing (`sandbox_proc`), unless a
        benchmark asked for the unmasked view."""
        if not self._mask_proc:
            return sandbox_proc.ProcMask([], {})
        busy = [] if info_fd is None else [info_fd]
        return sandbox_proc.proc_mask(limits.memory_bytes, limits.cpu_cores, busy_fds=busy)

    def _effective_limits(self, build: bool) -> Limits:
        if not build:
            return self.limits
        return replace(
            self.limits,
            cpu_seconds=BUILD_LIMITS.cpu_seconds,
            processes=BUILD_LIMITS.processes,
            file_bytes=max(self.limits.file_bytes, BUILD_LIMITS.file_bytes),
        )

    def _bwrap_options(
        self,
        folder: Path,
        limits: Limits,
        env: Mapping[str, str] | None,
        proc: sandbox_proc.ProcMask,
        *,
        build: bool,
        info_fd: int | None,
    ) -> list[str]:
        args = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-cgroup-try"]
        args += ["--die-with-parent", "--new-session", "--hostname", "septet-bot"]
        if os.geteuid() != 0:
            args += ["--unshare-user", "--cap-drop", "ALL"]
        for name in RUNTIME_SYMLINKS:
            target = Path("/") / name
            if target.is_symlink():
                args += ["--symlink", os.readlink(target), str(target)]
        args += ["--proc", "/proc", *proc.options, "--dev", "/dev"]
        args += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
        args += _runtime_binds(self.read_only)
        if build:
            args += ["--ro-bind", str(folder), SOURCE_DIR]
            args += ["--perms", "1777", "--size", str(limits.build_bytes), "--tmpfs", BOT_DIR]
        else:
            args += ["--ro-bind", str(folder), BOT_DIR]
            args += ["--perms", "1777", "--size", str(limits.socket_bytes), "--tmpfs", SOCKET_DIR]
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
        args += ["--chdir", BOT_DIR]
        if _seccomp_path():
            args += ["--seccomp", str(SECCOMP_FD)]
        if info_fd is not None:
            args += ["--info-fd", str(info_fd)]
        return args

    def finish_build(self, folder: Path) -> None:
        """Nothing left to do: a build no longer writes the source folder (kept for older callers)."""
        del folder


def _dropped_privileges(words: Sequence[str], uid: int | None) -> list[str]:
    """`words`, run as `uid` (fresh and unprivileged, when we are root) without capabilities."""
    if uid is None:
        return ["--", *words]
    drop = [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    drop += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return ["--", *drop, *words]


def _runtime_binds(extra: Iterable[Path]) -> list[str]:
    """Read-only binds of the runtime (at their own paths, parents made) and of a few /etc files."""
    args: list[str] = []
    binds = _runtime_paths(extra)
    binds += [Path("/etc") / name for name in ETC_FILES if (Path("/etc") / name).exists()]
    created: set[Path] = {Path("/"), Path("/tmp"), Path("/proc"), Path("/dev")}
    for path in sorted(binds, key=lambda bound: len(bound.parts)):
        for parent in reversed(path.parents):
            if parent not in created and parent not in binds:
                args += ["--perms", "0755", "--dir", str(parent)]
                created.add(parent)
        args += ["--ro-bind", str(path), str(path)]
        created.add(path)
    return args


def _seccomp_path() -> str:
    """Where the launcher reads the seccomp program, or "" where libseccomp is missing."""
    try:
        return sandbox_seccomp.compiled_filter().path
    except sandbox_seccomp.SeccompUnavailable:
        return ""


def _dies_with_parent() -> list[str]:
    """`setpriv --pdeathsig KILL`: the launcher dies with the thread that started it, as bwrap
    (--die-with-parent) dies with the launcher, so a worker killed outright takes its sandboxes
    along instead of leaving them to init. (Its control group is then removed by the next start's
    sweep.)"""
    return [SETPRIV, "--pdeathsig", "KILL", "--"] if Path(SETPRIV).is_file() else []


def _bwrap_path() -> str:
    return shutil.which(BWRAP) or BWRAP


def _sandbox_uid() -> int | None:
    """A fresh unprivileged uid when we are root (bwrap then runs privileged); None otherwise."""
    if os.geteuid() != 0:
        return None
    return SANDBOX_UID_FIRST + secrets.randbelow(SANDBOX_UID_COUNT)


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


def describe_limits() -> str:
    """One line saying which limits hold per sandbox here and which are missing (for the
    platform's start-up log and `septet check --sandbox`)."""
    return f"sandbox: {sandbox_cgroups.status()}; {sandbox_seccomp.seccomp_status()}"


def available() -> bool:
    """Whether `check_available` passes."""
    try:
        check_available()
    except SandboxError:
        return False
    return True
