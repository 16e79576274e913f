"""A network of a test's own between a bot's "machine" and the Arena, on this machine only: a
network namespace joined to the host by a veth pair with two link-local addresses the test picks
(a /30 nobody else uses), so a process run inside reaches the host at one address and nothing
else. The test can then delay the link (`tc netem`, or a relay in user space on a kernel without
netem) and cut it, as a bot author's network would, without touching any other interface.

Everything is made by the test and removed by `close` (the namespace, the veth pair with it, the
relay's sockets); nothing is found by name except what the test named itself.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Sequence

IP = shutil.which("ip") or "/usr/sbin/ip"
TC = shutil.which("tc") or "/usr/sbin/tc"


class NamespaceUnavailable(RuntimeError):
    """This machine cannot make the network namespace (not root, no iproute2, no veth): why."""


def _run(*command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise NamespaceUnavailable(f"{' '.join(command)}: {(done.stderr or done.stdout).strip()}")
    return done


class BotNetwork:
    """The namespace `name` and its veth pair: `host_address` on the host's end, `bot_address`
    inside. Made by `open()`, removed by `close()` (also after a failed `open`)."""

    def __init__(self, tag: str) -> None:
        self.name = f"septet-{tag}"
        self.host_link, self.bot_link = f"sp{tag}h", f"sp{tag}n"  # at most 15 characters
        if len(self.host_link) > 15:
            raise ValueError(f"tag {tag!r} makes interface names longer than 15 characters")
        self.host_address = self.bot_address = ""
        self.made = False

    def open(self) -> BotNetwork:
        if os.geteuid() != 0:
            raise NamespaceUnavailable("network namespaces need root")
        if not (os.path.exists(IP) and os.path.exists(TC)):
            raise NamespaceUnavailable("iproute2 (ip, tc) is not installed")
        subnet = self._free_subnet()
        self.host_address, self.bot_address = f"169.254.{subnet}.1", f"169.254.{subnet}.2"
        _run(IP, "netns", "add", self.name)
        self.made = True
        try:
            _run(IP, "link", "add", self.host_link, "type", "veth", "peer", "name", self.bot_link)
            _run(IP, "link", "set", self.bot_link, "netns", self.name)
            _run(IP, "addr", "add", f"{self.host_address}/30", "dev", self.host_link)
            _run(IP, "link", "set", self.host_link, "up")
            _run(IP, "-n", self.name, "addr", "add", f"{self.bot_address}/30", "dev", self.bot_link)
            _run(IP, "-n", self.name, "link", "set", self.bot_link, "up")
            _run(IP, "-n", self.name, "link", "set", "lo", "up")
        except BaseException:
            self.close()
            raise
        return self

    def _free_subnet(self) -> int:
        """A 169.254.N.0/30 no interface of the host has yet, starting from one drawn from this
        process's pid (two test runs at once pick different ones)."""
        used = _run(IP, "-o", "-4", "addr", "show").stdout
        first = os.getpid() % 200 + 20
        for offset in range(200):
            subnet = (first + offset - 20) % 200 + 20
            if f"169.254.{subnet}." not in used:
                return subnet
        raise NamespaceUnavailable("no free 169.254.N.0/30 for the test's veth pair")

    def command(self, words: Sequence[str]) -> list[str]:
        """`words` run inside the namespace (`ip netns exec` execs it: the process started is the
        command itself, with the pid the test sees)."""
        return [IP, "netns", "exec", self.name, *words]

    def cut(self) -> None:
        """The bot's end of the link down: nothing more passes either way, and neither end is told
        (no reset reaches the Arena: only its keepalive or a clock finds out)."""
        _run(IP, "-n", self.name, "link", "set", self.bot_link, "down")

    def restore(self) -> None:
        _run(IP, "-n", self.name, "link", "set", self.bot_link, "up")

    def netem_delay(self, milliseconds: int) -> bool:
        """`milliseconds` more on every packet each way (`tc netem` on both ends of the pair);
        False where the kernel has no netem (the caller then delays in user space)."""
        done = _run(
            TC,
            "qdisc",
            "add",
            "dev",
            self.host_link,
            "root",
            "netem",
            "delay",
            f"{milliseconds}ms",
            check=False,
        )
        if done.returncode != 0:
            return False
        _run(
            IP,
            "netns",
            "exec",
            self.name,
            TC,
            "qdisc",
            "add",
            "dev",
            self.bot_link,
            "root",
            "netem",
            "delay",
            f"{milliseconds}ms",
        )
        return True

    def netem_clear(self) -> None:
        _run(TC, "qdisc", "del", "dev", self.host_link, "root", check=False)
        _run(IP, "netns", "exec", self.name, TC, "qdisc", "del", "dev", self.bot_link, "root", check=False)

    def close(self) -> None:
        """Deletes the namespace (its end of the pair goes with it, and so the host's end) and the
        host's end if it is still there. Processes inside must have been stopped first."""
        if not self.made:
            return
        _run(IP, "netns", "delete", self.name, check=False)
        if _run(IP, "link", "show", self.host_link, check=False).returncode == 0:
            _run(IP, "link", "delete", self.host_link, check=False)
        self.made = False


class DelayRelay:
    """A TCP relay that holds every chunk `delay` seconds before passing it on, each way, in
    order: the same added latency as netem on the link, for kernels built without it. It listens
    at `host` (the host's veth address, so the bot's traffic still crosses the veth pair) and
    passes each connection on to `target`."""

    def __init__(self, host: str, target: str, delay: float) -> None:
        self.delay = delay
        target_host, target_port = target.rsplit(":", 1)
        self._target = (target_host, int(target_port))
        self._listener = socket.create_server((host, 0))
        self.address = f"{host}:{self._listener.getsockname()[1]}"
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        threading.Thread(target=self._accept, name="delay-relay", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._target, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets += [client, upstream]
            self._pump(client, upstream)
            self._pump(upstream, client)

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        """One direction: a reader stamps each chunk with when it may leave, a writer sends it
        then; so the order is kept and each chunk is late by `delay`, however many are in flight."""
        held: queue.SimpleQueue[tuple[float, bytes]] = queue.SimpleQueue()

        def read() -> None:
            with contextlib.suppress(OSError):
                while chunk := source.recv(65536):
                    held.put((time.monotonic() + self.delay, chunk))
            held.put((time.monotonic() + self.delay, b""))

        def write() -> None:
            with contextlib.suppress(OSError):
                while True:
                    due, chunk = held.get()
                    time.sleep(max(0.0, due - time.monotonic()))
                    if not chunk:
                        sink.shutdown(socket.SHUT_WR)
                        return
                    sink.sendall(chunk)

        threading.Thread(target=read, name="delay-relay-read", daemon=True).start()
        threading.Thread(target=write, name="delay-relay-write", daemon=True).start()

    def close(self) -> None:
        self._closed.set()
        self._listener.close()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
