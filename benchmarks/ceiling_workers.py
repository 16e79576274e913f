"""The processes benchmarks/central_ceiling.py starts: simulated workers and the beat.

A simulated worker process is a Celery worker without bots. One thread consumes the real broker
queue as a worker's consumer does (Kombu's Redis transport, prefetch = its slots, a message
acknowledged once its match is done); each slot, an asyncio task, takes a message and then does
what `matches.services.match_play` does around the referee, through the same services: the claim
(which reads the match back) and its seats, waiting as long as a real match plays (instead of
starting bots and playing), `match_record` with a real replay (a real game of the match's game and
table size, played once per process with random players, with a new match id each time), and
`ratings_apply`. The database calls run on a few threads of the process, each with its own
connection, as a connection pooler would serve a worker machine: without one, a hundred worker
machines would hold hundreds of PostgreSQL connections.

The beat process runs the beat's two periodic tasks at the beat's intervals, in one process, as a
maintenance worker would run them: scheduling (which queues the match tasks on the broker) and the
reaper.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import queue
import random
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from typing import Any, TypeVar

T = TypeVar("T")
REPLAYS_PER_TABLE = 8
"""Distinct real games kept per (game, table size); each match takes one by its seed."""
WRITER_LOGGER = "septet_platform.ladders.rating_writer"


@dataclass(frozen=True)
class WorkerConfig:
    """One simulated worker process: `slots` matches at a time, `db_threads` connections."""

    name: str
    slots: int
    db_threads: int
    match_seconds: float
    jitter: float
    referee: bool
    writer: str  # "batched" (the platform's) or "per-match" (the writer before batching)
    nice: int  # added to the process's niceness: the centre's processes come first on one machine


@dataclass(frozen=True)
class Done:
    """One match a slot took to the end, with where its time went (seconds)."""

    match_id: int
    attempt: int
    rated_at: float  # time.time() when its ratings call returned
    waited_for_message: float
    pool_wait: float  # waiting for a free database thread, over its two database phases
    claim: float
    record: float
    rate: float
    claim_cpu: float  # CPU seconds of the database thread in each phase
    record_cpu: float
    rate_cpu: float


@dataclass
class WorkerReport:
    """What a simulated worker process sends back when it stops."""

    name: str
    pid: int
    done: list[Done] = field(default_factory=list)
    not_claimed: int = 0
    batches: list[tuple[float, int, int, float]] = field(
        default_factory=list
    )  # (time, ladder, matches, held)
    errors: list[str] = field(default_factory=list)


def worker_process(config: WorkerConfig, stop: Event, ready: Queue[Any], reports: Queue[Any]) -> None:
    """Entry point of a simulated worker process (spawned)."""
    _die_with_parent()
    os.nice(config.nice)
    import django

    django.setup()
    report = WorkerReport(config.name, os.getpid())
    _capture_batches(report)
    # A message whose BRPOP was under way when the consumer stopped is put back on the queue by
    # Kombu with a warning per message: expected at every stop, not news.
    logging.getLogger("kombu.transport.virtual.base").setLevel(logging.ERROR)
    try:
        asyncio.run(_SimulatedWorker(config, stop, report).run(ready))
    except Exception as error:  # reported, not raised: the driver prints it
        report.errors.append(f"{type(error).__name__}: {error}")
    reports.put(report)


def beat_process(stop: Event, ready: Queue[Any], runs: Queue[Any], reap: bool) -> None:
    """Entry point of the beat process: the beat's scheduling and reaping tasks at its intervals,
    until `stop`; puts each run on `runs` as it ends: (task, start time, seconds, result, error)."""
    _die_with_parent()
    import django

    django.setup()
    from django.conf import settings

    from septet_platform.matches.tasks import matches_reap_task, matches_schedule_task

    beat = settings.CELERY_BEAT_SCHEDULE
    tasks: list[tuple[str, Callable[[], int], float]] = [
        ("schedule", matches_schedule_task, float(beat["schedule-matches"]["schedule"]))
    ]
    if reap:
        tasks.append(("reap", matches_reap_task, float(beat["reap-matches"]["schedule"])))
    due = {name: time.monotonic() for name, _, _ in tasks}
    ready.put("beat")
    while not stop.is_set():
        for name, task, interval in tasks:
            if time.monotonic() >= due[name]:
                started, error = time.time(), ""
                try:
                    result = int(task())
                except Exception as failure:  # reported; the beat goes on, as Celery's does
                    result, error = -1, f"{name}: {type(failure).__name__}: {failure}"
                runs.put((name, started, time.time() - started, result, error))
                due[name] += interval
        stop.wait(max(0.0, min(due.values()) - time.monotonic()))


class Outcomes:
    """Real outcomes of the referee for (game, table size), made once (REPLAYS_PER_TABLE random
    games), or played afresh on each match's own seed (`referee`)."""

    def __init__(self, referee: bool) -> None:
        self.referee = referee
        self._made: dict[tuple[str, int], list[Any]] = {}
        self._lock = threading.Lock()

    def get(self, game: str, seats: int, seed: int) -> Any:
        """An outcome for a match: a kept one with a new match id, or a fresh game on `seed`."""
        from referee.engine.match import new_match_id

        if self.referee:
            return self._play(game, seats, seed)
        with self._lock:
            kept = self._made.get((game, seats))
            if kept is None:
                kept = self._made[(game, seats)] = [
                    self._play(game, seats, n) for n in range(REPLAYS_PER_TABLE)
                ]
        chosen = kept[seed % len(kept)]
        return dataclasses.replace(chosen, replay={**chosen.replay, "match_id": new_match_id()})

    @staticmethod
    def _play(game: str, seats: int, seed: int) -> Any:
        from referee.engine.match import new_match_id, play_match
        from referee.engine.players import RandomPlayer

        players = [RandomPlayer(random.Random(seed * 31 + seat), f"random-{seat}") for seat in range(seats)]
        return play_match(game, players, seed=seed, match_id=new_match_id())


@dataclass(frozen=True)
class Claimed:
    """A match this worker holds, as match_play holds it while the referee plays."""

    match: Any  # the Match row read back by the claim, with its ladder
    seats: list[Any]
    outcome: Any  # what the referee would have returned

    @property
    def attempt(self) -> int:
        return int(self.match.attempt)


def claim(match_id: int, worker: str, outcomes: Outcomes) -> Claimed | None:
    """As match_play before the referee plays: the claim (which reads the match back), its seats;
    with the outcome the match will record. None when the match is not claimed."""
    from septet_platform.matches import services, storage
    from septet_platform.matches.models import Seat

    if not storage.replays_writable().ok:
        return None
    match = services._claimed(match_id=match_id, worker=worker)  # what match_play calls
    if match is None:
        return None
    seats = list(Seat.objects.filter(match=match).select_related("bot_version__bot").order_by("seat"))
    return Claimed(match, seats, outcomes.get(match.ladder.game, len(seats), match.seed))


def record_and_rate(claimed: Claimed, writer: str) -> tuple[bool, tuple[float, float], tuple[float, float]]:
    """As match_play after the referee: the record, then the ratings; (recorded, and the wall and
    CPU seconds of each)."""
    from septet_platform.matches import services

    match = claimed.match
    started, started_cpu = time.perf_counter(), time.thread_time()
    recorded = services.match_record(
        match_id=match.pk, attempt=claimed.attempt, outcome=claimed.outcome, logs={}, seats=claimed.seats
    )
    recorded_at, recorded_cpu = time.perf_counter(), time.thread_time()
    if recorded and match.rated:
        apply = per_match_ratings_apply if writer == "per-match" else _batched_ratings_apply()
        apply(match=match)
    return (
        recorded,
        (recorded_at - started, recorded_cpu - started_cpu),
        (time.perf_counter() - recorded_at, time.thread_time() - recorded_cpu),
    )


def _batched_ratings_apply() -> Callable[..., Any]:
    from septet_platform.ladders.services import ratings_apply

    return ratings_apply


class _SimulatedWorker:
    """One process: a consumer thread, `slots` asyncio tasks, `db_threads` database threads."""

    def __init__(self, config: WorkerConfig, stop: Event, report: WorkerReport) -> None:
        self.config = config
        self.stop = stop
        self.report = report
        self.outcomes = Outcomes(config.referee)
        self.database = ThreadPoolExecutor(config.db_threads, thread_name_prefix="db")
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        self.settle: queue.Queue[tuple[str, Any]] = queue.Queue()  # ("ack" | "requeue", message)
        self.stopping = False
        self.consuming_stopped = threading.Event()
        self.may_close = threading.Event()

    async def run(self, ready: Queue[Any]) -> None:
        loop = asyncio.get_running_loop()
        consumer = threading.Thread(target=self._consume, args=(loop, ready), name="consumer", daemon=True)
        consumer.start()
        slots = [asyncio.create_task(self._slot(f"{self.config.name}-{n}")) for n in range(self.config.slots)]
        await loop.run_in_executor(None, self.stop.wait)
        self.stopping = True
        await asyncio.gather(*slots)
        await loop.run_in_executor(None, self.consuming_stopped.wait)
        while not self.inbox.empty():  # taken from the broker, never started: back to the queue
            self.settle.put(("requeue", self.inbox.get_nowait()))
        self.may_close.set()
        await loop.run_in_executor(None, consumer.join)
        self.database.shutdown(wait=True)

    async def _slot(self, name: str) -> None:
        free = time.perf_counter()
        while not self.stopping:
            try:
                message = await asyncio.wait_for(self.inbox.get(), timeout=0.2)
            except TimeoutError:
                continue
            if self.stopping:
                self.settle.put(("requeue", message))
                return
            waited = time.perf_counter() - free
            try:
                await self._match(name, message, waited)
            except Exception as error:  # the match is left as it stands; the check will say so
                self.report.errors.append(f"{type(error).__name__}: {error}")
            self.settle.put(("ack", message))
            free = time.perf_counter()

    async def _match(self, name: str, message: Any, waited: float) -> None:
        match_id = int(message.payload[0][0])
        claimed, claim_wait, claim_seconds, claim_cpu = await self._on_database(
            claim, match_id, name, self.outcomes
        )
        if claimed is None:
            self.report.not_claimed += 1
            return
        jitter = self.config.jitter  # the match plays
        await asyncio.sleep(self.config.match_seconds * random.uniform(1 - jitter, 1 + jitter))
        (recorded, record, rate), record_wait, _, _ = await self._on_database(
            record_and_rate, claimed, self.config.writer
        )
        if recorded:
            self.report.done.append(
                Done(
                    match_id,
                    claimed.attempt,
                    time.time(),
                    waited,
                    claim_wait + record_wait,
                    claim_seconds,
                    record[0],
                    rate[0],
                    claim_cpu,
                    record[1],
                    rate[1],
                )
            )

    async def _on_database(self, function: Callable[..., T], *args: Any) -> tuple[T, float, float, float]:
        """`function(*args)` on a database thread: (its result, seconds waiting for a free thread,
        seconds it ran, CPU seconds of the thread meanwhile)."""
        submitted = time.perf_counter()

        def timed() -> tuple[T, float, float, float]:
            started, started_cpu = time.perf_counter(), time.thread_time()
            result = function(*args)
            return (
                result,
                started - submitted,
                time.perf_counter() - started,
                time.thread_time() - started_cpu,
            )

        return await asyncio.get_running_loop().run_in_executor(self.database, timed)

    def _consume(self, loop: asyncio.AbstractEventLoop, ready: Queue[Any]) -> None:
        """The consumer thread: as a Celery worker's, one connection, prefetch = slots; it alone
        touches the connection, so acknowledgements come back to it through `settle`."""
        from kombu import Consumer, Exchange
        from kombu import Queue as BrokerQueue

        from septet_platform.celery import app

        matches = BrokerQueue("matches", Exchange("matches", type="direct"), routing_key="matches")
        with app.connection_for_read() as connection:
            consumer = Consumer(
                connection,
                queues=[matches],
                callbacks=[lambda _body, message: loop.call_soon_threadsafe(self.inbox.put_nowait, message)],
                accept=["json"],
                prefetch_count=self.config.slots,
            )
            consumer.consume()
            ready.put(self.config.name)
            while not self.stopping:
                self._settle_all()
                with contextlib.suppress(socket.timeout, TimeoutError):
                    connection.drain_events(timeout=0.005)
            consumer.cancel()
            self.consuming_stopped.set()
            while not self.may_close.wait(0.01):
                self._settle_all()
            self._settle_all()

    def _settle_all(self) -> None:
        while True:
            try:
                action, message = self.settle.get_nowait()
            except queue.Empty:
                return
            if action == "ack":
                message.ack()
            else:
                message.reject(requeue=True)


def _capture_batches(report: WorkerReport) -> None:
    """Counts the rating writer's batches (its debug line) into `report`."""

    class Batches(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            values = record.__dict__
            report.batches.append((record.created, values["ladder"], values["matches"], values["held"]))

    logger = logging.getLogger(WRITER_LOGGER)
    logger.setLevel(logging.DEBUG)
    logger.addHandler(Batches(logging.DEBUG))
    logger.propagate = False


def _die_with_parent() -> None:
    """Ends this process when the driver that spawned it is gone (even after a kill -9)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


# The rating writer before batching (one transaction per match, a few statements per seat), kept
# here for `--writer per-match`: the "before" of the ceiling, on the same database in the same run.


def per_match_ratings_apply(*, match: Any) -> list[Any]:
    """ratings_apply as it was before the batched writer, for ladder matches (every match this
    benchmark plays): two-seat duplicate sets rated once, when their last rotation ends."""
    from django.db import transaction

    from septet_platform.ladders import ratings
    from septet_platform.ladders.models import Ladder, Rating, RatingChange
    from septet_platform.matches.models import Match, Seat

    def held(ladder: Ladder, version: Any) -> Rating:
        rating = Rating.objects.filter(ladder=ladder, bot_version=version).first()
        if rating is None:
            rating, _ = Rating.objects.get_or_create(
                ladder=ladder,
                bot_version=version,
                defaults={"mu": ratings.DEFAULT_MU, "sigma": ratings.DEFAULT_SIGMA},
            )
        return rating

    def results_apply(ladder: Ladder, on: Match, results: list[tuple[Any, int]], games: int) -> list[Any]:
        ratings_held = [held(ladder, version) for version, _ in results]
        before = [ratings.Belief(rating.mu, rating.sigma) for rating in ratings_held]
        after = ratings.rate(before, [rank for _, rank in results])
        changes = []
        for rating, (_, rank), old, new in zip(ratings_held, results, before, after, strict=True):
            rating.mu, rating.sigma, rating.games = new.mu, new.sigma, rating.games + games
            rating.save(update_fields=["mu", "sigma", "games", "updated"])
            changes.append(
                RatingChange.objects.create(
                    rating=rating,
                    match=on,
                    rank=rank,
                    mu_before=old.mu,
                    sigma_before=old.sigma,
                    mu_after=new.mu,
                    sigma_after=new.sigma,
                )
            )
        return changes

    with transaction.atomic():
        ladder = Ladder.objects.select_for_update().get(pk=match.ladder_id)
        current = Match.objects.select_for_update().get(pk=match.pk)
        if current.ratings_applied or not current.rated:
            return []
        seats = list(Seat.objects.filter(match=current).select_related("bot_version").order_by("seat"))
        if current.duplicate_set and len(seats) == 2:
            rotations = list(
                Match.objects.select_for_update()
                .filter(ladder=ladder, duplicate_set=current.duplicate_set)
                .order_by("pk")
            )
            if any(rotation.status in ("scheduled", "running") for rotation in rotations):
                return []
            finished = [
                rotation for rotation in rotations if rotation.status == "finished" and rotation.rated
            ]
            if not finished or any(rotation.ratings_applied for rotation in finished):
                return []
            ranks: dict[Any, list[int]] = {}
            for rotation in finished:
                for seat in Seat.objects.filter(match=rotation).select_related("bot_version"):
                    ranks.setdefault(seat.bot_version, []).append(int(seat.rank or 0))
            means = {version: sum(held) / len(held) for version, held in ranks.items()}
            results = [
                (version, 1 + sum(other < mean for other in means.values()))
                for version, mean in means.items()
            ]
            changes = results_apply(ladder, finished[-1], results, len(finished))
            Match.objects.filter(pk__in=[rotation.pk for rotation in finished]).update(ratings_applied=True)
            return changes
        if current.status != "finished":
            return []
        changes = results_apply(
            ladder, current, [(seat.bot_version, int(seat.rank or 0)) for seat in seats], 1
        )
        current.ratings_applied = True
        current.save(update_fields=["ratings_applied"])
        return changes
