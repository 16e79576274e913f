"""`septet worker`: a machine that plays matches for a centre it reaches only over the network.

A worker host needs three addresses and nothing else from the centre: the broker (`--broker`, or
REDIS_URL), the database (`--database`, or DATABASE_URL) and where archives and replays are kept
(`--storage`, or SEPTET_STORAGE; `database` by default here, since a worker on another machine
cannot see the centre's data folder). Its own data folder (`--data`) holds only what is its own:
its secret key (never the site's: a worker signs nothing a browser trusts), its supervision state
and the cache of unpacked bot versions.

Before anything starts it checks, and says in one line what is wrong when a check fails: the
database answers and its schema is the one this code expects (the centre migrates, never a
worker), the broker answers, the storage kind exists, and bots can be sandboxed here. Then it
prints the limits line (which sandbox limits hold on this machine) and starts the Celery worker as
a supervised child (`septet_platform.supervision`, as `septet up` does): a worker that dies is
started again with backoff, and Ctrl-C or SIGTERM stops everything it started.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import urlsplit

import septet_platform
from septet_platform.addresses import hide_password
from septet_platform.launcher import (
    HOME,
    TICK_SECONDS,
    SecretKeyUnusable,
    celery_worker_command,
    child_env,
    secret_key_file,
)
from septet_platform.settings import DEFAULT_MODULE
from septet_platform.supervision import ChildSpec, CrashLoop, Supervisor

WAIT_SECONDS = 60.0
"""How long the start waits for the database and the broker: hosts of a cluster come up in any
order, so a worker started before its centre waits for it instead of failing at once."""
STORAGE_KINDS = ("database", "local", "s3")
BROKER_SCHEMES = ("redis", "rediss", "redis+socket")
DATABASE_SCHEMES = ("postgres", "postgresql", "pgsql", "sqlite")
SUPERVISION_STATE_FILE = "supervision.json"


class WorkerHostUnusable(Exception):
    """The worker host cannot start; the message says what to fix."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="septet worker",
        description="Play matches for a Septet centre from this machine: a supervised Celery worker "
        "that reaches the centre only through its broker, its database and its storage.",
    )
    parser.add_argument("--broker", metavar="URL", help="the centre's Redis (default: $REDIS_URL)")
    parser.add_argument("--database", metavar="URL", help="the centre's database (default: $DATABASE_URL)")
    parser.add_argument(
        "--storage",
        metavar="KIND",
        help=f"where archives and replays are kept: {', '.join(STORAGE_KINDS)} "
        "(default: $SEPTET_STORAGE, else database)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        help="this host's own folder (default: var/worker in the checkout)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=2,
        metavar="C",
        help="matches played at once (default: %(default)s)",
    )
    parser.add_argument(
        "--queues",
        metavar="Q1,Q2",
        help="the queues to take work from (default: every match queue; `builds` for a build host)",
    )
    parser.add_argument(
        "--name", default="worker", help="the worker's node name before @host (default: %(default)s)"
    )
    parser.add_argument(
        "--production", action="store_true", help="production settings and a prefork pool, as deploy/ runs it"
    )
    parser.add_argument(
        "--wait",
        type=float,
        default=WAIT_SECONDS,
        metavar="S",
        help="seconds to wait for the database and broker at start (default: %(default)s)",
    )
    return parser


def worker(argv: Sequence[str]) -> int:
    """Entry point of `septet worker`: 0 after Ctrl-C or SIGTERM, 1 on a crash loop, 2 when it
    cannot start (the reason printed)."""
    args = _parser().parse_args(list(argv))
    try:
        data = _configure(args)
    except WorkerHostUnusable as error:
        _say(f"cannot start: {error}")
        return 2
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _interrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    supervisor = Supervisor(
        state_file=data / SUPERVISION_STATE_FILE, say=_say, guard_env=child_env(), cwd=HOME
    )
    try:
        _check_centre(args.wait)
        supervisor.start(_worker_spec(args))
        _say_ready(args)
        while True:
            supervisor.tick()
            time.sleep(TICK_SECONDS)
    except WorkerHostUnusable as error:
        _say(f"cannot start: {error}")
        return 2
    except CrashLoop as error:
        _say(f"stopping: {error}")
        return 1
    except KeyboardInterrupt:
        _say("stopping")
        return 0
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)  # a second signal must not cut the stop short
        supervisor.stop()


def _configure(args: argparse.Namespace) -> Path:
    """Checks the arguments and puts them into the environment the settings and children read;
    returns this host's data folder."""
    broker = args.broker or os.environ.get("REDIS_URL", "")
    database = args.database or os.environ.get("DATABASE_URL", "")
    storage = (args.storage or os.environ.get("SEPTET_STORAGE") or "database").strip().lower()
    if not broker:
        raise WorkerHostUnusable(
            "no broker: pass --broker redis://:PASSWORD@centre:6379/0 (or set REDIS_URL)"
        )
    if not database:
        raise WorkerHostUnusable(
            "no database: pass --database postgres://USER:PASSWORD@centre:5432/septet (or set DATABASE_URL)"
        )
    _check_scheme("broker", broker, BROKER_SCHEMES)
    _check_scheme("database", database, DATABASE_SCHEMES)
    if storage not in STORAGE_KINDS:
        raise WorkerHostUnusable(f"--storage {storage!r}: expected one of {', '.join(STORAGE_KINDS)}")
    if args.concurrency < 1:
        raise WorkerHostUnusable(
            f"--concurrency {args.concurrency}: a worker plays at least one match at once"
        )
    data = (args.data or Path(os.environ.get("SEPTET_WORKER_DATA_DIR", HOME / "var" / "worker"))).resolve()
    data.mkdir(parents=True, exist_ok=True)
    try:
        key_file = secret_key_file(data)
    except SecretKeyUnusable as error:
        raise WorkerHostUnusable(str(error)) from None
    os.environ.update(
        {
            "REDIS_URL": broker,
            "DATABASE_URL": database,
            "SEPTET_STORAGE": storage,
            "SEPTET_DATA_DIR": str(data),
            "SEPTET_SUPERVISION_STATE": str(data / SUPERVISION_STATE_FILE),
            "DJANGO_SETTINGS_MODULE": _settings_module(args),
        }
    )
    os.environ.setdefault("SEPTET_UNPACKED_DIR", str(data / "unpacked"))
    if "SECRET_KEY" not in os.environ:
        os.environ["SEPTET_SECRET_KEY_FILE"] = str(key_file)
    return data


def _settings_module(args: argparse.Namespace) -> str:
    if args.production:
        return "septet_platform.settings.prod"
    return septet_platform.CALLER_SETTINGS_MODULE or DEFAULT_MODULE


def _check_scheme(what: str, url: str, schemes: Sequence[str]) -> None:
    scheme = urlsplit(url).scheme
    if scheme not in schemes:
        raise WorkerHostUnusable(
            f"the {what} URL {hide_password(url)} has scheme {scheme or '(none)'!r}: "
            f"expected {', '.join(schemes)}"
        )


def _check_centre(wait: float) -> None:
    """Waits up to `wait` seconds for the database and the broker to answer, then checks the
    schema, the storage kind and the sandbox; WorkerHostUnusable says which failed and why."""
    import django
    from django.core.exceptions import ImproperlyConfigured

    try:
        django.setup()
    except (ImproperlyConfigured, ValueError) as error:
        raise WorkerHostUnusable(str(error)) from None
    from django.conf import settings

    _wait_for("the database", _database_answers, wait)
    _wait_for("the broker", _broker_answers, wait)
    _check_schema()
    from septet_platform.blobs.checks import storage_reachable

    unreachable = storage_reachable()
    if unreachable:
        raise WorkerHostUnusable(str(unreachable[0].msg))
    if settings.SEPTET_STORAGE.strip().lower() in ("local", "file", "folder"):
        _say("storage is this machine's data folder: the centre sees these replays only if it shares it")
    _check_sandbox()


def _wait_for(what: str, answers: Callable[[], str], wait: float) -> None:
    deadline = time.monotonic() + wait
    said = False
    while True:
        problem = answers()
        if not problem:
            return
        if time.monotonic() >= deadline:
            raise WorkerHostUnusable(f"{what} did not answer within {wait:.0f} s: {problem}")
        if not said:
            _say(f"waiting for {what} ({problem})")
            said = True
        time.sleep(1.0)


def _database_answers() -> str:
    """'' when the database answers a query, else its first line of error."""
    from django.db import OperationalError, connection

    try:
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("select 1")
        return ""
    except OperationalError as error:
        connection.close()
        return (str(error).strip().splitlines() or ["no answer"])[0]


def _broker_answers() -> str:
    """'' when the broker answers PING, else why not (the URL's password never printed)."""
    import redis
    from django.conf import settings

    url = settings.CELERY_BROKER_URL
    try:
        if url.startswith("redis+socket://"):
            client = redis.Redis(unix_socket_path=urlsplit(url).path, socket_timeout=3)
        else:
            client = redis.Redis.from_url(url, socket_timeout=3, socket_connect_timeout=3)
        client.ping()
        client.close()
        return ""
    except redis.RedisError as error:
        return str(error).replace(url, hide_password(url)) or type(error).__name__


def _check_schema() -> None:
    """The database's schema must be the one this code expects: a worker never migrates (the
    centre does, once), and a worker of another version would write rows the centre cannot read."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    waiting = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if waiting:
        names = ", ".join(f"{migration.app_label}.{migration.name}" for migration, _ in waiting[:3])
        raise WorkerHostUnusable(
            f"the database is not migrated to this worker's version ({len(waiting)} migrations to apply: "
            f"{names}...): migrate it from the centre (`septet up` does), or run the centre's version here"
        )


def _check_sandbox() -> None:
    from django.conf import settings

    from referee.tools.sandbox import SandboxError, check_available, describe_limits

    try:
        check_available()
    except SandboxError as error:
        if not settings.SEPTET_ALLOW_UNSANDBOXED:
            raise WorkerHostUnusable(
                f"{error}. Install it (apt-get install bubblewrap), or, for local development only, "
                "set SEPTET_ALLOW_UNSANDBOXED=1"
            ) from None
        _say(f"running bots WITHOUT a sandbox (SEPTET_ALLOW_UNSANDBOXED): {error}")
    _say(describe_limits())


def _worker_spec(args: argparse.Namespace) -> ChildSpec:
    from django.conf import settings

    queues = [queue for queue in (args.queues or "").split(",") if queue] or list(
        settings.SEPTET_MATCH_QUEUES
    )
    unknown = sorted(set(queues) - set(settings.SEPTET_QUEUES))
    if unknown:
        raise WorkerHostUnusable(
            f"--queues: unknown {', '.join(unknown)} (known: {', '.join(settings.SEPTET_QUEUES)})"
        )
    command = celery_worker_command(
        args.name,
        queues,
        args.concurrency,
        pool="prefork" if args.production else "threads",
        log_level="info" if args.production else "warning",
    )
    return ChildSpec("worker", command, env=child_env(), cwd=HOME)


def _say_ready(args: argparse.Namespace) -> None:
    from django.conf import settings
    from django.db import connection

    database = connection.settings_dict
    where = f"{database.get('HOST') or 'local'}:{database.get('PORT') or ''}/{database.get('NAME')}"
    _say(
        f"playing matches on {socket.gethostname()} ({args.concurrency} at once) for the broker "
        f"{hide_password(settings.CELERY_BROKER_URL)}, the database {where}, "
        f"storage {settings.SEPTET_STORAGE}"
    )
    _say("Ctrl-C stops it; a worker that dies is started again")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _say(text: str) -> None:
    print(f"septet worker: {text}", file=sys.stderr, flush=True)
