"""The part of benchmarks/match_cost.py that runs inside the platform's own processes.

It is imported from the tree being measured (the working tree, or an older commit unpacked for
the "before" side), so it uses only names both sides have, and measures without changing what it
measures:

- as the Celery app module of the worker (`celery -A match_cost_worker worker ...`): the
  platform's app, plus counters in each pool process: database statements (a Django execute
  wrapper on every connection), bot starts, and the thread CPU time spent in each step of a match
  (claim, bot starts, the referee, record, ratings; each step's own time, nested steps taken
  out), dumped as JSON when the process stops; optionally a cProfile of the whole process;
- as a command, run by the driver with the side's environment:
  `python match_cost_worker.py prepare` migrates, makes the ladders and qualifies the example
  bots as house bots as `septet up` does, and prints the ladders and bots as JSON;
  `python match_cost_worker.py insert` reads matches (game, seed, duplicate set, rotation, bot
  names by seat) as JSON on stdin, creates them SCHEDULED and prints their ids.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "septet_platform.settings.prod")

from septet_platform.celery import app

__all__ = ["app"]

OUT_DIR = os.environ.get("MATCH_COST_OUT", "")
PROFILE = os.environ.get("MATCH_COST_PROFILE", "") == "1"
WARMUP_IDS = frozenset(int(word) for word in os.environ.get("MATCH_COST_WARMUP_IDS", "").split(",") if word)
"""Matches of the warm-up: after each, the counters so far are written (the driver takes them out
of the measured window's); nothing is written during the window itself."""
STEPS = {
    "match_claim": "claim",
    "_claimed": "claim",  # the claim with the match's row read back (match_claim wraps it)
    "_players": "bot starts",
    "play_match": "referee",
    "_seat_logs": "bots after the match",
    "_bots_done": "bots after the match",
    "match_record": "record",
    "ratings_apply": "ratings",
}
"""Functions of septet_platform.matches.services timed as steps (by their module-level name, so
a call from inside the module is timed too), and the step each counts towards; names a side's tree
does not have are left out."""


class Counters:
    """What one pool process counted; thread-safe (the lease keeper queries from its thread)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.statements: dict[str, int] = {}
        self.steps: dict[str, float] = {}
        self.tasks: dict[str, list[float]] = {}  # name -> [count, thread CPU seconds]
        self.bot_starts = 0
        self.local = threading.local()

    def statement(self, sql: str) -> None:
        verb = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else "?"
        with self.lock:
            self.statements[verb] = self.statements.get(verb, 0) + 1

    def timed(self, step: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """`function` with its thread CPU time added to `step`, minus that of timed steps inside."""

        def run(*args: Any, **kwargs: Any) -> Any:
            stack = self.local.__dict__.setdefault("stack", [])
            stack.append(0.0)  # CPU time of the timed steps nested in this one
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent = time.thread_time() - started
                inner = stack.pop()
                if stack:
                    stack[-1] += spent
                with self.lock:
                    self.steps[step] = self.steps.get(step, 0.0) + spent - inner

        run.__wrapped__ = function  # type: ignore[attr-defined]
        return run

    def dump(self) -> dict[str, Any]:
        with self.lock:
            return {
                "statements": dict(self.statements),
                "steps": dict(self.steps),
                "tasks": {name: list(values) for name, values in self.tasks.items()},
                "bot_starts": self.bot_starts,
            }


COUNTERS = Counters()
_task_started: dict[str, float] = {}
_profiler: Any = None


def _count_statements(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
    COUNTERS.statement(sql)
    return execute(sql, params, many, context)


def _install() -> None:
    """Counts every statement of every connection this process opens, and times the steps."""
    from django.db.backends.signals import connection_created

    from septet_platform.matches import services

    if getattr(services, "_match_cost_counted", False):
        return
    services._match_cost_counted = True  # type: ignore[attr-defined]

    def counted(sender: Any, connection: Any, **_: Any) -> None:
        if _count_statements not in connection.execute_wrappers:
            connection.execute_wrappers.append(_count_statements)

    connection_created.connect(counted, weak=False)
    for name, step in STEPS.items():
        function = getattr(services, name, None)
        if function is not None and not hasattr(function, "__wrapped__"):
            setattr(services, name, COUNTERS.timed(step, function))
    launch = getattr(services, "launch_bot", None)
    if launch is not None:

        def launch_counted(*args: Any, **kwargs: Any) -> Any:
            with COUNTERS.lock:
                COUNTERS.bot_starts += 1
            return launch(*args, **kwargs)

        services.launch_bot = launch_counted


def _on_process_init(**_: Any) -> None:
    global _profiler
    _install()
    if PROFILE:
        import cProfile

        _profiler = cProfile.Profile(time.thread_time)  # CPU of the task's thread, not wall time
        _profiler.enable()


def _on_task_prerun(task_id: str = "", **_: Any) -> None:
    _task_started[task_id] = time.thread_time()


def _on_task_postrun(task_id: str = "", task: Any = None, args: Any = None, **_: Any) -> None:
    started = _task_started.pop(task_id, None)
    if started is None:
        return
    name = getattr(task, "name", "?")
    with COUNTERS.lock:
        entry = COUNTERS.tasks.setdefault(name, [0, 0.0])
        entry[0] += 1
        entry[1] += time.thread_time() - started
    if OUT_DIR and args and args[0] in WARMUP_IDS:
        (Path(OUT_DIR) / f"counters-{os.getpid()}.warmup.json").write_text(json.dumps(COUNTERS.dump()))


def _on_process_shutdown(**_: Any) -> None:
    """Writes this process's counters (and profile) where the driver reads them."""
    if not OUT_DIR:
        return
    pid = os.getpid()
    if _profiler is not None:
        _profiler.disable()
        _profiler.dump_stats(str(Path(OUT_DIR) / f"profile-{pid}.pstats"))
    (Path(OUT_DIR) / f"counters-{pid}.json").write_text(json.dumps(COUNTERS.dump()))


def _on_worker_ready(**_: Any) -> None:
    """The threads pool plays in this process: counted from here (a prefork pool's processes,
    forked before, count in their own)."""
    _install()
    if OUT_DIR:
        (Path(OUT_DIR) / "ready").write_text(str(os.getpid()))


def _connect_signals() -> None:
    from celery import signals

    signals.worker_process_init.connect(_on_process_init, weak=False)
    signals.worker_process_shutdown.connect(_on_process_shutdown, weak=False)
    signals.worker_shutdown.connect(_on_process_shutdown, weak=False)
    signals.task_prerun.connect(_on_task_prerun, weak=False)
    signals.task_postrun.connect(_on_task_postrun, weak=False)
    signals.worker_ready.connect(_on_worker_ready, weak=False)


_connect_signals()


# Commands run by the driver -------------------------------------------------------------------


def prepare() -> dict[str, Any]:
    """What `septet up` prepares, from this tree: migrations, one ladder per game, the example bots
    submitted as house bots and qualified (built once, in the sandbox). Packs each example from
    a copy in MATCH_COST_EXAMPLES when set (so a build's node_modules is not left in the tree)."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from septet_platform import launcher
    from septet_platform.bots.models import Bot, BotVersion
    from septet_platform.bots.qualification import bot_version_qualify
    from septet_platform.bots.services import bot_version_submit
    from septet_platform.ladders.services import ladders_ensure

    pack_folder = _pack_folder()
    call_command("migrate", verbosity=0)
    ladders = ladders_ensure()
    owner, _ = get_user_model().objects.get_or_create(username="house")
    examples = Path(os.environ.get("MATCH_COST_EXAMPLES") or Path(launcher.ROOT) / "bots" / "examples")
    active, failed = [], {}
    if not hasattr(launcher, "EXAMPLES"):  # a tree with septet_platform.house: as `septet up` does
        from septet_platform import house

        house.house_bots_ensure(examples, say=lambda line: print(line, file=sys.stderr))
        for version in BotVersion.objects.filter(bot__is_house=True).select_related("bot"):
            if version.status == BotVersion.Status.ACTIVE:
                active.append(version.bot.name)
            else:
                failed[version.bot.name] = f"{version.status}: {version.error_log[-1500:]}"
    for name in getattr(launcher, "EXAMPLES", ()):
        version = bot_version_submit(owner=owner, archive=pack_folder(examples / name, build_first=True))
        Bot.objects.filter(pk=version.bot_id).update(is_house=True)
        version = bot_version_qualify(version_id=version.pk)
        if version.status == BotVersion.Status.ACTIVE:
            active.append(name)
        else:
            failed[name] = f"{version.status}: {version.error_log[-1500:]}"
    return {
        "ladders": [[ladder.game, ladder.min_players, ladder.max_players] for ladder in ladders],
        "bots": active,
        "failed": failed,
    }


def _pack_folder() -> Callable[..., bytes]:
    try:
        from referee.tools.packing import pack_folder
    except ImportError:  # a tree from before referee/ was split into engine, botkit and tools
        from referee.packing import pack_folder  # type: ignore[no-redef]
    return pack_folder


def insert(specs: list[dict[str, Any]]) -> list[int]:
    """Creates SCHEDULED rated ladder matches from `specs` in one transaction; their ids in order."""
    import django

    django.setup()
    from django.db import transaction

    from septet_platform.bots.models import BotVersion
    from septet_platform.ladders.models import Ladder
    from septet_platform.matches.models import Match, Seat

    versions = {
        version.bot.name: version
        for version in BotVersion.objects.filter(status=BotVersion.Status.ACTIVE).select_related("bot")
    }
    ladders = {ladder.game: ladder for ladder in Ladder.objects.filter(pool=Ladder.Pool.SANDBOXED)}
    ids = []
    with transaction.atomic():
        for spec in specs:
            match = Match.objects.create(
                ladder=ladders[spec["game"]],
                seed=spec["seed"],
                duplicate_set=spec["set"],
                rotation=spec["rotation"],
            )
            Seat.objects.bulk_create(
                Seat(match=match, seat=number, bot_version=versions[name])
                for number, name in enumerate(spec["seats"])
            )
            ids.append(match.pk)
    return ids


def main(argv: list[str]) -> int:
    if argv == ["prepare"]:
        print(json.dumps(prepare()))
        return 0
    if argv == ["insert"]:
        print(json.dumps(insert(json.load(sys.stdin))))
        return 0
    print("usage: match_cost_worker.py prepare | insert < matches.json", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
