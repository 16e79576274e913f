"""Real parts of the match pipeline for the fault tests: a private redis-server on a free port
(never the machine's shared one), Celery worker processes, and a TCP proxy in front of the
database that can refuse connections for a while."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PrivateRedis:
    """A redis-server of our own, persisting every write (appendonly), restartable in place."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> PrivateRedis:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
             "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            time.sleep(0.05)
        raise RuntimeError("the private redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)  # a clean shutdown: the append-only file is kept
            self.process.wait(timeout=10)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


class Worker:
    """A Celery worker process on `queue` with `threads` threads, in a process group of its own (to
    kill it whole)."""

    def __init__(
        self, *, queue: str, broker: str, database_url: str, data_dir: Path, name: str, threads: int = 2
    ) -> None:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "septet_platform.settings.test",
            "DATABASE_URL": database_url,
            "REDIS_URL": broker,
            "SEPTET_DATA_DIR": str(data_dir),
            "PYTHONPATH": str(ROOT / "platform"),
        }
        self.log = data_dir / f"{name}.log"
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "septet_platform", "worker", "-Q", queue,
                 "-c", str(threads), "--pool", "threads", "-n", f"{name}@%h", "--without-gossip",
                 "--without-mingle", "--without-heartbeat", "-l", "warning"],
                env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip

    def kill(self) -> None:
        """kill -9 of the worker's whole process group, as a machine losing power would."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


class FlakyProxy:
    """Forwards TCP connections to `upstream`; while `down`, accepts and drops them at once
    (a database that is briefly unreachable)."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.down = False
        self.refused = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._server.getsockname()[1])
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            if self.down:
                self.refused += 1
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                target.sendall(data)
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._closed = True
        self._server.close()
