"""Hostile bot: reads the machine through /proc, sysinfo(2) and statfs(2) at its first decision.

It reads every top-level file of /proc that is not a process (loadavg, stat, meminfo, uptime,
pressure/*, sys/fs/file-nr, sys/kernel/random/boot_id, cmdline, interrupts, vmstat ...) and the
listed folders' files, then changes the machine's load itself (40 more threads, 64 MiB touched, 4
child processes) while the test changes it outside too, and reads them all again. Any file that
changed is a channel another sandbox could read (BREACH: moved ...). So is sysinfo(2) answering
(BREACH: sysinfo ...), and statfs(2) of its folder, whose free blocks are the host filesystem's,
where every sandbox's log grows (BREACH: statfs ...), and an IPv4 or IPv6 socket opening: TCP's
and UDP's memory and socket counts in /proc/self/net/sockstat are the machine's (BREACH: inet
...). Then it looks for the host's facts targets.json names (the test read them outside): its boot
id or kernel command line anywhere it read, or an uptime within a minute of the host's (BREACH:
host ...). Every finding also goes to its log (stderr), one line starting FINDINGS, as the referee
shortens a forfeit's reason. /proc/cpuinfo is left out: the sandbox keeps it (static facts of the
processor; a bare-metal host's clock line may move, docs/security.md says so).
"""

import contextlib
import ctypes
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from referee.botkit.sdk import Bot, serve

HERE = Path(__file__).resolve().parent
PROC = Path("/proc")
LEFT_OUT = {"cpuinfo"}
FOLDERS = ("pressure", "sys/fs", "sys/kernel", "sys/vm", "fs", "irq", "driver", "tty")
FILES_PER_FOLDER = 400


def read(path: Path) -> str:
    """The text of a file, or the name of the error reading it (a masked file may refuse)."""
    try:
        return path.read_bytes()[:65536].decode(errors="replace")
    except OSError as error:
        return f"<{type(error).__name__}>"


def snapshot() -> dict[str, str]:
    """Every machine file of /proc and of the folders above: path -> text."""
    seen: dict[str, str] = {}
    for entry in sorted(PROC.iterdir()):
        if entry.name.isdigit() or entry.is_symlink() or entry.name in LEFT_OUT:
            continue
        if entry.is_file():
            seen[entry.name] = read(entry)
    for folder in FOLDERS:
        files: list[Path] = []
        with contextlib.suppress(OSError):
            files = sorted(path for path in (PROC / folder).rglob("*") if path.is_file())
        for path in files[:FILES_PER_FOLDER]:
            seen[str(path.relative_to(PROC))] = read(path)
        seen[folder + "/"] = " ".join(str(path.relative_to(PROC)) for path in files)
    return seen


class SysInfo(ctypes.Structure):
    _fields_ = [
        ("uptime", ctypes.c_long), ("loads", ctypes.c_ulong * 3), ("totalram", ctypes.c_ulong),
        ("freeram", ctypes.c_ulong), ("sharedram", ctypes.c_ulong), ("bufferram", ctypes.c_ulong),
        ("totalswap", ctypes.c_ulong), ("freeswap", ctypes.c_ulong), ("procs", ctypes.c_ushort),
        ("pad", ctypes.c_ushort), ("totalhigh", ctypes.c_ulong), ("freehigh", ctypes.c_ulong),
        ("mem_unit", ctypes.c_uint), ("reserved", ctypes.c_char * 256),
    ]  # fmt: skip


def sysinfo() -> str | None:
    """sysinfo(2)'s uptime, thread count and free memory, or None when refused."""
    libc = ctypes.CDLL(None, use_errno=True)
    answer = SysInfo()
    if libc.sysinfo(ctypes.byref(answer)) != 0:
        return None
    return f"uptime {answer.uptime} procs {answer.procs} freeram {answer.freeram}"


def statfs() -> str | None:
    """The free blocks of the filesystem the bot's folder is bound from, or None when refused."""
    try:
        found = os.statvfs(HERE)
    except OSError:
        return None
    return f"free blocks {found.f_bfree}"


def inet_sockets() -> list[str]:
    """The IP families a socket opens in (the sandbox's loopback is its own, but the memory its
    buffers take is counted for the whole machine)."""
    opened = []
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.socket(family, socket.SOCK_STREAM).close()
        except OSError:
            continue
        opened.append(family.name)
    return opened


def load_the_machine() -> tuple[
    list[threading.Thread], threading.Event, list[subprocess.Popen[bytes]], bytearray
]:
    """40 threads, 4 child processes and 64 MiB touched: every machine-wide counter moves."""
    stop = threading.Event()
    threads = [threading.Thread(target=stop.wait, daemon=True) for _ in range(40)]
    for thread in threads:
        thread.start()
    children = [subprocess.Popen(["sleep", "5"]) for _ in range(4)]
    ballast = bytearray(64 << 20)
    for offset in range(0, len(ballast), 4096):
        ballast[offset] = 1
    return threads, stop, children, ballast


def attack() -> list[str]:
    targets = json.loads((HERE / "targets.json").read_text())
    before, info_before = snapshot(), sysinfo()
    time.sleep(0.3)
    threads, stop, children, ballast = load_the_machine()
    time.sleep(0.3)
    after, info_after = snapshot(), sysinfo()
    stop.set()
    for child in children:
        child.kill()
        child.wait()
    del threads, ballast
    found = [
        f"moved {name}"
        for name in sorted(before.keys() | after.keys())
        if before.get(name) != after.get(name)
    ]
    if info_before is not None:
        found.append(f"sysinfo answers ({info_before} then {info_after})")
    if (blocks := statfs()) is not None:
        found.append(f"statfs answers ({blocks})")
    if families := inet_sockets():
        found.append(f"inet sockets open ({', '.join(families)})")
    text = "\n".join([*before.values(), *after.values()])
    if targets["boot_id"] in text:
        found.append("host boot id")
    if targets["cmdline"] in text:
        found.append("host kernel command line")
    with contextlib.suppress(ValueError, IndexError):
        uptime = float(after.get("uptime", "").split()[0])
        if abs(uptime - targets["uptime"]) < 60:
            found.append(f"host uptime {uptime}")
    return found


class ProcMachine(Bot):
    name = "hostile-proc-machine"

    def __init__(self) -> None:
        super().__init__()
        self.tried = False

    def decide(self, info, legal):
        if not self.tried:
            self.tried = True
            breaches = attack()
            print("FINDINGS " + json.dumps(breaches), file=sys.stderr, flush=True)
            if breaches:
                raise RuntimeError("BREACH: " + "; ".join(breaches))
        return legal[0]


if __name__ == "__main__":
    serve(ProcMachine())
