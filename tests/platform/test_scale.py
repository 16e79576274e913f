"""Scale-out on one machine, from the production configuration: PostgreSQL and Redis, two Celery
worker processes with distinct names, beat, gunicorn and the Arena service (`septet up
--production --workers 2`). Every match is recorded exactly once, both workers play, no two
rotations of one duplicate set play at the same time (read from the database), the stored
ratings equal those from replaying the recorded results in the order they were applied, and the
workers keep their database connections from match to match."""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

import pytest
from platform_support import SEPTET, local_address

from septet_platform.ladders import ratings

ROOT = Path(__file__).resolve().parents[2]
WANTED_MATCHES = 24


def _query(database_url: str, sql: str) -> list[tuple]:
    import psycopg

    with psycopg.connect(database_url.replace("postgres://", "postgresql://", 1)) as connection:
        return connection.execute(sql).fetchall()


def _finished(database_url: str) -> int:
    import psycopg

    try:
        return int(_query(database_url, "select count(*) from matches_match where status = 'finished'")[0][0])
    except psycopg.errors.UndefinedTable:  # not migrated yet
        return 0


def _connections_opened_while_playing(
    database_url: str, *, more_matches: int, up: subprocess.Popen[str]
) -> tuple[int, int]:
    """(PostgreSQL sessions opened, matches finished) while the platform plays `more_matches`
    more, watched over one connection: a worker that connected anew for every match (Celery's
    default) opens at least one session per match; one that keeps its connection, next to none."""
    import psycopg

    sql = (
        "select (select sessions from pg_stat_database where datname = current_database()), "
        "(select count(*) from matches_match where status = 'finished')"
    )
    with psycopg.connect(database_url.replace("postgres://", "postgresql://", 1), autocommit=True) as watch:
        sessions_before, finished_before = watch.execute(sql).fetchone() or (0, 0)
        deadline = time.monotonic() + 120
        while True:
            watch.execute("select pg_stat_clear_snapshot()")  # statistics are cached per transaction
            sessions, finished = watch.execute(sql).fetchone() or (0, 0)
            if finished - finished_before >= more_matches:
                return sessions - sessions_before, finished - finished_before
            assert up.poll() is None, "septet up --production exited"
            assert time.monotonic() < deadline, f"fewer than {more_matches} more matches in 120 s"
            time.sleep(1)


@pytest.mark.slow
def test_two_production_workers_record_every_match_once_and_ratings_replay_exactly(
    tmp_path: Path, fresh_services: dict[str, str]
) -> None:
    if not fresh_services:
        pytest.skip("the scale test runs on PostgreSQL and Redis (127.0.0.1:5432 and :6379)")
    database = fresh_services["DATABASE_URL"]
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    env |= fresh_services | {
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SEPTET_HTTPS": "0",
    }
    web = local_address()
    data = tmp_path / "data"
    log = (tmp_path / "up.log").open("w+")
    up = subprocess.Popen(
        [SEPTET, "up", "--production", "--workers", "2", "--concurrency", "1", "--data", str(data),
         "--web", web, "--arena", local_address()],
        env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while _finished(database) < WANTED_MATCHES:
            assert up.poll() is None, "septet up --production exited"
            assert time.monotonic() < deadline, f"fewer than {WANTED_MATCHES} matches finished in 300 s"
            time.sleep(2)
        opened, played = _connections_opened_while_playing(database, more_matches=12, up=up)
        health = json.load(urllib.request.urlopen(f"http://{web}/healthz", timeout=10))
        metrics = urllib.request.urlopen(f"http://{web}/metrics", timeout=10).read().decode()
    finally:
        up.send_signal(signal.SIGTERM)  # workers finish their running match (warm shutdown)
        up.wait(timeout=120)
        log.seek(0)
        output = log.read()
        log.close()
        print(output[-20000:])  # shown by pytest when the test failed

    assert opened < played / 2, f"{opened} database connections opened for {played} matches"
    # septet up supervises its children, so /healthz checks their processes too
    checks = {"processes": "ok", "database": "ok", "broker": "ok", "storage": "ok"}
    assert health == {"status": "ok", "checks": checks}
    assert re.search(r'^septet_matches\{status="finished"\} [1-9]', metrics, re.M)

    finished = _query(
        database,
        "select m.id, m.attempt, m.replay, m.worker, m.ratings_applied, m.duplicate_set, "
        "(select count(*) from matches_seat s where s.match_id = m.id) from matches_match m "
        "where m.status = 'finished' and m.rated order by m.id",
    )
    pending_sets = {
        name for (name,) in _query(database, "select duplicate_set from matches_match where status in "
                                             "('scheduled', 'running') and duplicate_set <> ''")
    }  # fmt: skip
    assert len(finished) >= WANTED_MATCHES
    replay_files = defaultdict(list)
    for path in (data / "replays").glob("*.json.gz"):
        replay_files[int(path.name.split("-a")[0])].append(path.name)
    for match_id, attempt, replay, _, applied, duplicate_set, seats in finished:
        assert replay_files[match_id] == [replay] == [f"{match_id}-a{attempt}.json.gz"], match_id
        waits_for_its_set = seats == 2 and duplicate_set in pending_sets  # rated once, with its set
        assert applied != waits_for_its_set, f"match {match_id}: ratings applied {applied}"
    overlapping = _query(
        database,
        "select a.id, b.id from matches_match a join matches_match b on a.duplicate_set = b.duplicate_set "
        "and a.id < b.id where a.duplicate_set <> '' and a.status = 'finished' and b.status = 'finished' "
        "and a.started < b.finished and b.started < a.finished",
    )
    assert overlapping == [], "two rotations of one deal played at the same time"
    workers = {row[3] for row in finished}
    assert {worker.split("@")[0] for worker in workers} == {"worker1", "worker2"}, "both workers played"
    assert all(not worker.endswith("@%h") for worker in workers)

    changes = _query(
        database,
        "select c.match_id, r.ladder_id, r.bot_version_id, c.rank from ladders_ratingchange c "
        "join ladders_rating r on r.id = c.rating_id order by c.id",
    )
    games_in_order: dict[tuple[int, int], list[tuple[tuple[int, int], int]]] = {}
    for match_id, ladder_id, version_id, rank in changes:
        games_in_order.setdefault((ladder_id, match_id), []).append(((ladder_id, version_id), rank))
    replayed = ratings.replay(games_in_order.values())
    stored = _query(database, "select ladder_id, bot_version_id, mu, sigma, games from ladders_rating")
    games_played = dict(
        ((ladder_id, version_id), count)
        for ladder_id, version_id, count in _query(
            database,
            "select m.ladder_id, s.bot_version_id, count(*) from matches_seat s join matches_match m "
            "on m.id = s.match_id where m.rated and m.ratings_applied group by m.ladder_id, s.bot_version_id",
        )
    )
    for ladder_id, version_id, mu, sigma, games in stored:
        belief = replayed.get((ladder_id, version_id), ratings.initial())  # made by matchmaking, unplayed
        assert (mu, sigma) == pytest.approx((belief.mu, belief.sigma), abs=1e-9), (ladder_id, version_id)
        assert games == games_played.get((ladder_id, version_id), 0)

    logged = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    recorded = [entry for entry in logged if entry.get("message") == "match recorded"]
    assert recorded and all(
        {"match_id", "attempt", "worker", "game", "seconds"} <= set(entry) for entry in recorded
    )
