"""`septet worker` refuses to start, with one line saying what to fix, on every kind of bad start:
no broker or database, a URL of the wrong kind, an unknown storage kind or queue, no concurrency,
a database that is not migrated, a broker that does not answer. Nothing is left behind: no data
folder made for a refused argument, no process running after it exits. (A worker host that plays
matches for a centre over the network: tests/cluster/test_cluster.py.)"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from platform_support import SEPTET, local_address

from septet_platform.addresses import hide_password

ROOT = Path(__file__).resolve().parents[2]


def _worker(*arguments: str, data: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("REDIS_URL", "DATABASE_URL", "SEPTET_STORAGE", "DJANGO_SETTINGS_MODULE")
    }
    return subprocess.run(
        [SEPTET, "worker", "--data", str(data), *arguments],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


BROKER_AND_DATABASE = "--broker redis://h/0 --database postgres://h/d"


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ("", "no broker: pass --broker"),
        ("--broker redis://127.0.0.1:6379/0", "no database: pass --database"),
        (
            "--broker http://centre/ --database postgres://h/d",
            "the broker URL http://centre/ has scheme 'http'",
        ),
        (
            "--broker redis://h/0 --database mysql://u:secret@h/d",
            "the database URL mysql://u:***@h/d has scheme",
        ),
        (f"{BROKER_AND_DATABASE} --storage nfs", "--storage 'nfs': expected one of database, local, s3"),
        (f"{BROKER_AND_DATABASE} --concurrency 0", "--concurrency 0: a worker plays at least one match"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_made(tmp_path: Path, arguments: str, said: str) -> None:
    data = tmp_path / "worker"
    done = _worker(*arguments.split(), data=data)
    assert done.returncode == 2, done.stderr
    assert f"septet worker: cannot start: {said}" in done.stderr
    assert "secret" not in done.stderr, "a password in a URL is never printed"
    assert not data.exists(), "a refused start makes no data folder"


def test_a_database_that_is_not_migrated_is_refused(tmp_path: Path) -> None:
    """What was tried: an empty SQLite database; the worker says the centre must migrate it, and
    writes nothing into it (it never migrates by itself)."""
    database = tmp_path / "empty.sqlite3"
    sqlite3.connect(database).close()
    done = _worker(
        "--broker", "redis://127.0.0.1:6379/15", "--database", f"sqlite:///{database}", "--wait", "5",
        data=tmp_path / "worker",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "the database is not migrated to this worker's version" in done.stderr
    with sqlite3.connect(database) as connection:
        tables = connection.execute("select name from sqlite_master where type = 'table'").fetchall()
    assert tables == [], f"the worker wrote to a database it refused: {tables}"


def test_a_broker_that_does_not_answer_is_waited_for_then_refused(tmp_path: Path) -> None:
    """What was tried: a migrated database and a broker port nobody listens on, with a 2 s wait;
    the worker says it waits, then that the broker did not answer, without the URL's password."""
    database = tmp_path / "migrated.sqlite3"
    env_database = f"sqlite:///{database}"
    done_migrate = subprocess.run(
        [sys.executable, "-m", "django", "migrate", "--verbosity", "0"],
        env={**os.environ, "DATABASE_URL": env_database, "PYTHONPATH": str(ROOT / "platform"),
             "DJANGO_SETTINGS_MODULE": "septet_platform.settings.local", "SEPTET_DATA_DIR": str(tmp_path)},
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done_migrate.returncode == 0, done_migrate.stderr
    host, port = local_address().rsplit(":", 1)
    broker = f"redis://:hunter2@{host}:{port}/0"
    done = _worker("--broker", broker, "--database", env_database, "--wait", "2", data=tmp_path / "worker")
    assert done.returncode == 2, done.stderr
    assert "septet worker: waiting for the broker" in done.stderr
    assert "cannot start: the broker did not answer within 2 s" in done.stderr
    assert "hunter2" not in done.stderr
    assert hide_password(broker) == f"redis://:***@{host}:{port}/0"
