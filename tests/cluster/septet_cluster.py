"""Septet on the hosts of `hosts.Cluster`: PostgreSQL on the centre, Redis on the broker, `septet up`
without match workers on the centre, and `septet worker` on each worker host, every one of them
given only the centre's addresses and passwords (never a file of the centre's).

The harness itself reads the database through PostgreSQL's unix socket in the cluster's folder
(its own way in, as an organiser's shell on the database machine would be), and the site's
/healthz through a thread in the centre's namespace (`Cluster.in_namespace`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from hosts import (
    ARENA_PORT,
    BROKER_ADDRESS,
    BROKER_PORT,
    CENTRE_ADDRESS,
    DATABASE_PORT,
    SETPRIV,
    SUBNET,
    WEB_PORT,
    Cluster,
    ClusterUnavailable,
    postgres_bin,
)

SEPTET = str(Path(sys.executable).with_name("septet"))
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
READY_SECONDS = 240.0
WORKER_CONCURRENCY = 1
WORKER_DATA = "/tmp/septet-worker"
"""A worker host's data folder, on its private /tmp."""
PLATFORM_ENV_DROPPED = (
    "REDIS_URL",
    "DATABASE_URL",
    "DJANGO_SETTINGS_MODULE",
    "SEPTET_DATA_DIR",
    "SEPTET_STORAGE",
)


class SeptetCluster(Cluster):
    """The cluster with Septet on it; `start` brings up the database, the broker, the centre and
    the worker hosts in that order."""

    def __init__(
        self,
        workers: int,
        *,
        concurrency: int = WORKER_CONCURRENCY,
        examples: Path | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(workers, **kwargs)
        self.concurrency = concurrency
        self.examples = examples
        """The house bots' folders for the centre's `septet up --examples` (None: the checkout's)."""
        self.pg_data = self.folder / "postgres"
        self.redis_folder = self.folder / "redis"
        self.centre_data = self.folder / "centre"

    def platform_env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key not in PLATFORM_ENV_DROPPED}
        env["PYTHONUNBUFFERED"] = "1"
        return env

    # The centre's database and broker

    def start_database(self) -> None:
        """A PostgreSQL cluster of our own: initdb into the cluster's folder (run as the postgres
        user, as the server refuses root), password (SCRAM) auth from the bridge's addresses only,
        then the role and database the platform uses."""
        binaries = postgres_bin()
        postgres_user = ["--reuid=postgres", "--regid=postgres", "--init-groups"]
        for folder in (self.pg_data, self.database_socket):
            folder.mkdir(mode=0o700)
            shutil.chown(folder, "postgres", "postgres")
        subprocess.run(
            [SETPRIV, *postgres_user, str(binaries / "initdb"), "-D", str(self.pg_data), "-U", "postgres",
             "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-instructions"],
            check=True, capture_output=True, cwd="/",
        )  # fmt: skip
        with (self.pg_data / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {SUBNET}.0/24 scram-sha-256\n")
        self._start_postgres()
        self._sql("postgres", f"create role septet login password '{self.database_password}'")
        self._sql("postgres", "create database septet owner septet")

    def _start_postgres(self) -> None:
        command = [
            SETPRIV, "--reuid=postgres", "--regid=postgres", "--init-groups",
            str(postgres_bin() / "postgres"), "-D", str(self.pg_data),
            "-c", f"listen_addresses={CENTRE_ADDRESS}", "-c", f"port={DATABASE_PORT}",
            "-c", f"unix_socket_directories={self.database_socket}", "-c", "max_connections=300",
            "-c", "password_encryption=scram-sha-256",
        ]  # fmt: skip
        self.spawn("centre", "postgres", command, env={"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"})
        self._wait("PostgreSQL", self._database_ready, 60)

    def _database_ready(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.admin_dsn("postgres"), connect_timeout=2) as connection:
                connection.execute("select 1")
            return True
        except psycopg.Error:
            return False

    def _sql(self, database: str, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_dsn(database), autocommit=True) as connection:
            connection.execute(statement)  # type: ignore[arg-type]

    def restart_database(self) -> float:
        """PostgreSQL stopped (fast shutdown: sessions cut, as a restart for an upgrade does) and
        started again; the seconds it was away."""
        began = time.monotonic()
        self.stop("centre", "postgres", signum=signal.SIGINT)
        self._start_postgres()
        return time.monotonic() - began

    def start_broker(self) -> None:
        self.redis_folder.mkdir()
        self._start_redis()

    def _start_redis(self) -> None:
        command = [
            REDIS_SERVER, "--bind", BROKER_ADDRESS, "--port", str(BROKER_PORT),
            "--requirepass", self.broker_password, "--dir", str(self.redis_folder),
            "--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--daemonize", "no",
            "--protected-mode", "yes", "--logfile", "",
        ]  # fmt: skip
        self.spawn("broker", "redis", command, env={"PATH": os.environ.get("PATH", "")})
        self._wait("Redis", self._broker_ready, 30)

    def _broker_ready(self) -> bool:
        import redis

        def ping() -> bool:
            client = redis.Redis(
                host=BROKER_ADDRESS, port=BROKER_PORT, password=self.broker_password, socket_timeout=2
            )
            try:
                return bool(client.ping())
            finally:
                client.close()

        try:
            return self.in_namespace("centre", ping)
        except (redis.RedisError, OSError):
            return False

    def restart_broker(self) -> float:
        """Redis stopped (SIGTERM: it writes its append-only file) and started again from it."""
        began = time.monotonic()
        self.stop("broker", "redis")
        self._start_redis()
        return time.monotonic() - began

    # Septet

    def start_centre(self) -> None:
        """`septet up --workers 0` on the centre: the site, the Arena, beat, the builder and the
        tables pool, with the example bots registered and qualified; no match worker."""
        env = self.platform_env() | {
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.broker_url,
            "SEPTET_STORAGE": "database",
        }
        command = [
            SEPTET, "up", "--data", str(self.centre_data), "--workers", "0",
            "--web", f"{CENTRE_ADDRESS}:{WEB_PORT}", "--arena", f"{CENTRE_ADDRESS}:{ARENA_PORT}",
        ]  # fmt: skip
        if self.examples is not None:
            command += ["--examples", str(self.examples)]
        self.spawn("centre", "septet", command, env=env)
        self._wait("the centre's site", lambda: self.healthz()[0] in (200, 503), READY_SECONDS)

    def start_worker(self, name: str) -> None:
        """`septet worker` on worker host `name`, in its own mount namespace and hostname."""
        command = [
            SEPTET, "worker", "--broker", self.broker_url, "--database", self.database_url,
            "--storage", "database", "--data", WORKER_DATA, "--concurrency", str(self.concurrency),
        ]  # fmt: skip
        self.spawn(name, "septet", command, env=self.platform_env(), private_files=True, hostname=name)

    def start(self, *, workers: int | None = None) -> None:
        self.start_database()
        self.start_broker()
        self.start_centre()
        for name in self.worker_names[:workers]:
            self.start_worker(name)

    # Reading the centre

    def healthz(self) -> tuple[int, dict[str, Any]]:
        def fetch() -> tuple[int, dict[str, Any]]:
            url = f"http://{CENTRE_ADDRESS}:{WEB_PORT}/healthz"
            try:
                with urllib.request.urlopen(url, timeout=3) as response:
                    return response.status, json.loads(response.read())
            except urllib.error.HTTPError as error:
                with contextlib.suppress(ValueError):
                    return error.code, json.loads(error.read())
                return error.code, {}
            except (OSError, ValueError):
                return 0, {}

        try:
            return self.in_namespace("centre", fetch)
        except Exception:  # the thread's namespace gone: the cluster is closing
            return 0, {}

    def connect(self) -> Any:
        """A psycopg connection of the harness's own (autocommit), through the unix socket."""
        import psycopg

        return psycopg.connect(self.admin_dsn(), autocommit=True)

    def log_tail(self, host: str, role: str, lines: int = 30) -> str:
        path = self.folder / f"{host}-{role}.log"
        with contextlib.suppress(OSError):
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def _wait(self, what: str, ready: Any, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(0.5)
        raise ClusterUnavailable(f"{what} was not ready within {timeout:.0f} s; logs in {self.folder}")
