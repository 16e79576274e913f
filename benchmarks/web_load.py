"""Web latency under load: the ladder, bot and match pages and the replay document.

1. A throwaway database (a fresh PostgreSQL database when one answers on 127.0.0.1:5432, else a
   temporary SQLite file; `--sqlite` forces SQLite) is migrated and filled with bulk_create:
   1,000 bots (one ACTIVE version each, rated on the oh-hell ladder), 100,000 finished 4-seat
   matches in duplicate sets as the ladder plays them (4 rotations of one seating and seed, rated
   once with the last), with their seats and rating changes, each match pointing at one of a few
   real replays.
2. The site is served (DEBUG off) in a subprocess by gunicorn with threaded workers, as in
   production, or by `manage.py runserver` (`--server runserver`), or exactly as `septet up` serves
   it (`--server up`: its own gunicorn command line and its settings, settings.local, with
   whitenoise, the data folder's secret key and its embedded Redis, where the site keeps its
   anonymous pages; use it with `--sqlite` for the embedded defaults).
3. A second process sends requests from several threads at once and reports, per page kind,
   p50/p95/max latency; the target is p95 < 100 ms for each (`--target-ms`).

    python benchmarks/web_load.py [--bots 1000] [--matches 100000] [--requests 300] [--concurrency 4]
                                  [--server gunicorn|runserver|up] [--sqlite] [--target-ms 100]

`septet up`'s case, 50 clients at once against a p95 of 250 ms (the clients run on the same
cores as the site: a busy machine shows in every figure, so note its load):

    python benchmarks/web_load.py --server up --sqlite --concurrency 50 --target-ms 250
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import http.client
import json
import os
import random
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

ROOT = Path(__file__).resolve().parent.parent
TARGET_P95_MS = 100.0
PLAYERS = 4
REPLAYS = 24
BATCH = 5000
KINDS = ("ladder", "bot", "match", "replay")
PR_SET_PDEATHSIG = 1


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
    env: dict[str, str], server_kind: str, workers: int, threads: int
) -> tuple[subprocess.Popen[bytes], str]:
    """The site in a subprocess: gunicorn (as in production: threaded workers, persistent database
    connections) or Django's runserver (a new thread, and so a new database connection, per request)."""
    port = _free_port()
    if server_kind == "up":
        command = _up_web_command(f"127.0.0.1:{port}")
    elif server_kind == "gunicorn":
        command = [
            sys.executable,
            "-m",
            "gunicorn",
            "septet_platform.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--threads",
            str(threads),
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


def _up_web_command(address: str) -> list[str]:
    """The web child's command line of `septet up` (not --dev), bound to `address`."""
    from septet_platform.launcher import _web_command

    return _web_command(argparse.Namespace(dev=False, web=address))


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
def embedded_redis(data: Path) -> Iterator[str]:
    """`septet up`'s embedded Redis (its own configuration, in `data`), stopped afterwards; yields
    the REDIS_URL septet up gives its children (the site keeps its anonymous pages there)."""
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
        yield f"redis+socket://{socket_path}"
    finally:
        redis.terminate()
        redis.wait(timeout=10)


# The load (run in a second process: `--client`) -----------------------------------------------


def _paths(kind: str, plan: dict[str, Any], rng: random.Random) -> str:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=300, help="per page kind")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--server",
        choices=["gunicorn", "runserver", "up"],
        default="gunicorn",
        help="up: the site exactly as `septet up` serves it (its gunicorn command and settings)",
    )
    parser.add_argument("--target-ms", type=float, default=TARGET_P95_MS, help="p95 target per page")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument(
        "--sqlite", action="store_true", help="use a temporary SQLite file even if PostgreSQL answers"
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
        with contextlib.ExitStack() as stack, throwaway_database(args.sqlite, scratch) as (url, described):
            print(f"database: {described}")
            env = {
                **os.environ,
                "DATABASE_URL": url,
                "SEPTET_DATA_DIR": str(scratch / "data"),
                "DJANGO_SETTINGS_MODULE": "septet_platform.settings.base",
                "PYTHONPATH": os.pathsep.join([str(ROOT / "platform"), os.environ.get("PYTHONPATH", "")]),
            }
            if args.server == "up":
                env |= _up_environment(scratch / "data")
                env["REDIS_URL"] = stack.enter_context(embedded_redis(scratch / "data"))
            os.environ.update(env)
            import django
            from django.core.management import call_command

            django.setup()
            call_command("migrate", verbosity=0)
            began = time.perf_counter()
            print(f"generating {args.bots} bots and {args.matches} matches ...")
            plan = generate(args.bots, args.matches)
            print(f"generated in {time.perf_counter() - began:.0f} s")
            if "postgres" in url:
                from django.db import connection

                with connection.cursor() as cursor:
                    cursor.execute("VACUUM ANALYZE")
            from django.db import connections

            connections.close_all()
            plan_file = scratch / "plan.json"
            plan_file.write_text(json.dumps(plan))
            server, address = serve(env, args.server, args.workers, args.threads)
            try:
                served_by = {
                    "gunicorn": f"gunicorn ({args.workers} workers x {args.threads} threads)",
                    "runserver": "runserver",
                    "up": "as `septet up` serves it: "
                    + " ".join(Path(word).name for word in _up_web_command(address)),
                }[args.server]
                print(f"site: {served_by} at {address}; load: {args.concurrency} threads in a second process")
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
                result = json.loads(measured.stdout)
            finally:
                server.terminate()
                server.wait(timeout=10)
            met = report(result["latencies"], result["seconds"], args.target_ms)
            print(
                f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (1 min) at the end"
                " (the load's latencies include waiting for a core)"
            )
            print("target met" if met else "target MISSED")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
