"""Reliability under faults: many matches through real Celery workers while things break.

Schedules MATCHES rated Oh Hell! matches of sandboxed example bots (tables of three, every task
sent twice, as a broker's redelivery would), runs WORKERS Celery worker processes on a private
redis-server (never the machine's shared one) and, while they play, injects faults at random:

- kill -9 of a worker's whole process group (a machine losing power), a new worker started,
  and the reaper run as if the dead worker's lease had expired;
- a restart of the redis-server with tasks queued;
- SIGKILL of a sandboxed bot process from outside, mid-game (that bot forfeits that game).

Then it lets the reaper and the stale-match requeue (the beat's job) run until every match is
recorded, and prints matches scheduled / completed / recorded twice / lost. The last two must be
0 (exit status 1 otherwise). "Recorded twice" counts a match with more than one replay file or
more rating changes than seats; "lost" a match not recorded by the end.

    python benchmarks/reliability.py [--matches 40] [--workers 2] [--faults 8] [--database-url URL]

The database is a fresh SQLite file (the embedded default) unless --database-url names one.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from pathlib import Path

# benchmarks/referee.py shares its name with the package used here: keep this folder off the path.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "bots" / "examples"
SANDBOX_UID_FIRST = 200_000  # referee.sandbox.SANDBOX_UID_FIRST: a sandboxed bot's uid is above it


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Redis:
    """A private redis-server persisting every write, restartable in place."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.port = folder, _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
             "--appendonly", "yes", "--appendfsync", "always", "--save", ""],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        for _ in range(200):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("the private redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)


def _worker(env: dict[str, str], queue: str, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "septet_platform", "worker", "-Q", queue, "-c", "2",
             "--pool", "threads", "-n", f"{uuid.uuid4().hex[:8]}@%h", "--without-gossip",
             "--without-mingle", "--without-heartbeat", "-l", "warning"],
            env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def _sandboxed_bots() -> list[int]:
    """Pids of sandboxed bot processes (they run as uids of their own)."""
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                status = Path(entry.path, "status").read_text()
                uid = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("Uid:"))
                if uid >= SANDBOX_UID_FIRST and b"bot.py" in Path(entry.path, "cmdline").read_bytes():
                    pids.append(int(entry.name))
    return pids


def _archive(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.iterdir()):
            if path.is_file():
                archive.add(path, arcname=path.name)
    return buffer.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--faults", type=int, default=8, help="faults injected while matches play")
    parser.add_argument("--database-url", help="default: a fresh SQLite file")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for every match")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    scratch = Path(tempfile.mkdtemp(prefix="septet-reliability-"))
    redis = Redis(scratch)
    redis.start()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "septet_platform.settings.dev",
        "DATABASE_URL": args.database_url or f"sqlite:///{scratch / 'septet.sqlite3'}",
        "REDIS_URL": redis.url,
        "SEPTET_DATA_DIR": str(scratch / "data"),
    }
    os.environ.update({key: env[key] for key in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL")})
    os.environ["SEPTET_DATA_DIR"] = env["SEPTET_DATA_DIR"]
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.utils import timezone

    from septet_platform.bots.models import Bot, BotVersion
    from septet_platform.celery import app
    from septet_platform.ladders.models import Ladder, RatingChange
    from septet_platform.matches import services
    from septet_platform.matches.models import Match, Seat
    from septet_platform.matches.tasks import match_run_task

    call_command("migrate", verbosity=0)
    owner = get_user_model().objects.create_user("house")
    versions = []
    for n, example in enumerate(["random", "greedy", "random", "greedy", "random"]):
        data = _archive(EXAMPLES / example)
        path = Path(settings.SEPTET_ARCHIVES_DIR) / f"{example}-{n}.tar.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        bot = Bot.objects.create(owner=owner, name=f"{example}-{n}", is_house=True)
        versions.append(
            BotVersion.objects.create(
                bot=bot,
                number=1,
                archive=path.name,
                archive_sha256="-",
                manifest={"games": ["oh-hell"]},
                status=BotVersion.Status.ACTIVE,
            )
        )
    ladder = Ladder.objects.create(game="oh-hell", min_players=3, max_players=3, bank_seconds=5.0)
    queue = f"septet-reliability-{uuid.uuid4().hex[:8]}"
    matches = []
    for number in range(args.matches):
        match = Match.objects.create(ladder=ladder, seed=number)
        for seat, version in enumerate(rng.sample(versions, 3)):
            Seat.objects.create(match=match, seat=seat, bot_version=version)
        matches.append(match.pk)

    def enqueue(match_id: int) -> None:
        with app.connection_for_write(redis.url) as broker:
            match_run_task.apply_async((match_id,), queue=queue, connection=broker)

    def reap() -> None:
        """The beat's reaper, as if the leases had run out, and the stale-match requeue."""
        later = timezone.now() + services.LEASE + services.STALE_SCHEDULED
        for match_id in services.matches_reap(now=later) + services.matches_requeue_stale(now=later):
            enqueue(match_id)

    started = time.monotonic()
    for match_id in matches:
        enqueue(match_id)
        enqueue(match_id)  # the redelivery every task must survive
    logs = scratch / "workers.log"
    workers = [_worker(env, queue, logs) for _ in range(args.workers)]
    faults: dict[str, int] = {"worker killed": 0, "redis restarted": 0, "bot killed": 0}
    for _ in range(args.faults):
        time.sleep(rng.uniform(2.0, 6.0))
        fault = rng.choice(["worker killed", "redis restarted", "bot killed", "bot killed"])
        if fault == "worker killed":
            victim = rng.randrange(len(workers))
            _kill_group(workers[victim])
            workers[victim] = _worker(env, queue, logs)
            reap()
        elif fault == "redis restarted":
            redis.stop()
            redis.start()
        else:
            bots = _sandboxed_bots()
            if not bots:
                continue
            with contextlib.suppress(ProcessLookupError):
                os.kill(rng.choice(bots), signal.SIGKILL)
        faults[fault] += 1

    done_states = (Match.Status.FINISHED, Match.Status.ABORTED)
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        if Match.objects.filter(pk__in=matches).exclude(status__in=done_states).count() == 0:
            break
        if not Match.objects.filter(pk__in=matches, status=Match.Status.RUNNING).exists():
            reap()  # nothing running but work left: queued tasks were lost, the beat would requeue
        time.sleep(5)
    elapsed = time.monotonic() - started
    for worker in workers:
        worker.terminate()
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            _kill_group(worker)
    redis.stop()

    completed = doubled = 0
    attempts = forfeits = 0
    for match in Match.objects.filter(pk__in=matches):
        seats = Seat.objects.filter(match=match)
        replays = list(Path(settings.SEPTET_REPLAYS_DIR).glob(f"{match.pk}-*"))
        if match.status in done_states:
            completed += 1
        if len(replays) > 1 or RatingChange.objects.filter(match=match).count() > seats.count():
            doubled += 1
        attempts += match.attempt
        forfeits += seats.exclude(forfeit_status="").count()
    lost = args.matches - completed
    print(f"faults injected: {', '.join(f'{name} {count}' for name, count in faults.items())}")
    print(f"{'matches scheduled':<22}{args.matches:>6}")
    print(f"{'completed':<22}{completed:>6}")
    print(f"{'recorded twice':<22}{doubled:>6}")
    print(f"{'lost':<22}{lost:>6}")
    print(f"{'attempts (voided)':<22}{attempts:>6} ({attempts - completed})")
    print(f"{'seats forfeited':<22}{forfeits:>6}")
    print(f"{'seconds':<22}{elapsed:>6.0f}")
    if lost or doubled:
        print(f"FAILED: see the workers' log in {logs}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
