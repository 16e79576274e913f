"""Hosts of our own on this machine: a centre, its broker and worker hosts, joined by a bridge.

Each host is a network namespace with one address on a bridge that lives in a namespace of its
own (the "switch"), so nothing here touches the machine's own interfaces, routes or loopback:

    centre   10.77.0.1   PostgreSQL (password auth) and `septet up --workers 0` (site, Arena,
                         beat, builder, tables; no match worker)
    broker   10.77.0.2   Redis (a password, an append-only file): the centre's, on a host of its
                         own so the bytes it moves are counted apart from the database's
    wN       10.77.0.1N  `septet worker --broker ... --database ... --storage database`, in a mount
                         namespace of its own as well: a private tmpfs on /tmp and over the
                         cluster's folder, so it cannot see the centre's files (the checkout's code
                         is bound back in, as a machine would have it installed), and a hostname
                         of its own (wN), which its Celery node name and the matches it plays carry

Every process is started by this module and is found again only through what it started: the
pid of each host's first process and that process's descendants (from /proc), and the namespaces
it made (`ip netns pids`). `close` stops them (SIGTERM, then SIGKILL), says which were still alive,
deletes the namespaces and the folder. CPU time is counted per host by a cpuacct control group the
host's first process joins before it starts anything (cgroup v1 or v2, where writable).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from process_tree import alive, identity
from process_tree import descendants as living_below

ROOT = Path(__file__).resolve().parents[2]
IP = shutil.which("ip") or "/usr/sbin/ip"
UNSHARE = shutil.which("unshare") or "/usr/bin/unshare"
NSENTER = shutil.which("nsenter") or "/usr/bin/nsenter"
SETPRIV = shutil.which("setpriv") or "/usr/bin/setpriv"
SUBNET = "10.77.0"
CENTRE_ADDRESS = f"{SUBNET}.1"
BROKER_ADDRESS = f"{SUBNET}.2"
WEB_PORT, ARENA_PORT, DATABASE_PORT, BROKER_PORT = 8000, 50051, 5432, 6379
CLONE_NEWNET = 0x40000000
STOP_SECONDS = 60.0
T = TypeVar("T")


class ClusterUnavailable(RuntimeError):
    """This machine cannot make the cluster (not root, no iproute2, no PostgreSQL server): why."""


def worker_address(number: int) -> str:
    return f"{SUBNET}.{10 + number}"


def _run(*command: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise ClusterUnavailable(f"{' '.join(command)}: {(done.stderr or done.stdout).strip()}")
    return done


def postgres_bin() -> Path:
    """The newest PostgreSQL server binaries installed from Debian's packages."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda path: int(path.parts[-3]))
    if not found:
        raise ClusterUnavailable("no PostgreSQL server binaries (Debian package postgresql)")
    return found[-1].parent


# Processes: ours only, from /proc ------------------------------------------------------------------


def descendants(root: int) -> dict[int, int]:
    """pid -> start time of `root` and every living process below it (tests/process_tree.py)."""
    found = dict(living_below(root))
    itself = identity(root)
    if itself is not None:
        found[itself[0]] = itself[1]
    return found


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds of `root` and everything below it: each live process's own time and that of
    its children it has reaped (a PostgreSQL backend that exited is counted in the postmaster's)."""
    ticks = 0
    for pid in descendants(root):
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = Path(f"/proc/{pid}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            ticks += sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def command_line(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").replace("\0", " ").strip()
    return ""


def kill_tree(root: int, *, rounds: int = 20) -> None:
    """SIGKILL to `root` and everything below it, again until nothing of it is left (a process
    forking while it is being killed is caught by the next round)."""
    for _ in range(rounds):
        living = [pid for pid, started in descendants(root).items() if alive((pid, started))]
        if not living:  # a zombie waiting to be reaped is gone already
            return
        for pid in living:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


# CPU accounting per host ---------------------------------------------------------------------------


class CpuGroup:
    """A cpuacct group (v1) or a plain group (v2) of our own making: CPU seconds of every process
    in it, the sandboxes' too (they are made below whatever group their worker sits in)."""

    def __init__(self, name: str) -> None:
        self.folder: Path | None = None
        self.usage = ""
        v1, v2 = Path("/sys/fs/cgroup/cpuacct"), Path("/sys/fs/cgroup")
        if (v1 / "cpuacct.usage").exists():
            base, self.usage = v1, "cpuacct.usage"
        elif (v2 / "cgroup.controllers").exists():
            base, self.usage = v2, "cpu.stat"
        else:
            return
        with contextlib.suppress(OSError):
            (base / name).mkdir()
            self.folder = base / name

    @property
    def join_command(self) -> str:
        """Shell words that move the calling shell into this group (nothing where there is none)."""
        if self.folder is None:
            return ":"
        return f"echo $$ > {shlex.quote(str(self.folder / 'cgroup.procs'))}"

    def seconds(self) -> float:
        if self.folder is None:
            return float("nan")
        text = (self.folder / self.usage).read_text()
        if self.usage == "cpuacct.usage":
            return int(text) / 1e9
        fields = dict(line.split() for line in text.splitlines() if line.strip())
        return int(fields.get("usage_usec", "0")) / 1e6

    def remove(self) -> None:
        if self.folder is None:
            return
        for _ in range(50):
            try:
                self.folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError:  # a process of the group still exiting
                time.sleep(0.1)
                continue
            self.folder = None
            return


# One host ------------------------------------------------------------------------------------------


@dataclass
class Host:
    """A network namespace with its address, its link on the switch, its processes by role."""

    name: str
    namespace: str
    address: str
    switch_link: str
    cpu: CpuGroup
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    seen: dict[int, int] = field(default_factory=dict)
    """Every process of this host ever seen (pid -> start time), for the leftovers check."""

    def remember(self) -> None:
        for process in self.processes.values():
            self.seen.update(descendants(process.pid))


# The cluster ---------------------------------------------------------------------------------------


class Cluster:
    """The switch, the centre, the broker and `workers` worker hosts; see the module docstring.

    Use as a context manager, or call `open` then `close` (which also undoes a failed `open`)."""

    def __init__(self, workers: int, *, say: Callable[[str], None] = print, keep: bool = False) -> None:
        self.tag = secrets.token_hex(3)
        self.say = say
        self.keep = keep
        self.folder = Path(tempfile.mkdtemp(prefix=f"septet-cluster-{self.tag}-"))
        self.folder.chmod(0o711)  # PostgreSQL's own user must reach its folder inside
        self.switch = f"septet-{self.tag}-switch"
        self.hosts: dict[str, Host] = {}
        self.worker_names = [f"w{number}" for number in range(1, workers + 1)]
        self.database_password = secrets.token_urlsafe(18)
        self.broker_password = secrets.token_urlsafe(18)
        self.namespaces: list[str] = []
        self._executors: dict[str, ThreadPoolExecutor] = {}
        self._lock = threading.Lock()
        self.closed = False

    # Addresses the platform is given

    @property
    def database_url(self) -> str:
        return f"postgres://septet:{self.database_password}@{CENTRE_ADDRESS}:{DATABASE_PORT}/septet"

    @property
    def broker_url(self) -> str:
        return f"redis://:{self.broker_password}@{BROKER_ADDRESS}:{BROKER_PORT}/0"

    @property
    def database_socket(self) -> Path:
        """The folder of PostgreSQL's unix socket: the harness's own way in, not the network's."""
        return self.folder / "pgsocket"

    def admin_dsn(self, database: str = "septet") -> str:
        return f"host={self.database_socket} port={DATABASE_PORT} user=postgres dbname={database}"

    # Making and unmaking

    def __enter__(self) -> Cluster:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        if os.geteuid() != 0:
            raise ClusterUnavailable("network and mount namespaces need root")
        if not Path(IP).exists():
            raise ClusterUnavailable("iproute2 is not installed")
        postgres_bin()
        try:
            self._add_namespace(self.switch)
            _run(IP, "-n", self.switch, "link", "add", "br0", "type", "bridge")
            _run(IP, "-n", self.switch, "link", "set", "br0", "up")
            _run(IP, "-n", self.switch, "link", "set", "lo", "up")
            self._add_host("centre", CENTRE_ADDRESS)
            self._add_host("broker", BROKER_ADDRESS)
            for number, name in enumerate(self.worker_names, start=1):
                self._add_host(name, worker_address(number))
        except BaseException:
            self.close()
            raise

    def _add_namespace(self, name: str) -> None:
        _run(IP, "netns", "add", name)
        self.namespaces.append(name)

    def _add_host(self, name: str, address: str) -> None:
        namespace = f"septet-{self.tag}-{name}"
        link = f"s{self.tag}{name}"[:15]
        self._add_namespace(namespace)
        _run(
            IP,
            "-n",
            self.switch,
            "link",
            "add",
            link,
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            namespace,
        )
        _run(IP, "-n", self.switch, "link", "set", link, "master", "br0", "up")
        _run(IP, "-n", namespace, "addr", "add", f"{address}/24", "dev", "eth0")
        _run(IP, "-n", namespace, "link", "set", "eth0", "up")
        _run(IP, "-n", namespace, "link", "set", "lo", "up")
        self.hosts[name] = Host(name, namespace, address, link, CpuGroup(f"septet-{self.tag}-{name}"))

    def close(self) -> list[str]:
        """Stops every process of every host, deletes the namespaces and the folder; returns the
        processes that were still alive after their host was told to stop (then killed)."""
        left: list[str] = []
        if self.closed:
            return left
        self.closed = True
        for host in reversed(list(self.hosts.values())):  # workers first, the database last
            for role in reversed(list(host.processes)):
                left += self.stop(host.name, role)
        for executor in self._executors.values():
            executor.shutdown(wait=False)
        for host in self.hosts.values():
            for pid in _namespace_pids(host.namespace):
                left.append(f"{host.name}: {pid} {command_line(pid)[:100]} (found in the namespace)")
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            for pid, started in host.seen.items():
                if alive((pid, started)):
                    left.append(f"{host.name}: {pid} {command_line(pid)[:100]} (below a stopped process)")
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            host.cpu.remove()
        for name in reversed(self.namespaces):
            _run(IP, "netns", "delete", name, check=False)
        self.namespaces.clear()
        if not self.keep:
            shutil.rmtree(self.folder, ignore_errors=True)
        return sorted(set(left))

    # Running things on hosts

    def spawn(
        self,
        host_name: str,
        role: str,
        command: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        private_files: bool = False,
        hostname: str | None = None,
    ) -> subprocess.Popen[bytes]:
        """Starts `command` on the host, logged to the cluster folder (`<host>-<role>.log`): in the
        host's network namespace, in the host's CPU group, and with `private_files` in a mount
        namespace of its own (see the module docstring)."""
        host = self.hosts[host_name]
        script = []
        if hostname:
            script.append(f"hostname {shlex.quote(hostname)}")
        if private_files:
            script += self._private_files_script()
        script.append("exec " + shlex.join(command))
        # nsenter rather than `ip netns exec`, which mounts a /sys of the namespace's own: that
        # would hide the machine's control groups from the host's sandboxes and CPU group.
        wrapped = [NSENTER, f"--net=/run/netns/{host.namespace}", "--"]
        if private_files or hostname:
            wrapped += [UNSHARE, "--mount", "--uts", "--propagation", "private"]
        wrapped += ["/bin/bash", "-c", "set -e; " + "; ".join([host.cpu.join_command, *script])]
        log = (self.folder / f"{host_name}-{role}.log").open("ab")
        process = subprocess.Popen(
            wrapped, env=env if env is not None else dict(os.environ), cwd=ROOT,
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        log.close()
        host.processes[role] = process
        return process

    def _private_files_script(self) -> list[str]:
        """Shell lines giving the calling shell's mount namespace a private /tmp and hiding the
        cluster's folder, with the checkout bound back at its own path (it may be under /tmp)."""
        code, folder = shlex.quote(str(ROOT)), shlex.quote(str(self.folder))
        return [
            "mount -t tmpfs -o size=64k tmpfs /mnt",
            "mkdir /mnt/code",
            f"mount --bind {code} /mnt/code",
            "mount -t tmpfs -o mode=1777 tmpfs /tmp",
            f"if [ -d {folder} ]; then mount -t tmpfs -o mode=0700 tmpfs {folder}; fi",
            f"mkdir -p {code}",
            f"mount --bind /mnt/code {code}",
            "umount -l /mnt/code",
        ]

    def stop(self, host_name: str, role: str, *, signum: int = signal.SIGTERM) -> list[str]:
        """Stops one process (`signum`, then SIGKILL after STOP_SECONDS) and whatever it left below
        it; returns what was still alive 2 s after it exited."""
        host = self.hosts[host_name]
        process = host.processes.pop(role, None)
        if process is None:
            return []
        ours = descendants(process.pid)
        host.seen.update(ours)
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signum)
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            kill_tree(process.pid)
            process.wait()
        time.sleep(2)
        left = [
            f"{host_name}/{role}: {pid} {command_line(pid)[:100]}"
            for pid, started in ours.items()
            if alive((pid, started))
        ]
        for pid, started in ours.items():
            if alive((pid, started)):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        return left

    def kill_host(self, host_name: str) -> int:
        """Every process of the host killed at once (SIGKILL), as a machine losing its power; the
        number killed."""
        host = self.hosts[host_name]
        killed = 0
        for role, process in list(host.processes.items()):
            living = descendants(process.pid)
            host.seen.update(living)
            killed += len(living)
            kill_tree(process.pid)
            process.wait()
            del host.processes[role]
        for pid in _namespace_pids(host.namespace):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return killed

    def processes_on(self, host_name: str) -> list[int]:
        host = self.hosts[host_name]
        pids: set[int] = set(_namespace_pids(host.namespace))
        for process in host.processes.values():
            pids |= set(descendants(process.pid))
        return sorted(pids)

    def in_namespace(self, host_name: str, call: Callable[[], T], timeout: float = 30) -> T:
        """Runs `call` on a thread that joined the host's network namespace (setns is per thread):
        sockets it opens are the host's, the rest of this process stays where it was."""
        with self._lock:
            executor = self._executors.get(host_name)
            if executor is None:
                namespace = self.hosts[host_name].namespace
                executor = ThreadPoolExecutor(1, initializer=_join_namespace, initargs=(namespace,))
                self._executors[host_name] = executor
        return executor.submit(call).result(timeout=timeout)

    # Network faults

    def link(self, host_name: str, up: bool) -> None:
        """The host's own end of its link up or down (`ip link set eth0 down`): a cut cable."""
        host = self.hosts[host_name]
        _run(IP, "-n", host.namespace, "link", "set", "eth0", "up" if up else "down")

    def broker_partition(self, hosts: Sequence[str], cut: bool) -> None:
        """Packets from each of `hosts` to the broker dropped (a blackhole route), or let through
        again: a partition between those hosts and Redis only, the database still reachable."""
        verb = "add" if cut else "del"
        for name in hosts:
            _run(IP, "-n", self.hosts[name].namespace, "route", verb, "blackhole", f"{BROKER_ADDRESS}/32")

    def link_bytes(self, host_name: str) -> int:
        """Bytes through the host's link both ways, read on the switch's end."""
        link = self.hosts[host_name].switch_link
        done = _run(IP, "-n", self.switch, "-s", "-j", "link", "show", link)
        import json

        stats = json.loads(done.stdout)[0]["stats64"]
        return int(stats["rx"]["bytes"]) + int(stats["tx"]["bytes"])


def _namespace_pids(namespace: str) -> list[int]:
    done = _run(IP, "netns", "pids", namespace, check=False)
    return [int(word) for word in done.stdout.split() if word.isdigit()]


def _join_namespace(namespace: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    with open(f"/var/run/netns/{namespace}") as handle:
        if libc.setns(handle.fileno(), CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {namespace}")
