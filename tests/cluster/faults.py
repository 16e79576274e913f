"""Faults across the cluster's hosts while rated matches flow, the recovery of each, and the
independent check of what the platform recorded afterwards.

Each fault is timed from its end (the link back up, the host started again, the partition
healed, the server answering again) until matches flow again: a match finished after that
moment, by the damaged host itself where one host was damaged. The check afterwards reads the
database (through the harness's own connection, with our own SQL: benchmarks/reliability.py's
`check`) and the replays the database storage holds, never the platform's code.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from septet_cluster import SeptetCluster

ROOT = Path(__file__).resolve().parents[2]
RECOVERY_LIMIT_SECONDS = 60.0
RECOVERY_TIMEOUT_SECONDS = 150.0
DRAIN_SECONDS = 300.0


def reliability_checker() -> ModuleType:
    """benchmarks/reliability.py, loaded by path (the benchmarks folder is not a package)."""
    name = "reliability_benchmark"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "reliability.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@dataclass
class Recovery:
    """One fault: the matches scheduled or running when it began, and the seconds from its end
    until matches flowed again (inf: never within RECOVERY_TIMEOUT_SECONDS)."""

    fault: str
    in_flight: set[int]
    seconds: float
    note: str = ""
    held: set[int] = field(default_factory=set)
    """Matches the damaged host was playing when the fault began."""


class ClusterFaults:
    """Injects the faults of issue-numbered list "faults across hosts" one after another."""

    def __init__(self, cluster: SeptetCluster, *, hold: float, say: Callable[[str], None] = print) -> None:
        self.cluster = cluster
        self.hold = hold
        self.say = say
        self.db = cluster.connect()

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        for _ in range(120):  # PostgreSQL itself may be the fault: wait for it rather than fail
            try:
                return list(self.db.execute(sql, params).fetchall())
            except Exception:
                with contextlib.suppress(Exception):
                    self.db.close()
                time.sleep(0.5)
                with contextlib.suppress(Exception):
                    self.db = self.cluster.connect()
        raise RuntimeError("the harness could not read the database for a minute")

    def in_flight(self) -> set[int]:
        return {
            row[0]
            for row in self.rows("select id from matches_match where status in ('scheduled', 'running')")
        }

    def running_on(self, host: str) -> set[int]:
        rows = self.rows(
            "select id from matches_match where status = 'running' and worker like %s", f"%@{host}"
        )
        return {row[0] for row in rows}

    def finished_since(self, moment: datetime, host: str | None = None) -> int:
        if host is None:
            return int(self.rows("select count(*) from matches_match where finished > %s", moment)[0][0])
        query = "select count(*) from matches_match where finished > %s and worker like %s"
        return int(self.rows(query, moment, f"%@{host}")[0][0])

    def wait_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.5)
        return False

    def flowing(self, timeout: float = 600) -> bool:
        """Waits until matches are being played (the first finished match after start)."""
        return self.wait_until(lambda: self.finished_since(datetime.fromtimestamp(0, UTC)) > 0, timeout)

    def _recovered(
        self, ended: float, host: str | None = None, extra: Callable[[], bool] = lambda: True
    ) -> float:
        moment = datetime.fromtimestamp(ended, UTC)

        def whole() -> bool:
            return self.finished_since(moment, host) > 0 and extra()

        if not self.wait_until(whole, RECOVERY_TIMEOUT_SECONDS):
            return float("inf")
        return time.time() - ended

    def _busy(self, host: str) -> set[int]:
        self.wait_until(lambda: bool(self.running_on(host)), 90)
        return self.running_on(host)

    def _settled(self, held: set[int], attempts: dict[int, int]) -> Callable[[], bool]:
        """True once none of `held` is still running under the attempt it had when the fault
        began (its lease ran out and it was queued again, or it was recorded)."""

        def settled() -> bool:
            if not held:
                return True
            rows = self.rows("select id, status, attempt from matches_match where id = any(%s)", list(held))
            return all(
                status != "running" or attempt > attempts[match_id] for match_id, status, attempt in rows
            )

        return settled

    def _fate(self, held: set[int], attempts: dict[int, int]) -> str:
        """What became of the matches a damaged host held: recorded by it under the attempt it
        had, put back in the queue (its lease ran out), or already played again elsewhere."""
        if not held:
            return ""
        rows = self.rows("select id, status, attempt from matches_match where id = any(%s)", list(held))
        kept = queued = again = 0
        for match_id, status, attempt in rows:
            if attempt > attempts[match_id]:
                again += 1
            elif status == "scheduled":
                queued += 1
            elif status != "running":
                kept += 1
        fates = f"{kept} recorded by it, {queued} queued again, {again} played elsewhere"
        return f"; of the {len(held)} it held: {fates}"

    def _attempts(self, held: set[int]) -> dict[int, int]:
        rows = self.rows("select id, attempt from matches_match where id = any(%s)", list(held))
        return {match_id: attempt for match_id, attempt in rows}

    # The faults

    def link_cut(self, host: str) -> Recovery:
        held = self._busy(host)
        attempts, flight = self._attempts(held), self.in_flight()
        self.cluster.link(host, up=False)
        time.sleep(self.hold)
        self.cluster.link(host, up=True)
        ended = time.time()
        seconds = self._recovered(ended, host, self._settled(held, attempts))
        note = f"{self.hold:.0f} s without a link{self._fate(held, attempts)}"
        return Recovery(f"link cut ({host})", flight, seconds, note, held)

    def host_killed(self, host: str) -> Recovery:
        held = self._busy(host)
        attempts, flight = self._attempts(held), self.in_flight()
        killed = self.cluster.kill_host(host)
        time.sleep(min(self.hold, 5))
        self.cluster.start_worker(host)  # the machine comes back, with nothing of its own left
        ended = time.time()
        seconds = self._recovered(ended, host, self._settled(held, attempts))
        note = f"{killed} processes killed{self._fate(held, attempts)}"
        return Recovery(f"host killed ({host})", flight, seconds, note, held)

    def broker_partition(self) -> Recovery:
        flight = self.in_flight()
        workers = self.cluster.worker_names
        self.cluster.broker_partition(workers, cut=True)
        time.sleep(self.hold)
        self.cluster.broker_partition(workers, cut=False)
        ended = time.time()
        return Recovery("workers | Redis", flight, self._recovered(ended), f"{self.hold:.0f} s apart")

    def broker_restart(self) -> Recovery:
        flight = self.in_flight()
        away = self.cluster.restart_broker()
        ended = time.time()
        return Recovery("Redis restarted", flight, self._recovered(ended), f"away {away:.1f} s")

    def database_restart(self) -> Recovery:
        flight = self.in_flight()
        away = self.cluster.restart_database()
        ended = time.time()
        return Recovery("PostgreSQL restarted", flight, self._recovered(ended), f"away {away:.1f} s")

    def all_faults(self) -> list[Callable[[], Recovery]]:
        first, last = self.cluster.worker_names[0], self.cluster.worker_names[-1]
        return [
            lambda: self.link_cut(first),
            lambda: self.host_killed(last),
            self.broker_partition,
            self.broker_restart,
            self.database_restart,
        ]

    def drain(self, timeout: float = DRAIN_SECONDS) -> bool:
        """No more matches scheduled; waits until every match in flight has ended."""
        self.rows("update ladders_ladder set active = false returning id")
        return self.wait_until(lambda: not self.in_flight(), timeout)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.db.close()


def check(cluster: SeptetCluster) -> Any:
    """benchmarks/reliability.py's checker over the cluster's database and the replays its
    database storage keeps: its Findings."""
    checker = reliability_checker()
    with cluster.connect() as connection, connection.cursor() as cursor:
        return checker.check(cursor, checker.DatabaseReplays(cursor))


def table(recoveries: list[Recovery], findings: Any, left: list[str]) -> tuple[str, bool]:
    """The recovery table (fault, recovery, lost, doubled, notes) and a last line over every
    match; whether everything held: each recovery within RECOVERY_LIMIT_SECONDS, nothing lost or
    doubled, ratings recomputing, nothing left behind."""
    lines = [f"{'fault':<22} {'recovery (s)':>12} {'lost':>5} {'doubled':>8}  notes"]
    ok = True
    for recovery in recoveries:
        lost = len(recovery.in_flight & set(findings.lost))
        doubled = len(recovery.in_flight & set(findings.doubled))
        ok = ok and recovery.seconds <= RECOVERY_LIMIT_SECONDS and not lost and not doubled
        lines.append(
            f"{recovery.fault:<22} {recovery.seconds:>12.1f} {lost:>5} {doubled:>8}  {recovery.note}"
        )
    lines.append(
        f"{'all':<22} {'':>12} {len(findings.lost):>5} {len(findings.doubled):>8}  "
        f"{findings.matches} matches, {findings.rated} rated, {findings.replays_verified} replays verified, "
        f"{len(findings.ratings)} rating problems, {len(left)} processes left behind"
    )
    for match_id, why in list(findings.lost.items())[:10]:
        lines.append(f"  lost {match_id}: {'; '.join(why)}")
    for match_id, why in list(findings.doubled.items())[:10]:
        lines.append(f"  doubled {match_id}: {'; '.join(why)}")
    lines += [f"  rating: {problem}" for problem in findings.ratings[:10]]
    lines += [f"  left behind: {process}" for process in left]
    return "\n".join(lines), ok and findings.clean and not left
