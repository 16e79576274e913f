"""The centre's ceiling: how many rated matches a minute one PostgreSQL, one Redis, the beat and
the rating writer take, with many simulated workers and no bots.

A league of `--bots` bots (each its own owner) on the six ladders, in a PostgreSQL database of
this run's own (created, migrated, dropped at the end) and a redis-server of its own (append-only
file fsynced every second, as in production; `--redis URL` to use another). The beat runs the real
scheduling and reaper tasks at the beat's intervals (ceiling_workers.beat_process). Simulated
worker processes (ceiling_workers.worker_process) consume the real match queue and claim, record
(a real replay file, written durably) and rate each match through the platform's own services,
holding each match as long as a real one plays (`--match-seconds`, default the 1-worker
platform_throughput figure: 358 matches/min, 0.17 s a match, +-50%).

The number of simulated workers (match slots, spread over `--processes` processes) is raised
(1, 2, 4, ... `--workers`) until rated matches per minute stop growing (two steps in a row under
`--growth` times the best so far). Each step is measured over `--seconds` after `--warmup`, and
prints where the time and the CPU went: PostgreSQL's busy time and CPU per match, the backends
waiting on the ladder's lock, on other locks, on the WAL; the wait for a database thread (a
pool); Redis's CPU; the rating writer's batches and how long it holds each ladder's lock; how
often the queue was empty; the machine's busy cores. Then it says what saturated first, with the
figures. After the run the exactly-once check (ceiling_check.py) reads the database and the replay
folder on its own: every match recorded once, one rating change per seat, replays present with
their SHA-256, ratings recomputed in order equal to the stored ones.

`--writer both` measures each step with the batched rating writer and with the writer as it was
before (one transaction per match, ceiling_workers.per_match_ratings_apply), one after the other.

    python benchmarks/central_ceiling.py [--workers 256] [--seconds 30] [--warmup 15]
        [--match-seconds 0.17] [--processes 4] [--writer batched|per-match|both]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import multiprocessing
import os
import queue
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# `benchmarks/referee.py` must not shadow the referee package: the project first, this folder
# last (for ceiling_workers and ceiling_check, which the spawned processes import by name too).
sys.path[:] = (
    [str(ROOT), str(ROOT / "platform")]
    + [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
    + [str(HERE)]
)

import ceiling_check  # noqa: E402
import ceiling_workers  # noqa: E402

TARGET_PER_MINUTE = 6000
DEFAULT_MATCH_SECONDS = 60 / 358
"""One worker process of platform_throughput.py played 358 rated matches a minute (issue 20)."""
POSTGRES_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
SAMPLE_SECONDS = 0.1
QUEUE = "matches"
SWEEP_SECONDS = 30.0
"""After the last step: time left to the beat's sweep for matches no writer was left to."""
UNRATED = (
    "select count(*) from matches_match m where m.status = 'finished' and m.rated and not m.ratings_applied"
    " and not (m.duplicate_set <> '' and (select count(*) from matches_seat s where s.match_id = m.id) = 2"
    " and exists (select 1 from matches_match o where o.ladder_id = m.ladder_id"
    " and o.duplicate_set = m.duplicate_set and o.status in ('scheduled', 'running')))"
)
"""Matches recorded and waiting for their ratings (a two-seat set still being played excepted)."""
PRIORITY_LISTS = [QUEUE] + [f"{QUEUE}\x06\x16{step}" for step in (3, 6, 9)]
"""Kombu's Redis lists of the match queue, one per priority step (0 is the queue's own name)."""


@dataclass
class Step:
    """One measured step: `workers` simulated workers with one rating writer."""

    workers: int
    writer: str
    seconds: float
    rated: int = 0
    cores: int = 1
    machine_busy: float = 0.0  # cores busy, whole machine
    cpu: dict[str, float] = field(default_factory=dict)  # seconds of CPU in the window, by part
    database: dict[str, float] = field(default_factory=dict)  # pg_stat_database deltas
    waits: dict[str, float] = field(default_factory=dict)  # mean backends in each state
    queue_empty: float = 0.0  # share of samples with no match waiting in the queue
    queue_depth: float = 0.0
    slot_idle: float = 0.0  # share of the slots' time spent waiting for a message
    pool_wait_ms: float = 0.0  # per match, waiting for a database thread
    phase_ms: dict[str, float] = field(default_factory=dict)  # per match
    phase_cpu_ms: dict[str, float] = field(default_factory=dict)  # per match, the database thread's CPU
    batches: int = 0
    batched_matches: int = 0
    writer_busy: float = 0.0  # the busiest ladder: share of the window its lock was held by the writer
    held_ms: float = 0.0  # per batch
    beat_ticks: int = 0
    beat_seconds: float = 0.0  # the longest scheduling run in the window
    scheduled: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def per_minute(self) -> float:
        return self.rated * 60 / self.seconds

    def per_match_ms(self, seconds: float) -> float:
        return 1000 * seconds / max(self.rated, 1)


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    signal.signal(signal.SIGTERM, _interrupted)
    run = Run(args)
    try:
        run.start()
        steps = run.curve()
        findings = run.check()
    except KeyboardInterrupt:
        print("interrupted: cleaning up", file=sys.stderr)
        return 130
    finally:
        run.close()
    _report(steps, findings, args, run.unrated_at_stop)
    return 0 if findings.clean else 1


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", type=int, default=256, help="the most simulated workers to try")
    parser.add_argument("--start", type=int, default=1, help="the fewest (doubled up to --workers)")
    parser.add_argument("--seconds", type=float, default=30.0, help="measured window per step")
    parser.add_argument("--warmup", type=float, default=15.0, help="before each window")
    parser.add_argument("--match-seconds", type=float, default=DEFAULT_MATCH_SECONDS)
    parser.add_argument("--jitter", type=float, default=0.5, help="match length spread (+- share)")
    parser.add_argument("--processes", type=int, default=4, help="simulated worker processes")
    parser.add_argument("--db-threads", type=int, default=8, help="database connections per process")
    parser.add_argument("--bots", type=int, default=24)
    parser.add_argument("--growth", type=float, default=1.1, help="a step must beat the best by this")
    parser.add_argument("--writer", choices=("batched", "per-match", "both"), default="batched")
    parser.add_argument("--referee", action="store_true", help="play every match's game on its seed")
    parser.add_argument(
        "--nice", type=int, default=10, help="niceness added to the simulated workers (the centre first)"
    )
    parser.add_argument("--no-reap", action="store_true", help="run the beat's scheduling only")
    parser.add_argument("--redis", default="", metavar="URL", help="a Redis database of this run's own")
    parser.add_argument("--postgres", default=POSTGRES_ADMIN, metavar="URL", help="a database to connect to")
    args = parser.parse_args(argv)
    if args.workers < 1 or args.start < 1 or args.seconds <= 0 or args.match_seconds <= 0:
        parser.error("--workers, --start, --seconds and --match-seconds must be positive")
    if not 0 <= args.jitter < 1:
        parser.error("--jitter must be in [0, 1)")
    return args


def _interrupted(*_: object) -> None:
    raise KeyboardInterrupt


class Run:
    """The database, the broker, the data folder and the processes of one run."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.database = f"septet_ceiling_{secrets.token_hex(5)}"
        self.folder = Path(tempfile.mkdtemp(prefix="septet-ceiling-"))
        self.redis: RedisServer | None = None
        self.redis_url = args.redis
        self.spawn = multiprocessing.get_context("spawn")
        self.reports: Any = self.spawn.Queue()
        self.ready: Any = self.spawn.Queue()
        self.beat: Any = None
        self.beat_stop: Any = self.spawn.Event()
        self.beat_queue: Any = self.spawn.Queue()
        self.beat_runs: list[tuple[str, float, float, int, str]] = []
        self.done: list[ceiling_workers.Done] = []
        self.leftover: set[int] = set()
        self.created = False
        self.unrated_at_stop = 0

    def start(self) -> None:
        import psycopg

        if not self.redis_url:
            self.redis = RedisServer(self.folder / "redis")
            self.redis_url = self.redis.url(0)
        with psycopg.connect(self.args.postgres, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{self.database}"')
        self.created = True
        base = self.args.postgres.rsplit("/", 1)[0]
        os.environ.update(
            {
                "DJANGO_SETTINGS_MODULE": "septet_platform.settings.prod",
                "SECRET_KEY": secrets.token_urlsafe(48),
                "DATABASE_URL": f"{base}/{self.database}",
                "REDIS_URL": self.redis_url,
                "SEPTET_DATA_DIR": str(self.folder / "data"),
                "SEPTET_LOG_LEVEL": "WARNING",
                "SEPTET_REQUIRE_SECCOMP": "0",  # no bot runs here
            }
        )
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connections

        call_command("migrate", verbosity=0)
        _league(self.args.bots)
        connections.close_all()
        print(
            f"league: {self.args.bots} bots on 6 ladders; database {self.database}; broker {self.redis_url}; "
            f"a match held {self.args.match_seconds:.3f} s +-{self.args.jitter:.0%}",
            flush=True,
        )
        self.beat = self.spawn.Process(
            target=ceiling_workers.beat_process,
            args=(self.beat_stop, self.ready, self.beat_queue, not self.args.no_reap),
            name="beat",
            daemon=True,
        )
        self.beat.start()
        self.ready.get(timeout=120)

    def curve(self) -> list[Step]:
        """Steps of doubling workers until the rate stops growing (see the module docstring)."""
        writers = ("per-match", "batched") if self.args.writer == "both" else (self.args.writer,)
        steps: list[Step] = []
        best = 0.0
        flat = 0
        workers = self.args.start
        while workers <= self.args.workers:
            for writer in writers:
                step = self.step(workers, writer)
                steps.append(step)
                _print_step(step, steps)
            rate = steps[-1].per_minute
            flat = flat + 1 if rate < self.args.growth * best else 0
            best = max(best, rate)
            if flat >= 2:
                break
            workers *= 2
        return steps

    def step(self, workers: int, writer: str) -> Step:
        """Starts `workers` slots, warms up, measures a window, stops them (their matches finish)."""
        processes = min(self.args.processes, workers)
        stop = self.spawn.Event()
        started = []
        for index in range(processes):
            slots = workers // processes + (1 if index < workers % processes else 0)
            config = ceiling_workers.WorkerConfig(
                name=f"w{workers}-{writer}-{index}",
                slots=slots,
                db_threads=max(1, min(self.args.db_threads, slots)),
                match_seconds=self.args.match_seconds,
                jitter=self.args.jitter,
                referee=self.args.referee,
                writer=writer,
                nice=self.args.nice,
            )
            process = self.spawn.Process(
                target=ceiling_workers.worker_process,
                args=(config, stop, self.ready, self.reports),
                name=config.name,
                daemon=True,
            )
            process.start()
            started.append(process)
        for _ in started:
            self.ready.get(timeout=120)
        time.sleep(self.args.warmup)
        monitor = Monitor(
            self.args.postgres,
            self.database,
            self.redis_url,
            [p.pid for p in started],
            self.beat.pid,
            self.redis,
        )
        opened = time.time()
        with monitor.sampling():
            time.sleep(self.args.seconds)
        closed = time.time()
        step = monitor.step(workers, writer, closed - opened)
        stop.set()
        reports = [self.reports.get(timeout=300) for _ in started]
        for process in started:
            process.join(timeout=60)
        _summarise(step, reports, opened, closed, self.args.match_seconds, workers)
        self._beat_summarise(step, opened, closed)
        for report in reports:
            self.done += report.done
        return step

    def _beat_summarise(self, step: Step, opened: float, closed: float) -> None:
        """The beat's scheduling runs that started in the window: how many, how long, what they queued."""
        with contextlib.suppress(queue.Empty):
            while True:
                self.beat_runs.append(self.beat_queue.get_nowait())
        ticks = [run for run in self.beat_runs if run[0] == "schedule" and opened <= run[1] < closed]
        step.beat_ticks = len(ticks)
        step.beat_seconds = max((run[2] for run in ticks), default=0.0)
        step.scheduled = sum(max(run[3], 0) for run in ticks)
        step.errors += [run[4] for run in self.beat_runs if run[4] and opened <= run[1] < closed]

    def check(self) -> ceiling_check.Findings:
        """Lets the sweep rate what no writer was left to (see rating_writer), stops the beat,
        takes what is left in the queue, and checks (ceiling_check)."""
        import psycopg

        base = self.args.postgres.rsplit("/", 1)[0]
        with psycopg.connect(f"{base}/{self.database}", autocommit=True) as connection:
            deadline = time.monotonic() + SWEEP_SECONDS
            self.unrated_at_stop = unrated = connection.execute(UNRATED).fetchone()[0]  # type: ignore[index]
            while unrated and time.monotonic() < deadline:
                time.sleep(1)
                unrated = connection.execute(UNRATED).fetchone()[0]  # type: ignore[index]
        self.beat_stop.set()
        self.beat.join(timeout=120)
        self.leftover = _drain_queue()
        with psycopg.connect(f"{base}/{self.database}") as connection, connection.cursor() as cursor:
            return ceiling_check.check(
                cursor,
                self.folder / "data" / "replays",
                reported=[(done.match_id, done.attempt) for done in self.done],
                queued=self.leftover,
            )

    def close(self) -> None:
        """Stops everything this run started and removes its database, broker and folder."""
        import psycopg

        self.beat_stop.set()
        for child in self.spawn.active_children():
            child.terminate()
            child.join(timeout=10)
        with contextlib.suppress(Exception):
            from django.db import connections

            connections.close_all()
        if self.created:
            with psycopg.connect(self.args.postgres, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
        if self.redis is not None:
            self.redis.stop()
        elif self.redis_url:
            redis.Redis.from_url(self.redis_url).flushdb()  # this run's own database index only
        shutil.rmtree(self.folder, ignore_errors=True)


def _league(bots: int) -> None:
    """Every ladder, and `bots` ACTIVE bots playing every game, each of a different owner."""
    from django.contrib.auth.models import User

    from referee.engine.games import all_games
    from septet_platform.bots.models import Bot, BotVersion
    from septet_platform.ladders.services import ladders_ensure

    ladders_ensure()
    for number in range(bots):
        owner = User.objects.create(username=f"owner{number}")
        bot = Bot.objects.create(owner=owner, name=f"bot{number}")
        BotVersion.objects.create(
            bot=bot,
            number=1,
            archive=f"bot{number}/v1.tar.gz",
            archive_sha256="0" * 64,
            manifest={"name": bot.name, "games": list(all_games())},
            status=BotVersion.Status.ACTIVE,
            build_status=BotVersion.Build.BUILT,
        )


def _drain_queue() -> set[int]:
    """The match ids of the tasks left in the queue (taken off it) and of any still unacknowledged."""
    from kombu import Consumer, Exchange
    from kombu import Queue as BrokerQueue

    from septet_platform.celery import app

    left: set[int] = set()

    def take(body: Any, message: Any) -> None:
        left.add(int(body[0][0]))
        message.ack()

    matches = BrokerQueue(QUEUE, Exchange(QUEUE, type="direct"), routing_key=QUEUE)
    consumer = {"queues": [matches], "callbacks": [take], "accept": ["json"], "prefetch_count": 1000}
    with (
        app.connection_for_read() as connection,
        Consumer(connection, **consumer),
        contextlib.suppress(socket.timeout, TimeoutError),
    ):
        while True:
            connection.drain_events(timeout=1.0)
    for raw in redis.Redis.from_url(os.environ["REDIS_URL"]).hvals("unacked"):
        message, *_ = json.loads(raw)
        left.add(int(json.loads(_body(message))[0][0]))
    return left


def _body(message: dict[str, Any]) -> bytes:
    body = message["body"]
    return base64.b64decode(body) if message.get("properties", {}).get("body_encoding") == "base64" else body


class RedisServer:
    """A redis-server of this run's own on a free port (append-only, fsynced every second)."""

    def __init__(self, folder: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        folder.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder),
             "--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--daemonize", "no",
             "--logfile", str(folder / "redis.log")],
            stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        self.client = redis.Redis(port=self.port, socket_timeout=5)
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(redis.RedisError):
                if self.client.ping():
                    return
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit(f"redis-server did not start: see {folder / 'redis.log'}")
            time.sleep(0.05)

    def url(self, index: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{index}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# Measuring a window -----------------------------------------------------------------------------


def _process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) of a process so far; None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values) - idle) / os.sysconf("SC_CLK_TCK"), sum(values) / os.sysconf("SC_CLK_TCK")


class Monitor:
    """Snapshots at the window's ends and samples within it (every SAMPLE_SECONDS)."""

    def __init__(
        self,
        postgres: str,
        database: str,
        redis_url: str,
        workers: list[int],
        beat: int,
        redis_server: RedisServer | None,
    ) -> None:
        import psycopg

        self.database = database
        self.workers = workers
        self.beat = beat
        self.redis_process = redis_server.process.pid if redis_server is not None else None
        self.client = redis.Redis.from_url(redis_url, socket_timeout=5)
        self.pg = psycopg.connect(postgres.rsplit("/", 1)[0] + f"/{database}", autocommit=True)
        self.samples = 0
        self.waits: Counter[str] = Counter()
        self.depths: list[int] = []
        self._stop = threading.Event()

    @contextlib.contextmanager
    def sampling(self) -> Iterator[None]:
        self.before = self._snapshot()
        self.opened = time.monotonic()
        thread = threading.Thread(target=self._sample_until_stopped, daemon=True)
        thread.start()
        try:
            yield
        finally:
            self._stop.set()
            thread.join()
            self.after = self._snapshot()
            self.closed = time.monotonic()

    def step(self, workers: int, writer: str, seconds: float) -> Step:
        step = Step(workers, writer, seconds, cores=os.cpu_count() or 1)
        before, after = self.before, self.after
        step.machine_busy = (after["machine"][0] - before["machine"][0]) / seconds
        for part in ("workers", "beat", "postgres", "redis"):
            step.cpu[part] = (
                after[part] - before[part] if part != "postgres" else _backends_cpu(before, after)
            )
        step.database = {key: after["stats"][key] - before["stats"][key] for key in after["stats"]}
        step.waits = {kind: count / max(self.samples, 1) for kind, count in self.waits.items()}
        step.queue_empty = sum(depth == 0 for depth in self.depths) / max(len(self.depths), 1)
        step.queue_depth = statistics.fmean(self.depths) if self.depths else 0.0
        self.pg.close()
        return step

    def _snapshot(self) -> dict[str, Any]:
        rows = self.pg.execute(
            "select xact_commit, xact_rollback, tup_inserted, tup_updated, tup_fetched, active_time,"
            " blks_read from pg_stat_database where datname = %s",
            (self.database,),
        ).fetchone()
        assert rows is not None
        keys = ("commits", "rollbacks", "inserted", "updated", "fetched", "active_ms", "blocks_read")
        backends = {
            pid: _process_cpu(pid)
            for (pid,) in self.pg.execute(
                "select pid from pg_stat_activity where datname = %s and pid <> pg_backend_pid()",
                (self.database,),
            ).fetchall()
        }
        info = self.client.info("cpu")
        redis_cpu = (
            _process_cpu(self.redis_process) or 0.0
            if self.redis_process
            else float(info["used_cpu_sys"]) + float(info["used_cpu_user"])
        )
        return {
            "stats": dict(zip(keys, (float(value or 0) for value in rows), strict=True)),
            "backends": backends,
            "workers": sum(_process_cpu(pid) or 0.0 for pid in self.workers),
            "beat": _process_cpu(self.beat) or 0.0,
            "redis": redis_cpu,
            "machine": _machine_busy(),
        }

    def _sample_until_stopped(self) -> None:
        activity = (
            "select a.wait_event_type, a.wait_event, a.state, a.query from pg_stat_activity a"
            " where a.datname = %s and a.pid <> pg_backend_pid()"
        )
        while not self._stop.wait(SAMPLE_SECONDS):
            self.samples += 1
            for wait_type, wait_event, state, query in self.pg.execute(activity, (self.database,)).fetchall():
                self.waits[_classify(wait_type, wait_event, state, query or "")] += 1
            pipe = self.client.pipeline()
            for name in PRIORITY_LISTS:
                pipe.llen(name)
            self.depths.append(sum(pipe.execute()))


def _classify(wait_type: str | None, wait_event: str | None, state: str | None, query: str) -> str:
    """What one backend was doing: running, waiting on the ladder's lock, on another lock, on
    the WAL (a commit's flush), or idle (between statements of a transaction, or between
    transactions)."""
    if state == "active" and wait_type is None:
        return "running"
    if wait_type == "Lock":
        return "lock: ladder" if 'FROM "ladders_ladder"' in query else "lock: other"
    if wait_type in ("LWLock", "IO") and wait_event and "WAL" in wait_event:
        return "wal"
    if state == "idle in transaction":
        return "idle in transaction"
    if state == "active":
        return f"other: {wait_type}"
    return "idle"


def _backends_cpu(before: dict[str, Any], after: dict[str, Any]) -> float:
    """CPU of this database's backends over the window (new ones counted from their start)."""
    total = 0.0
    for pid, now in after["backends"].items():
        if now is not None:
            total += now - (before["backends"].get(pid) or 0.0)
    return total


def _summarise(
    step: Step, reports: list[Any], opened: float, closed: float, match_seconds: float, workers: int
) -> None:
    """Adds the workers' own accounts of the window to `step`."""
    inside = [done for report in reports for done in report.done if opened <= done.rated_at < closed]
    step.rated = len(inside)
    if inside:
        step.pool_wait_ms = 1000 * statistics.fmean(done.pool_wait for done in inside)
        for phase in ("claim", "record", "rate"):
            step.phase_ms[phase] = 1000 * statistics.fmean(getattr(done, phase) for done in inside)
            step.phase_cpu_ms[phase] = 1000 * statistics.fmean(
                getattr(done, f"{phase}_cpu") for done in inside
            )
        waiting = sum(done.waited_for_message for done in inside)
        step.slot_idle = waiting / (workers * step.seconds)
    held: defaultdict[int, float] = defaultdict(float)
    batches = [batch for report in reports for batch in report.batches if opened <= batch[0] < closed]
    for _, ladder, matches, seconds in batches:
        held[ladder] += seconds
        step.batched_matches += matches
    step.batches = sum(1 for batch in batches if batch[2])
    step.held_ms = 1000 * sum(held.values()) / max(step.batches, 1)
    step.writer_busy = max(held.values(), default=0.0) / step.seconds
    step.errors = [error for report in reports for error in report.errors]


# The report ----------------------------------------------------------------------------------------


def _print_step(step: Step, steps: list[Step]) -> None:
    earlier = [s for s in steps[:-1] if s.writer == step.writer]
    growth = f"x{step.per_minute / earlier[-1].per_minute:.2f}" if earlier and earlier[-1].per_minute else ""
    cpu = {part: step.per_match_ms(seconds) for part, seconds in step.cpu.items()}
    ours = sum(step.cpu.values()) / step.seconds
    print(
        f"{step.workers:4d} workers ({step.writer}): {step.per_minute:7.0f} rated/min {growth:6s}| "
        f"machine {step.machine_busy:.2f}/{step.cores} cores busy, this run's {ours:.2f} | "
        f"CPU ms/match: workers {cpu['workers']:.1f}, "
        f"postgres {cpu['postgres']:.1f}, redis {cpu['redis']:.2f}, beat {cpu['beat']:.2f}",
        flush=True,
    )
    waits = ", ".join(f"{kind} {mean:.2f}" for kind, mean in sorted(step.waits.items()) if kind != "idle")
    database = step.database
    print(
        f"      postgres: busy {database.get('active_ms', 0) / max(step.rated, 1):.1f} ms/match, "
        f"{database.get('commits', 0) / max(step.rated, 1):.1f} commits/match; backends (mean): {waits}",
        flush=True,
    )
    phases = ", ".join(
        f"{phase} {ms:.1f}/{step.phase_cpu_ms[phase]:.1f}" for phase, ms in step.phase_ms.items()
    )
    mean_batch = step.batched_matches / step.batches if step.batches else 0.0
    print(
        f"      per match ms (wall/CPU): {phases}, waiting for a db thread {step.pool_wait_ms:.1f}; "
        f"slots idle for a message {step.slot_idle:.0%}; queue empty {step.queue_empty:.0%} of samples "
        f"(mean {step.queue_depth:.0f} waiting); rating batches {step.batches} of {mean_batch:.1f} matches, "
        f"lock held {step.held_ms:.1f} ms each, busiest ladder's writer busy {step.writer_busy:.0%}",
        flush=True,
    )
    centre = cpu["postgres"] + cpu["redis"] + cpu["beat"]
    print(
        f"      beat: {step.beat_ticks} scheduling runs queued {step.scheduled} matches (longest "
        f"{step.beat_seconds:.1f} s); the centre (postgres + redis + beat) {centre:.1f} CPU ms/match: "
        f"{step.cores} cores of its own would take {_centre_ceiling(step):.0f} matches/min",
        flush=True,
    )
    for error in step.errors[:3]:
        print(f"      error: {error}", flush=True)


def _centre_ceiling(step: Step) -> float:
    """Rated matches a minute the centre's CPU per match would allow on `step.cores` cores of its own."""
    centre = sum(step.cpu.get(part, 0.0) for part in ("postgres", "redis", "beat")) / max(step.rated, 1)
    return 60 * step.cores / centre if centre else 0.0


def _saturation(steps: list[Step]) -> list[str]:
    """What stopped the growth: the evidence at the best step and the one after it."""
    batched = [step for step in steps if step.writer == steps[-1].writer]
    best = max(batched, key=lambda step: step.per_minute)
    lines = [f"best: {best.per_minute:.0f} rated matches/min with {best.workers} simulated workers"]
    later = [step for step in batched if step.workers > best.workers]
    if not later:
        lines.append("  the rate was still growing at the last step: raise --workers to find the ceiling")
        return lines
    beyond = later[0]
    cpu = {part: beyond.per_match_ms(seconds) for part, seconds in beyond.cpu.items()}
    verdicts = []
    if beyond.machine_busy >= 0.85 * beyond.cores:
        shares = ", ".join(f"{part} {ms:.1f}" for part, ms in sorted(cpu.items(), key=lambda kv: -kv[1]))
        verdicts.append(
            (
                beyond.machine_busy / beyond.cores,
                f"this machine's CPU: {beyond.machine_busy:.2f} of {beyond.cores} cores busy at "
                f"{beyond.workers} workers, {sum(beyond.cpu.values()) / beyond.seconds:.2f} of them this "
                f"run's processes (CPU ms per match: {shares}; the simulated workers' share "
                f"would sit on worker machines in a real league)",
            )
        )
    ladder_waits = beyond.waits.get("lock: ladder", 0.0)
    verdicts.append(
        (
            beyond.writer_busy,
            f"the rating writer: busiest ladder's lock held {beyond.writer_busy:.0%} of the time, "
            f"{ladder_waits:.2f} backends waiting on a ladder's lock on average",
        )
    )
    running = beyond.waits.get("running", 0.0) + beyond.waits.get("wal", 0.0)
    verdicts.append(
        (
            min(1.0, running / beyond.cores),
            f"PostgreSQL: {running:.2f} backends running or flushing the WAL on average "
            f"({beyond.waits.get('wal', 0.0):.2f} on the WAL), busy "
            f"{beyond.database.get('active_ms', 0) / max(beyond.rated, 1):.1f} ms per match; "
            f"{beyond.pool_wait_ms:.1f} ms per match waiting for a database thread",
        )
    )
    verdicts.append(
        (
            beyond.queue_empty,
            f"the beat and broker: the queue was empty in {beyond.queue_empty:.0%} of samples, slots idle "
            f"{beyond.slot_idle:.0%} waiting for a message, Redis {cpu['redis']:.2f} CPU ms per match",
        )
    )
    verdicts.sort(key=lambda verdict: -verdict[0])
    growth = beyond.per_minute / best.per_minute
    lines.append(f"  from {best.workers} to {beyond.workers} workers the rate went x{growth:.2f}")
    lines.append(f"  saturated first: {verdicts[0][1]}")
    lines += [f"  then: {text}" for _, text in verdicts[1:]]
    return lines


def _report(
    steps: list[Step], findings: ceiling_check.Findings, args: argparse.Namespace, unrated: int
) -> None:
    print("\nCeiling curve (simulated workers -> rated matches/min):")
    for writer in dict.fromkeys(step.writer for step in steps):
        curve = ", ".join(f"{s.workers} -> {s.per_minute:.0f}" for s in steps if s.writer == writer)
        print(f"  {writer}: {curve}")
    if args.writer == "both":
        pairs = defaultdict(dict)
        for step in steps:
            pairs[step.workers][step.writer] = step.per_minute
        ratios = ", ".join(
            f"{workers}: x{pair['batched'] / pair['per-match']:.2f}"
            for workers, pair in pairs.items()
            if pair.get("per-match") and "batched" in pair
        )
        print(f"  batched / per-match writer, same workers: {ratios}")
    for line in _saturation(steps):
        print(line)
    at_best = max(steps, key=lambda step: step.per_minute)
    centre_ms = 60_000 * at_best.cores / max(_centre_ceiling(at_best), 1)
    print(
        f"the centre alone (PostgreSQL's backends, Redis, the beat) used {centre_ms:.1f} CPU ms per rated "
        f"match at the best step: on {at_best.cores} cores of its own, about "
        f"{_centre_ceiling(at_best):.0f} rated matches/min"
    )
    best = max(step.per_minute for step in steps)
    verdict = "reached" if best >= TARGET_PER_MINUTE else "NOT reached"
    print(f"goal {TARGET_PER_MINUTE} rated matches/min: {verdict} (best {best:.0f})")
    print("exactly-once check: " + ("PASSED" if findings.clean else "FAILED"))
    print(f"  {unrated} recorded matches were left to the sweep when the workers stopped")
    for line in findings.summary():
        print("  " + line)


if __name__ == "__main__":
    sys.exit(main())
