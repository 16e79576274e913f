"""How much two sandboxes can tell each other through the machine they share, before and after
/proc was masked (referee/tools/sandbox_proc.py, issue 25).

Two real sandboxes (the platform's `Sandbox`) start together; they agree on nothing but the wall
clock and a slot length (200 ms). The sender sends random bits: for a 1-bit it holds 32 more
threads, 64 MiB touched and 8 loopback TCP connections holding 1 MiB unread, and writes 256 KiB
to its log, for the slot; for a 0-bit nothing. The receiver reads, once per slot, what it can
see of the machine:

- loadavg:  /proc/loadavg's running/total field (threads of the whole machine);
- stat:     /proc/stat's `processes` counter (forks and threads started), per slot;
- meminfo:  /proc/meminfo's MemAvailable;
- sysinfo:  sysinfo(2)'s thread count (the seccomp filter now denies the call);
- disk:     statvfs of its own folder: the free blocks of the host filesystem its log grows on
            (the seccomp filter now denies statfs);
- sockstat: /proc/self/net/sockstat's TCP memory, counted for the whole machine (a folder of each
            process no mount can mask; the filter now refuses IP sockets).

Eight known bits lead (the receiver's calibration: threshold and sign); the rest are decoded and
compared. "before" is the former sandbox: /proc unmasked (`Sandbox(_mask_proc=False)`, a keyword
for this benchmark alone) and no seccomp filter (the former filter allowed sysinfo, statfs and IP
sockets); "after" the sandbox as it runs bots now. No information is an error rate near 50%.

Then one timing channel that remains because sandboxes share the CPUs: the sender spins two
threads for a 1-bit and sleeps for a 0-bit; the receiver counts its own loop's turns per slot.

    python benchmarks/proc_channel.py [--bits 64] [--slot 0.2]

Prints, per channel, the bits per second sent, the error rate and the information rate of a
binary symmetric channel with that error rate, bits/s * (1 - H(error)).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

from referee.tools.sandbox import Sandbox, describe_limits  # noqa: E402

PREAMBLE = [1, 0, 1, 0, 1, 0, 1, 0]
"""Known bits that lead every message: the receiver learns each channel's threshold and sign."""
THREADS_PER_ONE = 32
MEMORY_PER_ONE = 64 << 20
LOG_PER_ONE = 256 << 10
CONNECTIONS_PER_ONE = 8
START_DELAY = 3.0
"""Seconds between the launch and the first slot: both sandboxes are up by then."""

SENDER = r"""
import os, socket, sys, threading, time
start, slot, bits, mode = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
try:
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)
except OSError:
    listener = None

def fill_connections():
    held = []
    for _ in range(CONNECTIONS if listener else 0):
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
        client.setblocking(False)
        try:
            for _ in range(16):  # 1 MiB each at most: done in a few milliseconds
                client.send(b"x" * 65536)
        except BlockingIOError:
            pass
        held += [client, server]
    return held

def spin(until):
    while time.time() < until:
        pass

for index, bit in enumerate(bits):
    begins, ends = start + index * slot, start + (index + 1) * slot
    time.sleep(max(0.0, begins - time.time()))
    if bit == "0":
        continue
    if mode == "cpu":
        spinners = [threading.Thread(target=spin, args=(ends - 0.01,)) for _ in range(2)]
        for thread in spinners:
            thread.start()
        for thread in spinners:
            thread.join()
        continue
    release = threading.Event()
    threads = [threading.Thread(target=release.wait) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    ballast = bytearray(MEMORY)
    for offset in range(0, len(ballast), 4096):
        ballast[offset] = 1
    sys.stderr.write("x" * LOG)
    sys.stderr.flush()
    held = fill_connections()
    time.sleep(max(0.0, ends - 0.01 - time.time()))
    for connection in held:
        connection.close()
    release.set()
    for thread in threads:
        thread.join()
    del ballast
"""

RECEIVER = r"""
import ctypes, json, os, sys, time
start, slot, count, mode = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

class SysInfo(ctypes.Structure):
    _fields_ = [("uptime", ctypes.c_long), ("loads", ctypes.c_ulong * 3)] + [
        (name, ctypes.c_ulong) for name in ("total", "free", "shared", "buffer", "swap", "freeswap")
    ] + [("procs", ctypes.c_ushort), ("pad", ctypes.c_char * 300)]

libc = ctypes.CDLL(None)

def field(path, name, column=1):
    try:
        with open(path) as opened:
            for line in opened:
                words = line.replace(":", " ").split()
                if words and words[0] == name:
                    return float(words[column])
    except OSError:
        pass
    return 0.0

def sample():
    values = {}
    try:
        with open("/proc/loadavg") as opened:
            values["loadavg"] = float(opened.read().split()[3].split("/")[1])
    except (OSError, IndexError, ValueError):
        values["loadavg"] = 0.0
    values["stat"] = field("/proc/stat", "processes")
    values["meminfo"] = field("/proc/meminfo", "MemAvailable")
    answer = SysInfo()
    values["sysinfo"] = float(answer.procs) if libc.sysinfo(ctypes.byref(answer)) == 0 else 0.0
    try:
        values["disk"] = float(os.statvfs(".").f_bfree)
    except OSError:
        values["disk"] = 0.0
    values["sockstat"] = field("/proc/self/net/sockstat", "TCP", 10)
    return values

time.sleep(max(0.0, start - 0.05 * slot - time.time()))
baseline = sample() if mode != "cpu" else {}
samples = []
for index in range(count):
    begins = start + index * slot
    if mode == "cpu":
        time.sleep(max(0.0, begins + 0.2 * slot - time.time()))
        turns, until = 0, begins + 0.8 * slot
        while time.time() < until:
            turns += 1
        samples.append({"cpu": float(turns)})
        continue
    time.sleep(max(0.0, begins + 0.6 * slot - time.time()))
    level = sample()
    time.sleep(max(0.0, begins + 0.95 * slot - time.time()))
    counters = sample()
    samples.append({"level": level, "counter": counters})
print(json.dumps({"baseline": baseline, "slots": samples}))
"""

Samples = dict[str, Any]
"""The receiver's answer: {"baseline": {channel: value}, "slots": [{"level": ..., "counter": ...}]}."""
LEVELS = ("loadavg", "meminfo", "sysinfo", "sockstat")
COUNTERS = ("stat", "disk")


@dataclass(frozen=True)
class Figure:
    """One channel's result."""

    channel: str
    bits: int
    errors: int
    slot: float

    @property
    def error_rate(self) -> float:
        return self.errors / self.bits

    @property
    def information_rate(self) -> float:
        """Bits per second of a binary symmetric channel with this error rate."""
        p = min(self.error_rate, 1.0 - self.error_rate)
        entropy = 0.0 if p == 0 else -p * math.log2(p) - (1 - p) * math.log2(1 - p)
        return (1.0 - entropy) / self.slot

    def line(self) -> str:
        return (
            f"  {self.channel:8} {1 / self.slot:4.1f} bits/s sent, {self.error_rate:6.1%} errors "
            f"({self.errors}/{self.bits}), information {self.information_rate:4.2f} bits/s"
        )


def decode(values: Sequence[float], slot: float, bits: Sequence[int], channel: str) -> Figure:
    """Threshold halfway between the preamble's 1s and 0s (its sign too); a channel whose preamble
    shows no difference decodes every bit as 0."""
    known = len(PREAMBLE)
    ones = [value for value, bit in zip(values[:known], PREAMBLE, strict=True) if bit]
    zeros = [value for value, bit in zip(values[:known], PREAMBLE, strict=True) if not bit]
    high, low = sum(ones) / len(ones), sum(zeros) / len(zeros)
    threshold, sign = (high + low) / 2, (1 if high > low else -1 if high < low else 0)
    decoded = [1 if sign and (value - threshold) * sign > 0 else 0 for value in values[known:]]
    payload = bits[known:]
    errors = sum(1 for got, sent in zip(decoded, payload, strict=True) if got != sent)
    return Figure(channel, len(payload), errors, slot)


def _write(folder: Path) -> None:
    folder.mkdir()
    constants = (
        f"THREADS, MEMORY, LOG, CONNECTIONS = {THREADS_PER_ONE}, {MEMORY_PER_ONE}, {LOG_PER_ONE}, "
        f"{CONNECTIONS_PER_ONE}\n"
    )
    (folder / "sender.py").write_text(constants + SENDER)
    (folder / "receiver.py").write_text(RECEIVER)
    folder.chmod(0o755)


def exchange(sandbox: Sandbox, bits: Sequence[int], slot: float, mode: str, scratch: Path) -> Samples:
    """Starts the sender and the receiver, each in a sandbox of its own, at once; the receiver's
    samples (a baseline just before the first slot, then one entry per slot)."""
    folder = scratch / f"channel-{mode}-{time.monotonic_ns()}"
    _write(folder)
    start = time.time() + START_DELAY
    common = [f"{start:.6f}", str(slot)]
    sender_words = [sys.executable, "sender.py", *common, "".join(map(str, bits)), mode]
    receiver_words = [sys.executable, "receiver.py", *common, str(len(bits)), mode]
    with open(scratch / f"{folder.name}.log", "wb") as log:
        sender = subprocess.Popen(sandbox.command(sender_words, folder=folder), stdout=log, stderr=log)
        receiver = subprocess.Popen(
            sandbox.command(receiver_words, folder=folder), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        out, err = receiver.communicate(timeout=START_DELAY + slot * len(bits) + 60)
        sender.wait(timeout=60)
    if receiver.returncode != 0:
        raise RuntimeError(f"the receiver failed: {err.decode(errors='replace')[-2000:]}")
    received: Samples = json.loads(out)
    return received


def proc_figures(received: Samples, bits: Sequence[int], slot: float) -> list[Figure]:
    """Levels read mid-slot; counters as their growth from the end of one slot to the next."""
    samples = received["slots"]
    figures = [decode([sample["level"][name] for sample in samples], slot, bits, name) for name in LEVELS]
    for name in COUNTERS:
        values = [sample["counter"][name] for sample in samples]
        previous = [received["baseline"][name], *values[:-1]]
        deltas = [now - before for now, before in zip(values, previous, strict=True)]
        figures.append(decode(deltas, slot, bits, name))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bits", type=int, default=64, help="payload bits per run (default: 64)")
    parser.add_argument("--slot", type=float, default=0.2, help="seconds per bit (default: 0.2)")
    parser.add_argument("--seed", type=int, default=25)
    args = parser.parse_args()
    chooser = random.Random(args.seed)
    bits = PREAMBLE + [chooser.randint(0, 1) for _ in range(args.bits)]
    print(describe_limits())
    print(f"{args.bits} payload bits after {len(PREAMBLE)} known ones, {args.slot * 1000:.0f} ms per bit")
    with tempfile.TemporaryDirectory(prefix="septet-proc-channel-") as name:
        scratch = Path(name)
        scratch.chmod(0o755)
        seccomp = os.environ.get("SEPTET_SANDBOX_SECCOMP", "")
        os.environ["SEPTET_SANDBOX_SECCOMP"] = "off"
        try:
            before = exchange(Sandbox(_mask_proc=False), bits, args.slot, "proc", scratch)
        finally:
            os.environ["SEPTET_SANDBOX_SECCOMP"] = seccomp
        print("before: /proc unmasked, no seccomp filter (the former sandbox, for these channels)")
        for figure in proc_figures(before, bits, args.slot):
            print(figure.line())
        after = exchange(Sandbox(), bits, args.slot, "proc", scratch)
        print("after: the sandbox as it runs bots now")
        for figure in proc_figures(after, bits, args.slot):
            print(figure.line())
        timing = exchange(Sandbox(), bits, args.slot, "cpu", scratch)
        print("remaining timing channel, the sandbox as it runs bots now:")
        cpu = decode([sample["cpu"] for sample in timing["slots"]], args.slot, bits, "cpu")
        print(cpu.line().replace("cpu     ", "CPU loop"))


if __name__ == "__main__":
    main()
