"""The seccomp filter of a sandboxed bot: system calls a bot never needs fail with EPERM.

bubblewrap loads the filter (`--seccomp FD`, a BPF program) in the sandbox's first process just
before it runs the bot's command, after bwrap made its namespaces, so bwrap itself is not held by
it; `setpriv` (which drops to the sandbox's uid) and everything the bot starts are. The program is
compiled by libseccomp through `pyseccomp` (a ctypes binding of the shared library).

A deny list, not an allow list: Python, gRPC and Node.js use a wide and changing set of calls, and
what matters is closing the ways out of the sandbox and between sandboxes:

- namespaces (user namespaces above all): unshare, setns, clone with a CLONE_NEW* flag, and
  clone3 (whose flags a filter cannot read: it fails with ENOSYS, so libc falls back to clone);
- looking into or steering another process: ptrace, process_vm_readv/writev, kcmp, pidfd_getfd;
- channels between sandboxes through the shared read-only runtime: flock, fcntl record locks and
  leases (F_SETLK, F_SETLKW, F_GETLK and their OFD forms, F_SETLEASE), inotify and fanotify
  watches (a read in one sandbox would show as an event in another);
- System V IPC (shmget, semget, msgget and their siblings): memory outside the cgroup's view;
- IPv4 and IPv6 sockets (EAFNOSUPPORT): the machine-wide TCP and UDP memory and socket counts of
  /proc/self/net/sockstat and protocols were a covert channel; the bot serves on a Unix socket;
- sysinfo: the machine's load averages, thread count and free memory, the covert channel
  `referee.tools.sandbox_proc` closes in /proc (glibc's get_phys_pages, which its qsort consults
  for large arrays, then returns an unset figure: qsort only chooses between two correct sorts
  by it; Node.js reads the sandbox's /proc/meminfo first);
- statfs and fstatfs: the free blocks and files of the host filesystems the runtime and the bot's
  folder are bound from, which move as any sandbox's log grows (benchmarks/proc_channel.py sent
  5 bits/s through them without an error); statvfs and df then fail, which no runtime needs;
- mounts (mount, umount2, pivot_root, the new mount API, chroot), keyrings, bpf,
  perf_event_open, userfaultfd, io_uring (which would bypass this filter), kexec, modules,
  swap, reboot, clocks, name_to_handle_at/open_by_handle_at, and a few other relics.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
from dataclasses import dataclass

DENIED_SYSCALLS = (
    # namespaces
    "unshare", "setns",
    # other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # channels between sandboxes through shared files
    "flock", "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark",
    # System V IPC
    "shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl", "semtimedop",
    "msgget", "msgsnd", "msgrcv", "msgctl",
    # mounts and roots
    "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
    "move_mount", "open_tree", "mount_setattr",
    # kernel facilities a bot never needs
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "swapon", "swapoff", "reboot", "syslog", "acct", "quotactl", "lookup_dcookie",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
    "name_to_handle_at", "open_by_handle_at", "iopl", "ioperm", "vhangup", "uselib", "ustat",
    "sysfs", "_sysctl", "nfsservctl", "personality", "move_pages", "migrate_pages",
    # the machine's load, process count and free memory (a covert channel, as /proc/loadavg);
    # the free blocks of the host's filesystems, which a bot's log grows on (another)
    "sysinfo", "statfs", "fstatfs",
)  # fmt: skip
"""Always EPERM, whatever the arguments."""

CLONE_NAMESPACE_FLAGS = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
    | 0x00000080  # CLONE_NEWTIME
)
"""clone() with any of these makes a namespace: EPERM (threads and forks pass)."""

FCNTL_LOCKS = {
    "F_GETLK": 5,
    "F_SETLK": 6,
    "F_SETLKW": 7,
    "F_OFD_GETLK": 36,
    "F_OFD_SETLK": 37,
    "F_OFD_SETLKW": 38,
    "F_SETLEASE": 1024,
    "F_GETLEASE": 1025,
}
"""fcntl commands of record locks and leases: EPERM (a covert channel through shared files)."""


INET_FAMILIES = (2, 10)  # AF_INET, AF_INET6
"""socket() of these families fails with EAFNOSUPPORT: a sandbox's network namespace holds only a
loopback and the bot serves on a Unix socket, while TCP's and UDP's memory and socket counts are
the machine's (/proc/self/net/sockstat, which no mount can mask: it is a folder of each process):
one sandbox filling loopback connections moved them for every other."""


class SeccompUnavailable(Exception):
    """libseccomp or its binding is missing here: no filter can be compiled."""


@dataclass(frozen=True)
class CompiledFilter:
    """A BPF program in a memory file of this process; bwrap reads it through `path`."""

    fd: int
    pid: int

    @property
    def path(self) -> str:
        """A path another process (root, or of our uid) can open to read the program from its start."""
        return f"/proc/{self.pid}/fd/{self.fd}"


def compile_filter() -> bytes:
    """The BPF program (raises SeccompUnavailable when libseccomp cannot be loaded)."""
    try:
        import pyseccomp as seccomp  # type: ignore[import-untyped]
    except (ImportError, OSError) as error:
        raise SeccompUnavailable(f"libseccomp cannot be loaded ({error})") from None
    deny = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        with contextlib.suppress(OSError, ValueError, RuntimeError):  # unknown on this architecture
            rules.add_rule(deny, name)
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    # one rule per namespace flag: clone is denied when (flags & flag) == flag
    for bit in range(64):
        flag = 1 << bit
        if CLONE_NAMESPACE_FLAGS & flag:
            rules.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    for command in FCNTL_LOCKS.values():
        rules.add_rule(deny, "fcntl", seccomp.Arg(1, seccomp.EQ, command))
    for family in INET_FAMILIES:
        rules.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.EQ, family))
    reader, writer = os.pipe()
    try:
        with os.fdopen(writer, "wb", closefd=True) as sink:
            rules.export_bpf(sink)
        chunks = []
        while chunk := os.read(reader, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(reader)
    return b"".join(chunks)


@functools.cache
def _compiled_in(pid: int) -> CompiledFilter:
    program = compile_filter()
    fd = os.memfd_create("septet-seccomp", os.MFD_CLOEXEC)
    os.write(fd, program)
    return CompiledFilter(fd, pid)


def compiled_filter() -> CompiledFilter:
    """The filter of this process (compiled once per process: a forked worker compiles its own).
    SEPTET_SANDBOX_SECCOMP=off leaves it out, to measure or to show what it stops."""
    if os.environ.get("SEPTET_SANDBOX_SECCOMP", "") == "off":
        raise SeccompUnavailable("switched off by SEPTET_SANDBOX_SECCOMP=off")
    return _compiled_in(os.getpid())


def seccomp_status() -> str:
    """One line: whether the filter applies here, and why not when it does not."""
    try:
        compiled_filter()
    except SeccompUnavailable as error:
        return f"seccomp unavailable: {error}; bots may make user namespaces, use ptrace and SysV IPC"
    return "seccomp filter on (namespaces, ptrace, SysV IPC, file locks, mounts denied)"
