"""What one rated match costs, in CPU, split by component, before and after, on the production setup.

Each side (the working tree, "after"; an older commit, "before", unpacked with `git archive` into
a temporary folder) gets a PostgreSQL database of its own on this machine's server (made and
dropped here) and a Redis database index on a redis-server this benchmark starts on a free port.
Each side is prepared as `septet up` prepares a platform (migrations, ladders, the example bots
submitted as house bots and qualified in the sandbox), from its own tree. Then, in rounds that
alternate the sides (before, after, after, before, ...), a real Celery worker of that side
(production settings, prefork, as deploy/ runs it, sandboxed and warm house bots) plays the same
matches: N rated matches per game id, as duplicate sets (every rotation of a seating on one seed)
of the same seeds and seatings on both sides, after a warm-up of its own.

Measured over each window (from the first match queued to the last one recorded and rated):
- the worker: its processes' own CPU (/proc: user + system of every thread), and inside the pool
  processes the thread CPU of each step of a match (claim, bot starts, referee, bots after the
  match, record, ratings) and of the tasks, from benchmarks/match_cost_worker.py, the Celery app
  module the worker is started with; what is left is Celery, kombu, gRPC's threads and logging;
- bot processes: everything the worker started (bubblewrap and the bots), from a cpuacct control
  group of this benchmark's own holding the worker's whole tree (cgroup v1), or by sampling /proc
  where that cannot be made (then the CPU of short-lived processes is partly missed);
- Redis: the redis-server's own CPU; commands from INFO commandstats;
- PostgreSQL: the CPU of the server processes serving the side's database (pg_stat_activity,
  sampled every 0.2 s; a backend that exits loses its last sample's worth), not the server's
  shared background processes;
- database statements (the worker's execute wrapper), bot starts, matches per minute.

The shared machine makes wall times noisy; CPU per match is steadier, and the sides alternate.
Needs PostgreSQL (trust, or a URL with credentials), redis-server, bubblewrap, git and root or
a writable cpuacct hierarchy for the bot figure.

    python benchmarks/match_cost.py [--matches 40] [--warmup 8] [--rounds 2] [--concurrency 2]
                                    [--before REF | --before none] [--postgres URL] [--profile]
                                    [--game GAME ...]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
WORKER_MODULE = Path(__file__).resolve().with_name("match_cost_worker.py")
BEFORE_COMMIT = "5ea3926"
"""The tree before issue 20's work on the cost of a match: the default "before" side."""
QUEUES = "matches,qualification,maintenance,tournaments,challenges"
MATCH_TASK = "septet.match_run"
LADDER_PRIORITY = 9
"""The ladder queue's message priority (septet_platform/matches/queues.py); the worker consumes
every priority anyway."""
CGROUP_CPUACCT = Path("/sys/fs/cgroup/cpuacct")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
TARGET_CUT = 0.40
PHASE_LIMIT_SECONDS = 900.0
STEP_ORDER = ("claim", "bot starts", "referee", "bots after the match", "record", "ratings")


# Processes and CPU --------------------------------------------------------------------------------


def process_cpu(pid: int, *, children: bool = False) -> float | None:
    """CPU seconds (user + system, every thread) of a live process; with `children`, plus those of
    its waited-for children. None when it is gone or unreadable."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / CLOCK_TICKS


def thread_cpu(pids: list[int]) -> dict[str, float]:
    """CPU seconds of the live threads of `pids`: their main threads, and the others (gRPC's, the
    lease keepers', Celery's); threads that ended are in neither."""
    found: dict[str, float] = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{pid}/task").iterdir():
                with contextlib.suppress(OSError):
                    text = (task / "stat").read_text()
                    name = "main thread" if task.name == str(pid) else "other threads"
                    fields = text.rsplit(")", 1)[1].split()
                    found[name] = found.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return found


def children_of() -> dict[int, list[int]]:
    """Every process's children, from /proc."""
    found: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        found.setdefault(parent, []).append(int(entry.name))
    return found


def descendants(pid: int) -> list[int]:
    tree = children_of()
    found, todo = [], list(tree.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(tree.get(child, []))
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class CpuGroup:
    """A cpuacct control group of this benchmark's own (cgroup v1): everything the worker starts
    is counted in it, including processes that have exited. None of it when it cannot be made."""

    def __init__(self, name: str) -> None:
        self.path: Path | None = CGROUP_CPUACCT / name
        try:
            self.path.mkdir()
        except OSError:
            self.path = None

    @property
    def procs_file(self) -> Path | None:
        return self.path / "cgroup.procs" if self.path else None

    def usage(self) -> float | None:
        if self.path is None:
            return None
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def remove(self, timeout: float = 15.0) -> None:
        """Removes the group once the worker's last process (a bot dying after it) has left it."""
        if self.path is None:
            return
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.path.rmdir()
                return
            except OSError:
                if time.monotonic() > deadline:
                    print(f"could not remove the control group {self.path}", file=sys.stderr)
                    return
                time.sleep(0.2)


class TreeSampler:
    """CPU of a process tree's descendants outside `exclude`, sampled from /proc (the fallback
    where no control group can be made): each process's latest reading is kept after it exits."""

    def __init__(self, root: int, exclude: set[int]) -> None:
        self.root, self.exclude = root, exclude
        self.latest: dict[int, float] = {}
        self.baseline: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.sample()

    def sample(self) -> None:
        for pid in descendants(self.root):
            if pid not in self.exclude and (cpu := process_cpu(pid)) is not None:
                self.latest[pid] = cpu

    def mark(self) -> None:
        self.sample()
        self.baseline = dict(self.latest)

    def spent(self) -> float:
        self.sample()
        return sum(cpu - self.baseline.get(pid, 0.0) for pid, cpu in self.latest.items())

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


class PostgresSampler:
    """CPU of the PostgreSQL backends serving one database (and its autovacuum workers), from
    /proc every 0.2 s; the poller's own connection (to the maintenance database) is not among
    them. None where the server's processes cannot be read (another machine)."""

    def __init__(self, admin_url: str) -> None:
        import psycopg

        self.connection = psycopg.connect(admin_url, autocommit=True)
        self.database = ""
        self.exclude: set[int] = set()
        self.latest: dict[int, float] = {}
        self.baseline: dict[int, float] = {}
        self.readable = True
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def watch(self, database: str, exclude: set[int]) -> None:
        with self._lock:
            self.database, self.exclude, self.latest, self.baseline = database, exclude, {}, {}
        self.sample()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            with contextlib.suppress(Exception):
                self.sample()

    def sample(self) -> None:
        with self._lock:
            if not self.database:
                return
            pids = [
                row[0]
                for row in self.connection.execute(
                    "select pid from pg_stat_activity where datname = %s", (self.database,)
                )
            ]
            for pid in pids:
                if pid in self.exclude:
                    continue
                cpu = process_cpu(pid)
                if cpu is None:
                    self.readable = self.readable and Path(f"/proc/{pid}").exists()
                    continue
                self.latest[pid] = cpu

    def mark(self) -> None:
        self.sample()
        with self._lock:
            self.baseline = dict(self.latest)

    def spent(self) -> float | None:
        self.sample()
        with self._lock:
            if not self.readable:
                return None
            return sum(cpu - self.baseline.get(pid, 0.0) for pid, cpu in self.latest.items())

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.connection.close()


class RedisServer:
    """A redis-server of this benchmark's own on a free port, in `folder` (append-only file
    fsynced every second, as the platform's embedded broker runs)."""

    def __init__(self, folder: Path) -> None:
        import redis

        self.port = free_port()
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
                    break
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit(f"redis-server did not start: see {folder / 'redis.log'}")
            time.sleep(0.05)

    def url(self, index: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{index}"

    def cpu(self) -> float:
        return process_cpu(self.process.pid) or 0.0

    def commands(self) -> int:
        """Commands served so far (INFO commandstats), this INFO itself not counted."""
        stats = self.client.info("commandstats")
        return sum(int(entry["calls"]) for entry in stats.values()) - 1

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# The two sides -----------------------------------------------------------------------------------


@dataclass
class Side:
    """One tree being measured, with its database and Redis index."""

    name: str
    tree: Path
    database: str
    database_url: str
    redis_url: str
    folder: Path
    probe: Path
    python: str = sys.executable
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(48))

    def env(self, **extra: str) -> dict[str, str]:
        keep = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "SEPTET_"))}
        keep.pop("PYTHONPATH", None)
        keep.pop("GRPC_EXPERIMENTS", None)  # each side's own code chooses gRPC's transport
        return {
            **keep,
            "DJANGO_SETTINGS_MODULE": "septet_platform.settings.prod",
            "SECRET_KEY": self.secret_key,
            "ALLOWED_HOSTS": "localhost",
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "SEPTET_DATA_DIR": str(self.folder / "data"),
            "SEPTET_PROTOS": str(self.tree / "protos"),
            "PYTHONPATH": os.pathsep.join([str(self.probe), str(self.tree), str(self.tree / "platform")]),
            # the bots' `python` too (the sandbox binds the worker's environment, not this one)
            "PATH": os.pathsep.join([str(Path(self.python).parent), os.environ.get("PATH", "")]),
            **extra,
        }

    def run(self, command: str, stdin: str = "", **extra: str) -> Any:
        """Runs match_cost_worker.py `command` with this side's code and settings; its JSON."""
        done = subprocess.run(
            [self.python, str(self.probe / WORKER_MODULE.name), command],
            input=stdin, capture_output=True, text=True, env=self.env(**extra), cwd=self.tree,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"{self.name}: {command} failed:\n{done.stderr[-4000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def unpack_commit(reference: str, target: Path) -> Path:
    """The tree of `reference` (a commit of this repository), unpacked with git archive."""
    target.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", reference], capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise SystemExit(f"--before {reference}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def environment_for(tree: Path, target: Path) -> str:
    """A Python environment whose `referee` and `septet_platform` are `tree`'s: this one copied as
    hard links, with the editable install's finder rewritten to point at `tree` (a new file: the
    original stays as it is). Sandboxed bots import the SDK through that finder, so a PYTHONPATH
    alone would hand them this checkout's. Its Python (the interpreter the worker runs)."""
    source = Path(sys.prefix)
    if source == Path(sys.base_prefix):
        raise SystemExit("--before needs this benchmark run from the project's virtual environment")
    subprocess.run(["cp", "-al", str(source), str(target)], check=True)
    for finder in target.glob("lib/python*/site-packages/__editable__*finder.py"):
        text = finder.read_text()
        finder.unlink()
        finder.write_text(text.replace(str(ROOT), str(tree)))
    return str(target / "bin" / "python")


def database_url(admin_url: str, name: str) -> str:
    parts = urlsplit(admin_url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def examples_copy(side: Side, cache: dict[str, Path]) -> Path:
    """A copy of the side's example bots to pack (a build's node_modules stays out of the tree),
    with the node_modules of an earlier copy of the same lock file when there is one."""
    target = side.folder / "examples"
    shutil.copytree(side.tree / "bots" / "examples", target, ignore=shutil.ignore_patterns("node_modules"))
    for lock in target.glob("*/package-lock.json"):
        key = lock.read_text()
        if key in cache and cache[key].is_dir():  # a tree that builds house bots in a copy leaves none
            shutil.copytree(cache[key], lock.parent / "node_modules", symlinks=True)
        else:
            cache[key] = lock.parent / "node_modules"
    return target


# Matches -----------------------------------------------------------------------------------------


def match_specs(
    ladders: list[list[Any]], bots: list[str], per_game: int, rng: random.Random
) -> list[dict[str, Any]]:
    """Duplicate sets, as the ladder schedules them (a seating drawn from the bots, one seed, one
    match per cyclic rotation), until each game has `per_game` matches; games interleaved."""
    by_game: dict[str, list[dict[str, Any]]] = {}
    for game, low, high in ladders:
        sizes = [size for size in range(low, high + 1) if size <= len(bots)]
        specs = by_game.setdefault(game, [])
        while sizes and len(specs) < per_game:
            table = rng.sample(bots, rng.choice(sizes))
            seed, name = rng.getrandbits(53), f"bench-{rng.getrandbits(64):016x}"
            specs += [
                {
                    "game": game,
                    "seed": seed,
                    "set": name,
                    "rotation": turn,
                    "seats": table[turn:] + table[:turn],
                }
                for turn in range(len(table))
            ]
    ordered: list[dict[str, Any]] = []
    while any(by_game.values()):
        for specs in by_game.values():
            ordered += specs[:4]
            del specs[:4]
    return ordered


# One phase: a worker plays a batch ---------------------------------------------------------------


@dataclass
class Phase:
    side: str
    matches: int
    seconds: float
    worker: float
    worker_main: float | None
    """Of `worker`: the main process (Celery's consumer: the broker, dispatching to the pool);
    None with the threads pool, where the consumer and the matches share one process."""
    bots: float | None
    bots_sampled: bool
    redis: float
    redis_commands: int
    postgres: float | None
    counters: dict[str, Any]
    threads: dict[str, float]
    """CPU of the pool processes' threads by name (those alive at the end)."""

    def per_match(self, seconds: float | None) -> float | None:
        return None if seconds is None else seconds * 1000 / self.matches


def worker_command(python: str, pool: str, concurrency: int, prefetch: int | None = None) -> list[str]:
    """The worker as deploy/ runs it; `--prefetch-multiplier` only when `prefetch` is given
    (otherwise each side's own setting)."""
    command = [
        python, "-m", "celery", "-A", WORKER_MODULE.stem, "worker", "-Q", QUEUES,
        "--pool", pool, "--concurrency", str(concurrency), "-n", "match-cost@%h",
        "--without-gossip", "--without-mingle", "-l", "info",
    ]  # fmt: skip
    return command if prefetch is None else [*command, "--prefetch-multiplier", str(prefetch)]


def play_phase(
    side: Side,
    number: int,
    specs: list[dict[str, Any]],
    warmup: list[dict[str, Any]],
    redis: RedisServer,
    postgres: PostgresSampler,
    args: argparse.Namespace,
) -> Phase:
    """Starts a worker of `side`, plays `warmup` then `specs` (measured), stops it."""
    import psycopg
    from celery import Celery

    out = side.folder / f"phase-{number}"
    out.mkdir()
    warm_ids = side.run("insert", json.dumps(_renamed(warmup, number))) if warmup else []
    ids = side.run("insert", json.dumps(_renamed(specs, number)))
    group = CpuGroup(f"match-cost-{os.getpid()}-{number}")
    command = worker_command(side.python, args.pool, args.concurrency, args.prefetch)
    if group.procs_file is not None:  # joins the group before it becomes the worker
        command = [
            "/bin/sh",
            "-c",
            'echo $$ > "$1" && shift && exec "$@"',
            "sh",
            str(group.procs_file),
            *command,
        ]
    env = side.env(
        MATCH_COST_OUT=str(out),
        MATCH_COST_PROFILE="1" if args.profile else "",
        MATCH_COST_WARMUP_IDS=",".join(map(str, warm_ids)),
    )
    log = (out / "worker.log").open("wb")
    worker = subprocess.Popen(
        command, env=env, cwd=side.tree, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    client = Celery(broker=side.redis_url)
    sampler: TreeSampler | None = None
    try:
        with psycopg.connect(side.database_url, autocommit=True) as poller:
            poll_pid = int(poller.execute("select pg_backend_pid()").fetchone()[0])  # type: ignore[index]
            postgres.watch(side.database, {poll_pid})
            _wait_ready(worker, out)
            pool = [pid for pid in descendants(worker.pid) if _is_worker_process(pid)]
            workers = [worker.pid, *pool]
            if group.path is None:
                sampler = TreeSampler(worker.pid, set(workers))
            if warm_ids:
                _queue(client, warm_ids)
                _wait_done(poller, warm_ids, worker, out, f"{side.name} warm-up")
            worker_before = sum(process_cpu(pid) or 0.0 for pid in workers)
            main_before = process_cpu(worker.pid) or 0.0
            threads_before = thread_cpu(pool or [worker.pid])
            group_before = group.usage()
            if sampler is not None:
                sampler.mark()
            redis_before, commands_before = redis.cpu(), redis.commands()
            postgres.mark()
            counters_before = _warmup_counters(out)
            started = time.monotonic()
            _queue(client, ids)
            _wait_done(poller, ids, worker, out, f"{side.name} measured")
            seconds = time.monotonic() - started
            worker_spent = sum(process_cpu(pid) or 0.0 for pid in workers) - worker_before
            main_spent = (process_cpu(worker.pid) or 0.0) - main_before if pool else None
            threads = {
                name: spent - threads_before.get(name, 0.0)
                for name, spent in thread_cpu(pool or [worker.pid]).items()
            }
            group_after = group.usage()
            bots = (
                sampler.spent()
                if sampler is not None
                else (group_after or 0.0) - (group_before or 0.0) - worker_spent
            )
            redis_spent, commands = redis.cpu() - redis_before, redis.commands() - commands_before - 1
            postgres_spent = postgres.spent()
            postgres.watch("", set())
    finally:
        _stop(worker)
        log.close()
        if sampler is not None:
            sampler.stop()
        group.remove()
        client.close()
    counters = _subtract(_read_counters(out), counters_before)
    return Phase(
        side.name, len(ids), seconds, worker_spent, main_spent, bots, sampler is not None,
        redis_spent, commands, postgres_spent, counters, threads,
    )  # fmt: skip


def _renamed(specs: list[dict[str, Any]], phase: int) -> list[dict[str, Any]]:
    """The same matches under duplicate set names of this phase's own: a set is rated once all
    of its rotations are played, so the rounds must not share sets."""
    return [{**spec, "set": f"{spec['set']}-{phase}"} for spec in specs]


def _is_worker_process(pid: int) -> bool:
    """A Celery pool process (forked from the worker, same command line), not a bot."""
    with contextlib.suppress(OSError):
        return b"celery" in Path(f"/proc/{pid}/cmdline").read_bytes()
    return False


def _wait_ready(worker: subprocess.Popen[bytes], out: Path) -> None:
    deadline = time.monotonic() + 120
    while not (out / "ready").exists():
        if worker.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the worker did not start:\n{(out / 'worker.log').read_text()[-4000:]}")
        time.sleep(0.1)
    time.sleep(1.0)  # its pool processes finish their own start


def _queue(client: Any, ids: list[int]) -> None:
    """Sends each match's task as the scheduler does (the ladder's queue and priority)."""
    with client.connection_for_write() as connection:
        for match_id in ids:
            client.send_task(
                MATCH_TASK, args=(match_id,), queue="matches", priority=LADDER_PRIORITY, connection=connection
            )


DONE = (
    "select count(*) from matches_match where id = any(%s) and status in ('finished', 'aborted', "
    "'cancelled') and (ratings_applied or not rated or status <> 'finished')"
)


def _wait_done(poller: Any, ids: list[int], worker: subprocess.Popen[bytes], out: Path, label: str) -> None:
    """Until every match is recorded and rated."""
    started = time.monotonic()
    while True:
        done = int(poller.execute(DONE, (ids,)).fetchone()[0])
        elapsed = time.monotonic() - started
        if sys.stderr.isatty():
            print(
                f"\r  {label}: {done}/{len(ids)} matches, {elapsed:4.0f} s",
                end="",
                file=sys.stderr,
                flush=True,
            )
        if done == len(ids):
            print(f"\r  {label}: {done} matches in {elapsed:.0f} s", file=sys.stderr)
            return
        if worker.poll() is not None or elapsed > PHASE_LIMIT_SECONDS:
            raise SystemExit(
                f"\n{label}: stopped at {done}/{len(ids)}:\n{(out / 'worker.log').read_text()[-4000:]}"
            )
        time.sleep(0.2)


def _stop(worker: subprocess.Popen[bytes]) -> None:
    """A warm shutdown (its pool processes write their counters), killed after a minute."""
    if worker.poll() is None:
        worker.terminate()
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


def _warmup_counters(out: Path) -> dict[str, Any]:
    """The pool processes' counters at the end of the warm-up (each writes them after each of its
    warm-up matches), to be taken out of the measured window's."""
    return _read_counters(out, suffix="warmup")


def _read_counters(out: Path, suffix: str = "") -> dict[str, Any]:
    total: dict[str, Any] = {"statements": {}, "steps": {}, "tasks": {}, "bot_starts": 0}
    pattern = f"counters-*.{suffix}.json" if suffix else "counters-*[0-9].json"
    for path in out.glob(pattern):
        with contextlib.suppress(ValueError, OSError):
            _add(total, json.loads(path.read_text()))
    return total


def _add(total: dict[str, Any], part: dict[str, Any]) -> None:
    for key in ("statements", "steps"):
        for name, value in part.get(key, {}).items():
            total[key][name] = total[key].get(name, 0) + value
    for name, (count, spent) in part.get("tasks", {}).items():
        held = total["tasks"].setdefault(name, [0, 0.0])
        held[0] += count
        held[1] += spent
    total["bot_starts"] += part.get("bot_starts", 0)


def _subtract(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "statements": {
            name: value - before["statements"].get(name, 0) for name, value in after["statements"].items()
        },
        "steps": {name: value - before["steps"].get(name, 0.0) for name, value in after["steps"].items()},
        "tasks": {
            name: [
                count - before["tasks"].get(name, [0, 0.0])[0],
                spent - before["tasks"].get(name, [0, 0.0])[1],
            ]
            for name, (count, spent) in after["tasks"].items()
        },
        "bot_starts": after["bot_starts"] - before["bot_starts"],
    }
    return result


# Report ------------------------------------------------------------------------------------------


@dataclass
class Totals:
    """A side's phases added up."""

    phases: list[Phase]

    @property
    def matches(self) -> int:
        return sum(phase.matches for phase in self.phases)

    def per_match(self, values: list[float | None]) -> float | None:
        if any(value is None for value in values):
            return None
        return sum(value or 0.0 for value in values) * 1000 / self.matches

    def rows(self) -> dict[str, float | None]:
        """CPU milliseconds per match by component (and the total)."""
        steps: dict[str, float] = {}
        tasks: dict[str, list[float]] = {}
        for phase in self.phases:
            for name, value in phase.counters["steps"].items():
                steps[name] = steps.get(name, 0.0) + value
            for name, (count, spent) in phase.counters["tasks"].items():
                held = tasks.setdefault(name, [0, 0.0])
                held[0] += count
                held[1] += spent
        worker = sum(phase.worker for phase in self.phases)
        rows: dict[str, float | None] = {}
        for step in STEP_ORDER:
            rows[f"worker: {step}"] = steps.get(step, 0.0) * 1000 / self.matches
        in_steps = sum(steps.values())
        match_task = tasks.get(MATCH_TASK, [0, 0.0])[1]
        rows["worker: rest of the match task"] = max(match_task - in_steps, 0.0) * 1000 / self.matches
        for name, (_, spent) in sorted(tasks.items()):
            if name != MATCH_TASK:
                rows[f"worker: task {name}"] = spent * 1000 / self.matches
        in_tasks = sum(spent for _, spent in tasks.values())
        outside = worker - max(in_tasks, in_steps)
        if all(phase.worker_main is not None for phase in self.phases):
            main = sum(phase.worker_main or 0.0 for phase in self.phases)
            rows["worker: main process (Celery consumer)"] = main * 1000 / self.matches
            rows["worker: pool, outside tasks (gRPC threads)"] = (outside - main) * 1000 / self.matches
        else:
            rows["worker: outside tasks (Celery, gRPC threads)"] = outside * 1000 / self.matches
        rows["worker (all)"] = worker * 1000 / self.matches
        rows["bot processes"] = self.per_match([phase.bots for phase in self.phases])
        rows["Redis"] = self.per_match([phase.redis for phase in self.phases])
        rows["PostgreSQL"] = self.per_match([phase.postgres for phase in self.phases])
        parts = [rows["worker (all)"], rows["bot processes"], rows["Redis"], rows["PostgreSQL"]]
        rows["total"] = sum(part or 0.0 for part in parts)
        return rows

    def statements(self) -> dict[str, int]:
        """Statements run by the worker, by their first word."""
        found: dict[str, int] = {}
        for phase in self.phases:
            for verb, count in phase.counters["statements"].items():
                found[verb] = found.get(verb, 0) + count
        return found

    def counts(self, verbs: list[str]) -> dict[str, float]:
        """Per match: statements (in all, then of each of `verbs`), Redis commands, bot starts;
        and matches per minute."""
        statements = self.statements()
        result = {"database statements": sum(statements.values()) / self.matches}
        for verb in verbs:
            result[f"  {verb}"] = statements.get(verb, 0) / self.matches
        result["Redis commands"] = sum(phase.redis_commands for phase in self.phases) / self.matches
        result["bot starts"] = sum(phase.counters["bot_starts"] for phase in self.phases) / self.matches
        seconds = sum(phase.seconds for phase in self.phases)
        result["matches/min (one worker)"] = self.matches * 60 / seconds
        return result


def _cell(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def report(results: dict[str, Totals]) -> None:
    names = list(results)
    tables = {name: totals.rows() for name, totals in results.items()}
    issued: dict[str, int] = {}
    for totals in results.values():
        for verb, count in totals.statements().items():
            issued[verb] = max(issued.get(verb, 0), count)
    verbs = sorted(issued, key=lambda verb: -issued[verb])
    counts = {name: totals.counts(verbs) for name, totals in results.items()}
    header = f"{'CPU ms per rated match':<46}" + "".join(f"{name:>10}" for name in names)
    if len(names) == 2:
        header += f"{'ratio':>8}"
    print(header)
    keys = list(dict.fromkeys(key for table in tables.values() for key in table))
    for key in keys:
        values = [tables[name].get(key) for name in names]
        line = f"{key:<46}" + "".join(f"{_cell(value):>10}" for value in values)
        if len(names) == 2 and values[0] and values[1] is not None:
            line += f"{values[1] / values[0]:>8.2f}"
        print(line)
    print(f"{'per rated match':<46}" + "".join(f"{name:>10}" for name in names))
    for key in dict.fromkeys(key for table in counts.values() for key in table):
        values = [counts[name].get(key) for name in names]
        line = f"{key:<46}" + "".join(f"{_cell(value, 2):>10}" for value in values)
        if len(names) == 2 and values[0] and values[1] is not None:
            line += f"{values[1] / values[0]:>8.2f}"
        print(line)
    sampled = any(phase.bots_sampled for totals in results.values() for phase in totals.phases)
    if sampled:
        print(
            "bot processes: sampled from /proc (no cpuacct group could be made): "
            "short-lived ones partly missed"
        )
    if len(names) == 2:
        before, after = (tables[name]["total"] or 0.0 for name in names)
        cut = 1 - after / before if before else 0.0
        verdict = "meets" if cut >= TARGET_CUT else "MISSES"
        print(f"CPU per rated match: {before:.1f} -> {after:.1f} ms, {cut:.0%} less ({verdict} the goal of "
              f"{TARGET_CUT:.0%} less)")  # fmt: skip


def print_threads(phases: dict[str, list[Phase]]) -> None:
    """The pool processes' CPU per match: main threads, other threads (ended ones not shown)."""
    for side, held in phases.items():
        matches = sum(phase.matches for phase in held)
        threads: dict[str, float] = {}
        for phase in held:
            for name, spent in phase.threads.items():
                threads[name] = threads.get(name, 0.0) + spent
        print(f"\n== {side}: pool processes' threads, CPU ms per match ==")
        for name, spent in sorted(threads.items(), key=lambda item: -item[1]):
            print(f"{name:<24}{spent * 1000 / matches:>8.1f}")


def print_profiles(folder: Path, limit: int = 30) -> None:
    import pstats

    for side in sorted({path.parent.parent.name for path in folder.glob("*/phase-*/profile-*.pstats")}):
        files = [str(path) for path in folder.glob(f"{side}/phase-*/profile-*.pstats")]
        print(f"\n== profile of the {side} side's pool processes (by own time) ==")
        pstats.Stats(*files).sort_stats("tottime").print_stats(limit)


# Main --------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--matches", type=int, default=40, help="measured matches per game id and round (default: 40)"
    )
    parser.add_argument(
        "--warmup", type=int, default=8, help="matches per game id played first, unmeasured (default: 8)"
    )
    parser.add_argument(
        "--rounds", type=int, default=2, help="rounds, each side once a round, alternating (default: 2)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=2, help="matches a worker plays at once (default: 2, as deploy/)"
    )
    parser.add_argument(
        "--pool",
        choices=("prefork", "threads"),
        default="prefork",
        help="the worker's pool: prefork as deploy/ runs it, threads as septet up (default: prefork)",
    )
    parser.add_argument(
        "--before",
        default=BEFORE_COMMIT,
        metavar="REF",
        help=f"commit of the 'before' side, or 'none' to measure the working tree alone "
        f"(default: {BEFORE_COMMIT})",
    )
    parser.add_argument(
        "--game",
        action="append",
        metavar="GAME",
        help="only this game id's matches (repeatable; default: every game id): the per-game-id "
        "figures of deploy/README's capacity table",
    )
    parser.add_argument(
        "--postgres",
        default="postgresql://postgres@127.0.0.1:5432/postgres",
        metavar="URL",
        help="maintenance database URL of the server to make the databases on",
    )
    parser.add_argument(
        "--seed", type=int, default=20, help="seeds and seatings of the matches (default: 20)"
    )
    parser.add_argument(
        "--prefetch",
        type=int,
        metavar="N",
        help="the workers' prefetch multiplier on both sides (default: each side's own setting)",
    )
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the pool processes; print the top functions"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the temporary folder (worker logs, profiles)"
    )
    args = parser.parse_args()
    if args.matches < 1 or args.rounds < 1 or args.warmup < 0 or args.concurrency < 1:
        parser.error("--matches, --rounds and --concurrency must be at least 1, --warmup at least 0")
    if shutil.which("redis-server") is None:
        parser.error("needs redis-server on PATH")

    def interrupted(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    folder = Path(tempfile.mkdtemp(prefix="septet-match-cost-"))
    try:
        return run(args, folder)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    finally:
        if args.keep:
            print(f"kept {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)


def run(args: argparse.Namespace, folder: Path) -> int:
    import psycopg

    with contextlib.ExitStack() as stack:
        redis = RedisServer(folder / "redis")
        stack.callback(redis.stop)
        admin = psycopg.connect(args.postgres, autocommit=True)
        stack.callback(admin.close)
        probe = folder / "probe"
        probe.mkdir()
        shutil.copy2(WORKER_MODULE, probe / WORKER_MODULE.name)
        trees = {"after": ROOT}
        if args.before != "none":
            trees = {"before": unpack_commit(args.before, folder / "before-tree"), **trees}
        sides: list[Side] = []
        pythons = {name: sys.executable for name in trees}
        if "before" in trees:
            pythons["before"] = environment_for(trees["before"], folder / "before-venv")
        for index, (name, tree) in enumerate(trees.items()):
            database = f"match_cost_{os.getpid()}_{name}"
            admin.execute(f'CREATE DATABASE "{database}"')
            stack.callback(admin.execute, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            (folder / name).mkdir()
            sides.append(
                Side(name, tree, database, database_url(args.postgres, database), redis.url(index),
                     folder / name, probe, pythons[name])
            )  # fmt: skip
        postgres = PostgresSampler(args.postgres)
        stack.callback(postgres.close)
        node_modules: dict[str, Path] = {}
        prepared: dict[str, Any] = {}
        for side in sides:
            print(f"preparing the {side.name} side (migrations, example bots qualified) ...", file=sys.stderr)
            examples = examples_copy(side, node_modules)
            prepared[side.name] = side.run("prepare", MATCH_COST_EXAMPLES=str(examples))
            if prepared[side.name]["failed"]:
                reasons = "\n".join(f"{bot}: {why}" for bot, why in prepared[side.name]["failed"].items())
                raise SystemExit(f"{side.name}: example bots did not qualify:\n{reasons}")
        first = prepared[sides[0].name]
        if args.game:
            unknown = sorted(set(args.game) - {game for game, _, _ in first["ladders"]})
            if unknown:
                raise SystemExit(f"no ladder plays {', '.join(unknown)}: see 'septet rules' for game ids")
            first["ladders"] = [ladder for ladder in first["ladders"] if ladder[0] in args.game]
        bots = sorted(set.intersection(*(set(found["bots"]) for found in prepared.values())))
        rng = random.Random(args.seed)
        warmup = match_specs(first["ladders"], bots, args.warmup, rng) if args.warmup else []
        specs = match_specs(first["ladders"], bots, args.matches, rng)
        print(f"{len(specs)} rated matches per round and side ({args.matches} per game id, "
              f"{len(first['ladders'])} games, bots: {', '.join(bots)}), {len(warmup)} to warm up; "
              f"worker: {args.pool}, concurrency {args.concurrency}", file=sys.stderr)  # fmt: skip
        phases: dict[str, list[Phase]] = {side.name: [] for side in sides}
        number = 0
        for round_number in range(args.rounds):
            for side in sides if round_number % 2 == 0 else list(reversed(sides)):
                number += 1
                phase = play_phase(side, number, specs, warmup, redis, postgres, args)
                phases[side.name].append(phase)
                total = sum(value or 0.0 for value in (phase.worker, phase.bots, phase.redis, phase.postgres))
                print(
                    f"round {round_number + 1} {side.name:>6}: {phase.matches} matches in "
                    f"{phase.seconds:.1f} s ({phase.matches * 60 / phase.seconds:.0f}/min), "
                    f"{total * 1000 / phase.matches:.1f} CPU-ms per match (worker "
                    f"{phase.worker * 1000 / phase.matches:.1f}, bots {_cell(phase.per_match(phase.bots))}, "
                    f"PostgreSQL {_cell(phase.per_match(phase.postgres))}, "
                    f"Redis {_cell(phase.per_match(phase.redis))})",
                    flush=True,
                )
        print()
        report({name: Totals(held) for name, held in phases.items()})
        if args.profile:
            print_threads(phases)
            print_profiles(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
