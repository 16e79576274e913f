"""Chaos benchmark: a whole platform of its own, faults while matches flow, and checks that can fail.

It starts `septet up` (embedded Redis, two Celery workers, beat, web site, Arena) on free ports of
127.0.0.1, with a data folder and a PostgreSQL database of its own, its replay folder on a small
tmpfs it mounts (root is needed for the storage faults; without it they are skipped). While the
example bots play rated matches it injects, each ROUNDS times:

- worker:     kill -9 of a Celery worker while it plays a match (the launcher restarts it; the
              match's lease runs out and it is played again);
- redis:      kill -9 of the embedded Redis (restarted from its append-only file; lost tasks are
              found by the beat's sweep);
- arena, web: kill -9 of the Arena and of the web server;
- bot:        kill -9 of a bot process of one of its own matches (that bot forfeits that game);
- disk-full:  the replay tmpfs filled up, then freed;
- read-only:  the replay tmpfs remounted read-only, then read-write.

It touches only processes it started: the launcher and its descendants, found from /proc by
parent pid, never by name, uid or pattern. A fault's recovery time runs from the end of the fault
(the kill; the freeing or remounting of the folder) until /healthz answers 200 again, the Arena
answers its health check, a match has finished since, and (worker) every match the dead worker
held is back in the queue (its lease ran out and the reaper put it back; when it was played again,
behind the matches already queued, is shown in the notes). Then the ladders are stopped, the
matches in flight drain, the platform is stopped, and the database and files are checked with our
own SQL and file reads (not the platform's selectors): `check` below. It prints a table

    fault, times injected, recovery max (s), lost, doubled

(lost and doubled among the matches in flight at each injection; a last line over all matches)
and exits 1 when any match was lost or doubled, a rating does not recompute, a recovery took
longer than 60 s, or a process it started was left behind.

    python benchmarks/reliability.py [--rounds 3] [--hold 12] [--workers 2] [--keep]

Default run: about 8-10 minutes on two cores.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# benchmarks/referee.py shares its name with the package used here: keep this folder off the path.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

ROOT = Path(__file__).resolve().parents[1]
SEPTET = str(Path(sys.executable).with_name("septet"))
POSTGRES_ADMIN = os.environ.get("SEPTET_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
RECOVERY_LIMIT_SECONDS = 60.0
RECOVERY_TIMEOUT_SECONDS = 150.0
TOLERANCE = 1e-9
REPLAY_NAME = re.compile(r"^(\d+)-a(\d+)\.json\.gz$")
PROBE_NAME = ".septet-write-probe"


# The checker: from the database and the files only ---------------------------------------------


@dataclass
class Findings:
    """What the checker found: per match id, why it counts as lost or doubled; rating problems."""

    lost: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    doubled: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    ratings: list[str] = field(default_factory=list)
    matches: int = 0
    rated: int = 0
    replays_verified: int = 0

    @property
    def clean(self) -> bool:
        return not self.lost and not self.doubled and not self.ratings


class FolderReplays:
    """The replays of the local storage: the files of the replay folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def names(self) -> list[str]:
        return [path.name for path in self.folder.iterdir()] if self.folder.is_dir() else []

    def read(self, name: str) -> bytes | None:
        path = self.folder / name
        return path.read_bytes() if path.is_file() else None


class DatabaseReplays:
    """The replays of the database storage (SEPTET_STORAGE=database), read with our own SQL from
    its tables: the blobs of the "replays" area, each the concatenation of its chunks in order."""

    def __init__(self, cursor: Any) -> None:
        self.cursor = cursor

    def names(self) -> list[str]:
        self.cursor.execute("select name from blobs_blob where area = 'replays'")
        return [row[0] for row in self.cursor.fetchall()]

    def read(self, name: str) -> bytes | None:
        self.cursor.execute("select id from blobs_blob where area = 'replays' and name = %s", (name,))
        found = self.cursor.fetchone()
        if found is None:
            return None
        self.cursor.execute(
            'select data from blobs_blobchunk where blob_id = %s order by "index"', (found[0],)
        )
        return b"".join(bytes(row[0]) for row in self.cursor.fetchall())


def check(cursor: Any, replays: Path | FolderReplays | DatabaseReplays) -> Findings:
    """Checks every match of the database `cursor` reads (a DB-API cursor, %s parameters) against
    the replay files in `replays`: every match ended exactly once (finished and rated, aborted or
    cancelled; none left scheduled or running), each rated match has exactly one rating change
    per seat, every replay is present, matches its stored size and SHA-256, names its match and
    verifies through the engine with the recorded scores, no match has a second replay file or a
    partial one, and every rating change recomputes from its results (openskill's Plackett-Luce,
    from the ratings before it) and chains into the next and into the stored rating."""
    findings = Findings()
    cursor.execute(
        "select id, status, rated, ratings_applied, replay, replay_size, replay_sha256, replay_match_id,"
        " duplicate_set from matches_match order by id"
    )
    matches = {row[0]: row for row in cursor.fetchall()}
    findings.matches = len(matches)
    cursor.execute("select match_id, seat, rank, score from matches_seat order by match_id, seat")
    seats: dict[int, list[tuple[int, int | None, int | None]]] = defaultdict(list)
    for match_id, seat, rank, score in cursor.fetchall():
        seats[match_id].append((seat, rank, score))
    cursor.execute(
        "select c.id, c.match_id, c.rating_id, c.rank, c.mu_before, c.sigma_before, c.mu_after, c.sigma_after"
        " from ladders_ratingchange c order by c.id"
    )
    changes = cursor.fetchall()
    cursor.execute("select id, mu, sigma from ladders_rating")
    stored_ratings = {row[0]: (row[1], row[2]) for row in cursor.fetchall()}

    _check_ends(findings, matches)
    _check_replays(findings, matches, seats, replays)
    _check_rating_changes(findings, matches, seats, changes)
    _check_recomputed(findings, changes, stored_ratings)
    return findings


def _check_ends(findings: Findings, matches: dict[int, tuple[Any, ...]]) -> None:
    for match_id, (_, status, rated, applied, *_rest) in matches.items():
        if status in ("scheduled", "running"):
            findings.lost[match_id].append(f"never ended ({status})")
        elif status == "finished" and rated and not applied:
            findings.lost[match_id].append("finished but never rated")


def _check_replays(
    findings: Findings,
    matches: dict[int, tuple[Any, ...]],
    seats: dict[int, list[Any]],
    replays: Path | FolderReplays | DatabaseReplays,
) -> None:
    from referee.engine import replay as engine

    source = FolderReplays(replays) if isinstance(replays, Path) else replays
    files: dict[int, list[str]] = defaultdict(list)
    for stored in source.names():
        found = REPLAY_NAME.match(stored)
        if found:
            files[int(found.group(1))].append(stored)
        elif not stored.startswith(PROBE_NAME):
            findings.doubled[-1].append(f"a file that is no replay: {stored} (partial write?)")
    for match_id, names in files.items():
        row = matches.get(match_id)
        recorded = row[4] if row else ""
        for name in names:
            if name != recorded:
                why = f"a second replay file {name} (recorded: {recorded or 'none'})"
                findings.doubled[match_id].append(why)
    for match_id, (_, status, _, _, name, size, sha256, named, _) in matches.items():
        if status != "finished" and status != "aborted":
            continue
        data = source.read(name) if name else None
        if data is None:
            findings.lost[match_id].append(f"its replay {name or '(none)'} is missing")
            continue
        if len(data) != size or hashlib.sha256(data).hexdigest() != sha256:
            findings.lost[match_id].append("its replay does not match the stored size and SHA-256")
            continue
        try:
            document = json.loads(gzip.decompress(data))
            verified = engine.verify(document)
        except (OSError, ValueError) as error:
            findings.lost[match_id].append(f"its replay does not verify: {error}")
            continue
        if document.get("match_id") != named:
            findings.lost[match_id].append("its replay names another match")
        if [score for _, _, score in seats[match_id]] != list(verified.result.scores):
            findings.lost[match_id].append("the stored scores differ from its replay's")
        findings.replays_verified += 1


def _check_rating_changes(
    findings: Findings, matches: dict[int, tuple[Any, ...]], seats: dict[int, list[Any]], changes: list[Any]
) -> None:
    per_match: dict[int, list[Any]] = defaultdict(list)
    for change in changes:
        per_match[change[1]].append(change)
    for match_id, (_, status, rated, applied, *_rest) in matches.items():
        made = per_match.get(match_id, [])
        table = len(seats[match_id])
        if len(made) > table or len({change[2] for change in made}) != len(made):
            findings.doubled[match_id].append(f"{len(made)} rating changes for {table} seats")
        two_seat_set = table == 2 and matches[match_id][8]  # rated once per duplicate set, on one match
        if status == "finished" and rated and applied and not two_seat_set and len(made) < table:
            findings.lost[match_id].append(f"{len(made)} rating changes for {table} seats")
        if made and not two_seat_set:
            ranks = [rank for _, rank, _ in seats[match_id]]
            if None in ranks or sorted(change[3] for change in made) != sorted(ranks):
                findings.ratings.append(f"match {match_id}: its rating changes' ranks are not its seats'")
        if made:
            findings.rated += 1


def _check_recomputed(findings: Findings, changes: list[Any], stored: dict[int, tuple[float, float]]) -> None:
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    per_match: dict[int, list[Any]] = defaultdict(list)
    for change in changes:
        per_match[change[1]].append(change)
    for match_id, made in per_match.items():
        teams = [[model.rating(mu=change[4], sigma=change[5])] for change in made]
        rated = model.rate(teams, ranks=[float(change[3]) for change in made])
        for change, [after] in zip(made, rated, strict=True):
            if abs(after.mu - change[6]) > TOLERANCE or abs(after.sigma - change[7]) > TOLERANCE:
                findings.ratings.append(f"match {match_id}: a rating change does not recompute")
    chains: dict[int, list[Any]] = defaultdict(list)
    for change in changes:
        chains[change[2]].append(change)
    for rating_id, chain in chains.items():
        for previous, following in itertools.pairwise(chain):
            if abs(previous[6] - following[4]) > TOLERANCE or abs(previous[7] - following[5]) > TOLERANCE:
                why = f"rating {rating_id}: change {following[0]} does not start where {previous[0]} ended"
                findings.ratings.append(why)
        mu, sigma = stored.get(rating_id, (float("nan"), float("nan")))
        if abs(chain[-1][6] - mu) > TOLERANCE or abs(chain[-1][7] - sigma) > TOLERANCE:
            findings.ratings.append(f"rating {rating_id}: stored value is not its last change's")


# Processes: only ours, from /proc ----------------------------------------------------------------


def _start_time(pid: int) -> int | None:
    """A process's start time (clock ticks since boot): with the pid, it names one process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[19])


def descendants(root: int) -> dict[int, int]:
    """pid -> start time of `root` and every process below it (from /proc's parent pids)."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(entry.path, "stat").read_text()
                children[int(stat[stat.rindex(")") + 2 :].split()[1])].append(int(entry.name))
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        started = _start_time(pid)
        if started is not None:
            found[pid] = started
            todo.extend(children.get(pid, []))
    return found


def _cmdline(pid: int) -> list[str]:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    return []


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# The platform under test ---------------------------------------------------------------------------


class Platform:
    """`septet up` of our own: its data folder, database, ports, and the replay tmpfs."""

    def __init__(self, workers: int) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="septet-chaos-"))
        self.data = self.folder / "data"
        self.replays = self.data / "replays"
        self.web_port, self.arena_port = _free_port(), _free_port()
        self.database = f"septet_chaos_{uuid.uuid4().hex[:8]}"
        self.database_url = POSTGRES_ADMIN.rsplit("/", 1)[0] + "/" + self.database
        self.workers = workers
        self.mounted = False
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import psycopg

        with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
            admin.execute(f'create database "{self.database}"')
        self.replays.mkdir(parents=True)
        if os.geteuid() == 0:
            mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(self.replays)])
            self.mounted = mounted.returncode == 0
        env = {**os.environ, "DATABASE_URL": self.database_url}
        env.pop("REDIS_URL", None)
        self.log = (self.folder / "septet-up.log").open("ab")
        self.process = subprocess.Popen(
            [SEPTET, "up", "--data", str(self.data), "--web", f"127.0.0.1:{self.web_port}",
             "--arena", f"127.0.0.1:{self.arena_port}", "--workers", str(self.workers)],
            env=env, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def healthz(self) -> tuple[int, dict[str, Any]]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/healthz", timeout=3) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            with contextlib.suppress(ValueError):
                return error.code, json.loads(error.read())
            return error.code, {}
        except (OSError, ValueError):
            return 0, {}

    def arena_serving(self) -> bool:
        import grpc
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        try:
            with grpc.insecure_channel(f"127.0.0.1:{self.arena_port}") as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                answer = stub.Check(health_pb2.HealthCheckRequest(), timeout=3)
                return bool(answer.status == health_pb2.HealthCheckResponse.SERVING)
        except grpc.RpcError:
            return False

    def child_pid(self, name: str) -> int | None:
        """The pid of the launcher's child `name`, from its state file, if it is one of ours."""
        try:
            state = json.loads((self.data / "supervision.json").read_text())
            pid = state["children"][name]["pid"]
        except (OSError, ValueError, KeyError):
            return None
        assert self.process is not None
        return pid if pid in descendants(self.process.pid) else None

    def bot_pids(self) -> list[int]:
        """Bot processes of our own matches: descendants of our workers serving a bot socket."""
        pids = []
        for number in range(1, self.workers + 1):
            worker = self.child_pid(f"worker{number}")
            if worker is None:
                continue
            for pid in descendants(worker):
                words = _cmdline(pid)
                if "--address" in words and words[0] not in ("/bin/sh", "/usr/bin/bwrap", "/usr/bin/setpriv"):
                    pids.append(pid)
        return pids

    def stop(self) -> list[str]:
        """Stops the launcher (SIGTERM, as a service manager does); the processes it started
        that are still alive 5 s after it exited (then killed by pid)."""
        if self.process is None:
            return []
        ours = descendants(self.process.pid)
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=90)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        time.sleep(5)
        left = [pid for pid, started in ours.items() if _start_time(pid) == started]
        described = [f"{pid} {' '.join(_cmdline(pid))[:80]}" for pid in left]
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return described

    def cleanup(self, keep: bool) -> None:
        import psycopg

        if self.mounted:
            subprocess.run(["umount", "-l", str(self.replays)], check=False)
        with contextlib.suppress(psycopg.Error), psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
            admin.execute(f'drop database if exists "{self.database}" with (force)')
        if not keep:
            shutil.rmtree(self.folder, ignore_errors=True)


# Faults ------------------------------------------------------------------------------------------


@dataclass
class Injection:
    fault: str
    in_flight: set[int]
    recovery: float
    detected: bool = True
    note: str = ""


class Chaos:
    def __init__(self, platform: Platform, hold: float) -> None:
        import psycopg

        self.platform = platform
        self.hold = hold
        self.db = psycopg.connect(platform.database_url, autocommit=True)

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        return list(self.db.execute(sql, params).fetchall())

    def in_flight(self) -> set[int]:
        rows = self.rows("select id from matches_match where status in ('scheduled', 'running')")
        return {row[0] for row in rows}

    def wait_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        import psycopg

        while time.monotonic() < deadline:
            with contextlib.suppress(psycopg.errors.UndefinedTable):  # not migrated yet
                if predicate():
                    return True
            time.sleep(0.5)
        return False

    def recovered_after(self, since: float, extra: Callable[[], bool] = lambda: True) -> float:
        """Seconds from `since` (time.time()) until the platform is whole again; inf if never."""
        moment = datetime.fromtimestamp(since, UTC)

        def whole() -> bool:
            finished = self.rows("select count(*) from matches_match where finished > %s", moment)[0][0]
            return bool(
                finished and self.platform.healthz()[0] == 200 and self.platform.arena_serving() and extra()
            )

        if not self.wait_until(whole, RECOVERY_TIMEOUT_SECONDS):
            return float("inf")
        return time.time() - since

    def kill_child(self, name: str) -> Injection:
        flight = self.in_flight()
        pid = self.platform.child_pid(name)
        if pid is None:
            return Injection(name, flight, float("inf"), detected=False)
        os.kill(pid, signal.SIGKILL)
        return Injection(name, flight, self.recovered_after(time.time()))

    def kill_worker_mid_match(self) -> Injection:
        holding = "select id, attempt from matches_match where status='running' and worker like 'worker1@%%'"
        self.wait_until(lambda: bool(self.rows(holding)), 60)
        held = self.rows(holding)
        flight = self.in_flight()
        pid = self.platform.child_pid("worker1")
        if pid is None:
            return Injection("worker", flight, float("inf"), detected=False)
        os.kill(pid, signal.SIGKILL)
        killed = time.time()

        def states() -> list[tuple[str, int, int]]:
            query = "select status, attempt from matches_match where id = %s"
            return [(*self.rows(query, match_id)[0], attempt) for match_id, attempt in held]

        def back_in_queue() -> bool:
            return all(status != "running" or now > then for status, now, then in states())

        recovery = self.recovered_after(killed, back_in_queue)
        self.wait_until(lambda: all(now > then for _, now, then in states()), RECOVERY_TIMEOUT_SECONDS)
        replayed = time.time() - killed
        return Injection("worker", flight, recovery, note=f"played again after {replayed:.0f} s")

    def kill_bot(self) -> Injection:
        self.wait_until(lambda: bool(self.platform.bot_pids()), 60)
        flight = self.in_flight()
        pids = self.platform.bot_pids()
        if not pids:
            return Injection("bot", flight, float("inf"), detected=False)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pids[0], signal.SIGKILL)
        return Injection("bot", flight, self.recovered_after(time.time()))

    def storage_fault(self, name: str, start: Callable[[], None], end: Callable[[], None]) -> Injection:
        flight = self.in_flight()
        start()
        detected = False
        deadline = time.monotonic() + self.hold
        while time.monotonic() < deadline:
            status, body = self.platform.healthz()
            storage = body.get("checks", {}).get("storage", "ok")
            detected = detected or (status == 503 and storage != "ok")
            time.sleep(0.5)
        end()
        return Injection(name, flight, self.recovered_after(time.time()), detected)

    def fill_disk(self) -> None:
        filler = self.platform.replays / "zz-filler"
        with contextlib.suppress(OSError), filler.open("wb") as out:
            while True:
                out.write(b"\0" * (1 << 20))
                out.flush()

    def free_disk(self) -> None:
        (self.platform.replays / "zz-filler").unlink(missing_ok=True)

    def remount(self, options: str) -> Callable[[], None]:
        command = ["mount", "-o", f"remount,{options}", str(self.platform.replays)]
        return lambda: subprocess.run(command, check=True)

    def drain(self, timeout: float) -> None:
        self.db.execute("update ladders_ladder set active = false")
        self.wait_until(lambda: not self.in_flight(), timeout)


def _faults(chaos: Chaos, storage: bool) -> list[tuple[str, Callable[[], Injection]]]:
    faults: list[tuple[str, Callable[[], Injection]]] = [
        ("worker", chaos.kill_worker_mid_match),
        ("redis", lambda: chaos.kill_child("redis")),
        ("arena", lambda: chaos.kill_child("arena")),
        ("web", lambda: chaos.kill_child("web")),
        ("bot", chaos.kill_bot),
    ]
    if storage:
        faults += [
            ("disk-full", lambda: chaos.storage_fault("disk-full", chaos.fill_disk, chaos.free_disk)),
            ("read-only", lambda: chaos.storage_fault("read-only", chaos.remount("ro"), chaos.remount("rw"))),
        ]
    return faults


def _seconds_in(note: str) -> float:
    found = re.search(r"(\d+) s", note)
    return float(found.group(1)) if found else 0.0


def _table(injections: list[Injection], findings: Findings, left: list[str]) -> bool:
    print(f"\n{'fault':<10} {'times':>5} {'recovery max (s)':>17} {'lost':>5} {'doubled':>8}  notes")
    ok = True
    by_fault: dict[str, list[Injection]] = defaultdict(list)
    for injection in injections:
        by_fault[injection.fault].append(injection)
    for fault, done in by_fault.items():
        worst = max(injection.recovery for injection in done)
        flight = set().union(*(injection.in_flight for injection in done))
        lost = len(flight & set(findings.lost))
        doubled = len(flight & set(findings.doubled))
        notes = "" if all(injection.detected for injection in done) else "not detected/injected every time"
        notes = notes or max((injection.note for injection in done), key=_seconds_in, default="")
        detected = all(injection.detected for injection in done)
        ok = ok and worst <= RECOVERY_LIMIT_SECONDS and not lost and not doubled and detected
        print(f"{fault:<10} {len(done):>5} {worst:>17.1f} {lost:>5} {doubled:>8}  {notes}")
    print(
        f"{'all':<10} {len(injections):>5} {'':>17} {len(findings.lost):>5} {len(findings.doubled):>8}  "
        f"{findings.matches} matches, {findings.rated} rated, {findings.replays_verified} replays verified, "
        f"{len(findings.ratings)} rating problems, {len(left)} processes left behind"
    )
    for match_id, why in list(findings.lost.items())[:10]:
        print(f"  lost {match_id}: {'; '.join(why)}")
    for match_id, why in list(findings.doubled.items())[:10]:
        print(f"  doubled {match_id}: {'; '.join(why)}")
    for problem in findings.ratings[:10]:
        print(f"  rating: {problem}")
    for process in left:
        print(f"  left behind: {process}")
    return ok and findings.clean and not left


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3, help="times each fault is injected (default 3)")
    parser.add_argument("--hold", type=float, default=12.0, help="seconds a storage fault lasts (default 12)")
    parser.add_argument("--workers", type=int, default=2, help="Celery workers (default 2)")
    parser.add_argument("--keep", action="store_true", help="keep the data folder (its logs) afterwards")
    args = parser.parse_args()

    platform = Platform(args.workers)
    try:
        return _run(platform, args)
    finally:
        platform.cleanup(args.keep)


def _run(platform: Platform, args: argparse.Namespace) -> int:
    import psycopg

    injections: list[Injection] = []
    try:
        platform.start()
        print(f"septet up on web :{platform.web_port}, Arena :{platform.arena_port}, data {platform.data}")
        chaos = Chaos(platform, args.hold)
        started = time.monotonic()
        finished = "select 1 from matches_match where status = 'finished'"
        if not chaos.wait_until(lambda: bool(chaos.rows(finished)), 600):
            print("no match finished within 10 minutes of starting: see septet-up.log", file=sys.stderr)
            return 1
        print(f"matches flowing {time.monotonic() - started:.0f} s after start", flush=True)
        if not platform.mounted:
            print("not root or no tmpfs: the disk-full and read-only faults are skipped")
        for round_number in range(1, args.rounds + 1):
            for name, inject in _faults(chaos, platform.mounted):
                injection = inject()
                injections.append(injection)
                print(f"round {round_number}: {name:<10} recovered in {injection.recovery:5.1f} s")
                sys.stdout.flush()
        chaos.drain(timeout=180)
        chaos.db.close()
    finally:
        left = platform.stop()
    with psycopg.connect(platform.database_url) as connection, connection.cursor() as cursor:
        findings = check(cursor, platform.replays)
    return 0 if _table(injections, findings, left) else 1


if __name__ == "__main__":
    sys.exit(main())
