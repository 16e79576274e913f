"""Web latency under load: the home, ladder, bot and match pages and the replay document.

1. A throwaway database (a fresh PostgreSQL database when one answers on 127.0.0.1:5432, else a
   temporary SQLite file; `--sqlite` forces SQLite) is migrated and filled with bulk_create:
   1,000 bots (one ACTIVE version each, rated on the oh-hell ladder), 100,000 finished 4-seat
   matches in duplicate sets as the ladder plays them (4 rotations of one seating and seed, rated
   once with the last), with their seats and rating changes, each match pointing at one of a few
   real replays.
2. The site is served (DEBUG off) in a subprocess by gunicorn with threaded workers, as in
   production, or by `manage.py runserver` (`--server runserver`), or exactly as `septet up` serves
   it (`--server up`: its own gunicorn command line, ASGI under uvicorn with pages on
   SEPTET_WEB_THREADS threads per process, and its settings, settings.local, with whitenoise, the
   data folder's secret key and its embedded Redis, where the site keeps its anonymous pages; use
   it with `--sqlite` for the embedded defaults), or as `septet up` served it before the live
   streams (`--server gthread`: gunicorn's threaded WSGI workers, 2 x 4 threads, with the same
   settings and Redis as `up`), the comparison for the ASGI site.
3. A second process sends requests from several threads at once and reports, per page kind,
   p50/p95/max latency; the target is p95 < 100 ms for each (`--target-ms`).

    python benchmarks/web_load.py [--bots 1000] [--matches 100000] [--requests 300] [--concurrency 4]
                                  [--server gunicorn|runserver|up|gthread] [--sqlite]
                                  [--target-ms 100] [--workers N] [--threads N]
                                  [--keep FOLDER] [--cpu N]

`--keep FOLDER` keeps the SQLite database, its replays and the plan in FOLDER and reuses them on the
next run with the same sizes (generating takes minutes). `--cpu N` measures instead of the load
what each page kind costs to make: CPU milliseconds of N pages of each kind made in the benchmark's
own process through Django's test client (the site's settings and middleware, the shared page
cache emptied before each), the figure to compare between versions of the site.

`septet up`'s case, 50 clients at once against a p95 of 250 ms (the clients run on the same
cores as the site: a busy machine shows in every figure, so note its load):

    python benchmarks/web_load.py --server up --sqlite --concurrency 50 --target-ms 250

and the WSGI site it replaced, on the same database (`--keep` it, and alternate the two):

    python benchmarks/web_load.py --server gthread --sqlite --concurrency 50 --target-ms 250
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import http.client
import json
import os
import random
import resource
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# benchmarks/referee.py would shadow the referee package: this folder goes last on the path (for
# process_table, a sibling module).
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]
sys.path.append(str(Path(__file__).resolve().parent))

from process_table import tree_cpu_seconds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TARGET_P95_MS = 100.0
PLAYERS = 4
REPLAYS = 24
BATCH = 5000
KINDS = ("home", "ladder", "bot", "match", "replay")
PR_SET_PDEATHSIG = 1
GTHREAD_WORKERS = 2
GTHREAD_THREADS = 4
"""`septet up`'s site before it was ASGI (commit 9f47f20's parent): 2 gunicorn gthread workers x 4."""
UP_LIKE = ("up", "gthread")
"""The servers run with `septet up`'s settings, secret key and embedded Redis."""


# The database ---------------------------------------------------------------------------------


def _postgres_reachable() -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", 5432)) == 0


@contextlib.contextmanager
def throwaway_database(force_sqlite: bool, scratch: Path) -> Iterator[tuple[str, str]]:
    """(DATABASE_URL, a description) of a new, empty database, dropped afterwards."""
    if force_sqlite or not _postgres_reachable():
        yield f"sqlite:///{scratch / 'bench.sqlite3'}", "SQLite (a temporary file, WAL)"
        return
    import psycopg

    name = f"septet_web_bench_{secrets.token_hex(4)}"
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgres://postgres@127.0.0.1:5432/{name}", f"PostgreSQL (a fresh database {name})"
    finally:
        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def generate(bots: int, matches: int) -> dict[str, Any]:
    """Fills the (migrated) database; returns the ids and names the load needs."""
    from django.contrib.auth.models import User
    from django.db.models import Count
    from django.utils import timezone

    from septet_platform.bots.models import Bot, BotVersion
    from septet_platform.ladders.models import Ladder, Rating, RatingChange
    from septet_platform.matches.models import Match, Seat

    rng = random.Random(1)
    replays = _replays()
    owners = User.objects.bulk_create(User(username=f"owner-{i:03d}") for i in range(max(bots // 10, 1)))
    created = Bot.objects.bulk_create(
        Bot(owner=owners[i % len(owners)], name=f"bot-{i:04d}") for i in range(bots)
    )
    versions = BotVersion.objects.bulk_create(
        BotVersion(
            bot=bot,
            number=1,
            archive=f"{bot.name}/v1.tar.gz",
            archive_sha256="0" * 64,
            manifest={"name": bot.name, "games": ["oh-hell"]},
            status=BotVersion.Status.ACTIVE,
        )
        for bot in created
    )
    ladder = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    ratings = Rating.objects.bulk_create(
        Rating(ladder=ladder, bot_version=v, mu=rng.gauss(25, 4), sigma=rng.uniform(1, 8), games=0)
        for v in versions
    )
    rating_of = {rating.bot_version_id: rating for rating in ratings}
    start = timezone.now() - timezone.timedelta(days=30)
    done = 0
    while done < matches:
        size = min(BATCH, matches - done)
        # As the ladder plays them: duplicate sets of PLAYERS rotations of one seating and one seed.
        batch = Match.objects.bulk_create(
            Match(
                ladder=ladder,
                seed=(done + i) // PLAYERS + 1,
                duplicate_set=f"bench-set-{(done + i) // PLAYERS}",
                rotation=(done + i) % PLAYERS,
                status=Match.Status.FINISHED,
                attempt=1,
                started=start + timezone.timedelta(seconds=10 * (done + i)),
                finished=start + timezone.timedelta(seconds=10 * (done + i) + 5),
                result={"scores": [0] * PLAYERS, "ranks": list(range(1, PLAYERS + 1))},
                replay=replays[(done + i) % len(replays)],
                ratings_applied=True,
            )
            for i in range(size)
        )
        seats, changes = [], []
        seating: list[BotVersion] = []
        for match in batch:
            if match.rotation == 0:
                seating = rng.sample(versions, PLAYERS)
            ranks = rng.sample(range(1, PLAYERS + 1), PLAYERS)
            for seat in range(PLAYERS):
                version = seating[(seat + match.rotation) % PLAYERS]
                rank = ranks[seat]
                seats.append(Seat(match=match, seat=seat, bot_version=version, score=10 - rank, rank=rank))
                if match.rotation != PLAYERS - 1:
                    continue  # a set is rated once, with its last rotation
                rating = rating_of[version.pk]
                mu = rating.mu + rng.gauss(0, 0.3)
                changes.append(
                    RatingChange(
                        rating=rating,
                        match=match,
                        mu_before=mu,
                        sigma_before=rating.sigma,
                        mu_after=mu + rng.gauss(0, 0.3),
                        sigma_after=rating.sigma,
                    )
                )
        Seat.objects.bulk_create(seats, batch_size=BATCH)
        RatingChange.objects.bulk_create(changes, batch_size=BATCH)
        done += size
        print(f"  {done:>7} matches", end="\r", flush=True)
    print()
    games = dict(
        Seat.objects.values("bot_version_id").annotate(n=Count("id")).values_list("bot_version_id", "n")
    )
    for rating in ratings:
        rating.games = games.get(rating.bot_version_id, 0)
    Rating.objects.bulk_update(ratings, ["games"], batch_size=BATCH)
    first, last = (
        Match.objects.order_by("id").values_list("id", flat=True)[0],
        Match.objects.order_by("-id")[0].pk,
    )
    return {"bots": [bot.name for bot in created], "match_ids": [first, last], "ladder_pages": -(-bots // 50)}


def _replays() -> list[str]:
    """A few real oh-hell replays in the replay folder; matches share them."""
    from django.conf import settings

    from referee.engine import replay
    from referee.engine.match import play_match
    from referee.engine.players import RandomPlayer

    folder = Path(settings.SEPTET_REPLAYS_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for seed in range(REPLAYS):
        players = [
            RandomPlayer(random.Random(f"{seed}/{seat}"), name=f"bot-{seat}") for seat in range(PLAYERS)
        ]
        outcome = play_match("oh-hell", players, seed=seed + 1)
        names.append(replay.save(outcome.replay, folder / f"bench-{seed}.json.gz").name)
    return names


# The server -----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve(
    env: dict[str, str], server_kind: str, workers: int | None, threads: int | None
) -> tuple[subprocess.Popen[bytes], str]:
    """The site in a subprocess: gunicorn (as in production: threaded workers, persistent database
    connections) or Django's runserver (a new thread, and so a new database connection, per request)."""
    port = _free_port()
    if server_kind == "up":
        command = _up_web_command(f"127.0.0.1:{port}", workers)
        env = {**env, "SEPTET_WEB_THREADS": str(_up_threads(threads))}
    elif server_kind == "gthread":
        command = _gthread_web_command(f"127.0.0.1:{port}", workers, threads)
    elif server_kind == "gunicorn":
        command = [
            sys.executable,
            "-m",
            "gunicorn",
            "septet_platform.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers or 2),
            "--threads",
            str(threads or 4),
            "--worker-class",
            "gthread",
        ]
    else:
        command = [sys.executable, str(ROOT / "manage.py"), "runserver", "--noreload", f"127.0.0.1:{port}"]
    server = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_die_with_us,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return server, f"127.0.0.1:{port}"
        time.sleep(0.2)
    server.kill()
    raise SystemExit("the site did not start within 30 s")


def _die_with_us() -> None:
    """In a child before it runs: SIGTERM when this benchmark dies, however (SIGKILL included)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _stop_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # runs every cleanup on the way out (server, Redis, database)


def _up_web_command(address: str, workers: int | None = None) -> list[str]:
    """The web child's command line of `septet up` (not --dev), bound to `address`; with another
    number of worker processes when given. Its page threads are not on the command line: the
    site reads them from SEPTET_WEB_THREADS (`_up_threads`)."""
    from septet_platform.launcher import _web_command

    command = _web_command(argparse.Namespace(dev=False, web=address))
    if workers is not None:
        command[command.index("--workers") + 1] = str(workers)
    return command


def _up_threads(threads: int | None = None) -> int:
    """Page threads per site process as `septet up` gives them (SEPTET_WEB_THREADS: the caller's,
    else the launcher's default), or `threads` when given."""
    from septet_platform.launcher import WEB_THREADS

    return threads or int(os.environ.get("SEPTET_WEB_THREADS") or WEB_THREADS)


def _gthread_web_command(address: str, workers: int | None = None, threads: int | None = None) -> list[str]:
    """`septet up`'s web command before the site was ASGI: gunicorn's threaded WSGI workers."""
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "septet_platform.wsgi:application",
        "--bind",
        address,
        "--workers",
        str(workers or GTHREAD_WORKERS),
        "--worker-class",
        "gthread",
        "--threads",
        str(threads or GTHREAD_THREADS),
        "--graceful-timeout",
        "10",
        "--log-level",
        "warning",
        "--no-control-socket",
    ]


def _up_environment(data: Path) -> dict[str, str]:
    """What `septet up` gives its web child: settings.local (DEBUG off, whitenoise), the data
    folder's secret key, its own addresses as ALLOWED_HOSTS."""
    from septet_platform.launcher import secret_key_file

    data.mkdir(parents=True, exist_ok=True)
    return {
        "DJANGO_SETTINGS_MODULE": "septet_platform.settings.local",
        "SEPTET_SECRET_KEY_FILE": str(secret_key_file(data)),
        "ALLOWED_HOSTS": "localhost,127.0.0.1",
    }


@contextlib.contextmanager
def embedded_redis(data: Path) -> Iterator[tuple[str, int]]:
    """`septet up`'s embedded Redis (its own configuration, in `data`), stopped afterwards; yields
    the REDIS_URL septet up gives its children (the site keeps its anonymous pages there) and its
    process id."""
    from septet_platform.launcher import REDIS_START_SECONDS, _redis_answers, embedded_redis_spec

    data.mkdir(parents=True, exist_ok=True)
    spec, socket_path = embedded_redis_spec(data)
    redis = subprocess.Popen(
        spec.command,
        cwd=spec.cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_die_with_us,
    )
    try:
        if not _redis_answers(socket_path, timeout=REDIS_START_SECONDS):
            raise SystemExit(f"the embedded Redis did not answer within {REDIS_START_SECONDS:.0f} s")
        yield f"redis+socket://{socket_path}", redis.pid
    finally:
        redis.terminate()
        redis.wait(timeout=10)


# The load (run in a second process: `--client`) -----------------------------------------------


def _paths(kind: str, plan: dict[str, Any], rng: random.Random) -> str:
    if kind == "home":  # every ladder's leaders, the newest matches, the install steps
        return "/"
    if kind == "ladder":
        sort = rng.choice(["rank", "-rank", "bot", "-games", "owner"])
        return f"/ladders/oh-hell/?sort={sort}&page={rng.randint(1, plan['ladder_pages'])}"
    if kind == "bot":
        return f"/bots/{rng.choice(plan['bots'])}/"
    match_id = rng.randint(*plan["match_ids"])
    return f"/matches/{match_id}/" if kind == "match" else f"/matches/{match_id}/replay.json"


def client(address: str, plan: dict[str, Any], requests: int, concurrency: int) -> dict[str, list[float]]:
    """Latencies in ms per kind: every thread sends requests of all kinds, interleaved."""
    host, port = address.split(":")
    latencies: dict[str, list[float]] = {kind: [] for kind in KINDS}
    failures: list[str] = []
    lock = threading.Lock()
    per_thread = requests * len(KINDS) // concurrency

    def work(seed: int) -> None:
        rng = random.Random(seed)
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        for index in range(per_thread):
            kind = KINDS[(index + seed) % len(KINDS)]
            path = _paths(kind, plan, rng)
            began = time.perf_counter()
            try:
                connection.request("GET", path, headers={"Accept-Encoding": "gzip"})
                response = connection.getresponse()
                response.read()
            except (OSError, http.client.HTTPException) as error:
                connection.close()
                connection = http.client.HTTPConnection(host, int(port), timeout=30)
                with lock:
                    failures.append(f"{path}: {error}")
                continue
            elapsed = (time.perf_counter() - began) * 1000
            if response.will_close:
                connection.close()
                connection = http.client.HTTPConnection(host, int(port), timeout=30)
            with lock:
                if response.status != 200:
                    failures.append(f"{path}: HTTP {response.status}")
                latencies[kind].append(elapsed)

    for warm in range(len(KINDS) * 5):  # warm the server's connections and caches
        work_rng = random.Random(warm)
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        connection.request("GET", _paths(KINDS[warm % len(KINDS)], plan, work_rng))
        connection.getresponse().read()
        connection.close()
    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        print(f"{len(failures)} failed requests, e.g. {failures[:3]}", file=sys.stderr)
    return latencies


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def report(latencies: dict[str, list[float]], seconds: float, target_ms: float = TARGET_P95_MS) -> bool:
    header = f"{'page':<8} {'requests':>8} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}"
    print(f"\n{header}   target p95 < {target_ms:.0f} ms")
    met = True
    for kind in KINDS:
        values = latencies[kind]
        p95 = _percentile(values, 0.95)
        ok = p95 < target_ms
        met &= ok
        print(
            f"{kind:<8} {len(values):>8} {statistics.median(values):>8.1f} {p95:>8.1f} {max(values):>8.1f}"
            f"   {'met' if ok else 'MISSED'}"
        )
    total = sum(len(values) for values in latencies.values())
    print(f"{total} requests in {seconds:.1f} s ({total / seconds:.0f}/s)")
    return met


def cpu_per_page(plan: dict[str, Any], requests: int) -> dict[str, list[float]]:
    """CPU milliseconds (this thread's) to make each kind's page in this process, through Django's
    test client with the site's middleware, `requests` of each kind interleaved. The shared page
    cache is emptied before each request: these are pages made, not pages kept."""
    from django.core.cache import caches
    from django.test import Client

    from septet_platform.web.page_cache import CACHE_ALIAS

    site = Client(HTTP_HOST="127.0.0.1", HTTP_ACCEPT_ENCODING="gzip")
    rng = random.Random(7)
    spent: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for index in range(len(KINDS) * (requests + 5)):
        kind = KINDS[index % len(KINDS)]
        path = _paths(kind, plan, rng)
        caches[CACHE_ALIAS].clear()
        began = time.thread_time()
        response = site.get(path)
        elapsed = (time.thread_time() - began) * 1000
        if response.status_code != 200:
            raise SystemExit(f"{path}: HTTP {response.status_code}")
        if index >= len(KINDS) * 5:  # the first five of each warm the process
            spent[kind].append(elapsed)
    return spent


def cpu_report(spent: dict[str, list[float]]) -> None:
    print(f"\n{'page':<8} {'requests':>8} {'median':>8} {'mean':>8} {'p95':>8}   CPU ms per page, in-process")
    for kind in KINDS:
        values = spent[kind]
        print(
            f"{kind:<8} {len(values):>8} {statistics.median(values):>8.2f} {statistics.fmean(values):>8.2f}"
            f" {_percentile(values, 0.95):>8.2f}"
        )
    everything = [value for values in spent.values() for value in values]
    middle, mean = statistics.median(everything), statistics.fmean(everything)
    print(f"all      {len(everything):>8} {middle:>8.2f} {mean:>8.2f}")


@contextlib.contextmanager
def benchmark_database(
    args: argparse.Namespace, scratch: Path
) -> Iterator[tuple[str, str, Path, Path | None]]:
    """(DATABASE_URL, a description, the data folder, the kept plan or None): a throwaway database,
    or with --keep a SQLite file, data folder and plan kept in that folder for the next run."""
    if args.keep is None:
        with throwaway_database(args.sqlite, scratch) as (url, described):
            yield url, described, scratch / "data", None
        return
    folder = Path(args.keep).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    plan = folder / f"plan-{args.bots}-{args.matches}.json"
    database = folder / f"bench-{args.bots}-{args.matches}.sqlite3"
    if not plan.exists():  # an unfinished earlier run leaves no plan: start again
        database.unlink(missing_ok=True)
    kept = "kept" if plan.exists() else "made now, kept"
    yield f"sqlite:///{database}", f"SQLite ({kept} in {folder})", folder / "data", plan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=300, help="per page kind")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--server",
        choices=["gunicorn", "runserver", "up", "gthread"],
        default="gunicorn",
        help="up: the site exactly as `septet up` serves it (its gunicorn command and settings); "
        "gthread: as it served it before the site was ASGI (threaded WSGI workers, same settings)",
    )
    parser.add_argument("--target-ms", type=float, default=TARGET_P95_MS, help="p95 target per page")
    parser.add_argument(
        "--workers", type=int, help="gunicorn worker processes (default 2, or septet up's with --server up)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        help="threads per gunicorn worker (default 4); with --server up the page threads of each site "
        "process (SEPTET_WEB_THREADS; default septet up's)",
    )
    parser.add_argument(
        "--sqlite", action="store_true", help="use a temporary SQLite file even if PostgreSQL answers"
    )
    parser.add_argument(
        "--keep",
        metavar="FOLDER",
        help="keep the SQLite database, replays and plan in FOLDER and reuse them next time (no generating)",
    )
    parser.add_argument(
        "--cpu",
        type=int,
        metavar="N",
        help="instead of the load: CPU ms per page kind made in this process (N of each), then exit",
    )
    parser.add_argument("--client", nargs=2, metavar=("ADDRESS", "PLAN"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        address, plan_file = args.client
        plan = json.loads(Path(plan_file).read_text())
        began = time.perf_counter()
        latencies = client(address, plan, args.requests, args.concurrency)
        print(json.dumps({"latencies": latencies, "seconds": time.perf_counter() - began}))
        return

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop_on_signal)
    scratch = Path(tempfile.mkdtemp(prefix="septet-web-bench-"))
    try:
        with contextlib.ExitStack() as stack:
            url, described, data, kept = stack.enter_context(benchmark_database(args, scratch))
            print(f"database: {described}")
            env = {
                **os.environ,
                "DATABASE_URL": url,
                "SEPTET_DATA_DIR": str(data),
                "DJANGO_SETTINGS_MODULE": "septet_platform.settings.base",
                "PYTHONPATH": os.pathsep.join([str(ROOT / "platform"), os.environ.get("PYTHONPATH", "")]),
            }
            helpers: list[int] = []  # processes the site's CPU time includes besides its own
            if args.server in UP_LIKE:
                env |= _up_environment(data)
                env["REDIS_URL"], redis_pid = stack.enter_context(embedded_redis(data))
                helpers.append(redis_pid)
            os.environ.update(env)
            import django
            from django.core.management import call_command

            django.setup()
            call_command("migrate", verbosity=0)
            if kept is not None and kept.exists():
                plan = json.loads(kept.read_text())
            else:
                plan = _generated(args, url)
                if kept is not None:
                    kept.write_text(json.dumps(plan))
            from django.db import connections

            if args.cpu:
                cpu_report(cpu_per_page(plan, args.cpu))
                connections.close_all()
                return
            connections.close_all()
            plan_file = scratch / "plan.json"
            plan_file.write_text(json.dumps(plan))
            result = _load(args, env, plan_file, helpers)
            met = report(result["latencies"], result["seconds"], args.target_ms)
            _cpu_summary(result)
            print(
                f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (1 min) at the end"
                " (the load's latencies include waiting for a core)"
            )
            print("target met" if met else "target MISSED")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _generated(args: argparse.Namespace, url: str) -> dict[str, Any]:
    began = time.perf_counter()
    print(f"generating {args.bots} bots and {args.matches} matches ...")
    plan = generate(args.bots, args.matches)
    print(f"generated in {time.perf_counter() - began:.0f} s")
    if "postgres" in url:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    return plan


def _load(
    args: argparse.Namespace, env: dict[str, str], plan_file: Path, helpers: list[int]
) -> dict[str, Any]:
    """Serves the site and runs the load against it from a second process; its latencies, and the
    CPU seconds the site (its processes and `helpers`) and the load generator spent meanwhile."""
    server, address = serve(env, args.server, args.workers, args.threads)
    try:
        served_by = {
            "gunicorn": f"gunicorn ({args.workers or 2} workers x {args.threads or 4} threads)",
            "runserver": "runserver",
            "up": "as `septet up` serves it: "
            + " ".join(Path(word).name for word in _up_web_command(address, args.workers))
            + f" with SEPTET_WEB_THREADS={_up_threads(args.threads)}",
            "gthread": "as `septet up` served it before ASGI: "
            + " ".join(Path(word).name for word in _gthread_web_command(address, args.workers, args.threads)),
        }[args.server]
        print(f"site: {served_by} at {address}; load: {args.concurrency} threads in a second process")
        site_before = tree_cpu_seconds([server.pid, *helpers])
        load_before = _children_cpu_seconds()
        measured = subprocess.run(
            [
                sys.executable,
                __file__,
                "--client",
                address,
                str(plan_file),
                "--requests",
                str(args.requests),
                "--concurrency",
                str(args.concurrency),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        if measured.stderr:
            print(measured.stderr, file=sys.stderr)
        result: dict[str, Any] = json.loads(measured.stdout)
        result["site_cpu"] = tree_cpu_seconds([server.pid, *helpers]) - site_before
        result["load_cpu"] = _children_cpu_seconds() - load_before
        return result
    finally:
        server.terminate()
        server.wait(timeout=10)


def _children_cpu_seconds() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _cpu_summary(result: dict[str, Any]) -> None:
    """CPU per request of the site and of the load generator: what the machine's cores allow when
    nothing else runs, whatever else ran during this measurement."""
    total = sum(len(values) for values in result["latencies"].values())
    site, load = 1000 * result["site_cpu"] / total, 1000 * result["load_cpu"] / total
    cores = os.cpu_count() or 1
    together, alone = cores * 1000 / (site + load), cores * 1000 / site
    print(
        f"CPU per request: site {site:.2f} ms (its processes and Redis), load generator {load:.2f} ms;"
        f" {cores} idle cores would serve at most {together:.0f} requests/s with this load beside the site"
        f" ({alone:.0f}/s with the load elsewhere)"
    )


if __name__ == "__main__":
    main()
