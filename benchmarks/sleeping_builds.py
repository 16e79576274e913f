"""Two builds that sleep, against `septet up`: ladder matches finished per minute and another user's
qualification time, without and with them, and the ratio.

It starts `septet up` (its embedded SQLite and Redis unless DATABASE_URL / REDIS_URL are set) in
a fresh data folder on free ports, waits until ladder matches are flowing and plays on for a
warm-up. Then, over a window of `--seconds` each:

- without: ladder matches finished, while one user submits a plain bot (a copy of the random
  example: nothing to build) over the Arena and it qualifies;
- with: two other users have each just submitted a bot whose build sleeps `--sleep` seconds (then
  fails: no qualifying games follow; both builds running at once: `--build-workers`, default 2,
  is the builder's pool); the same is measured again with a second plain bot;
- without again, once the builds are over, with a third: the ratio is the attacked window's
  figure over the mean of the two calm ones (a platform's pace drifts as it plays on).

The attack of issue 25's audit: before builds had a pool of their own, the two sleeping builds
held both of a worker's slots, no match finished while they slept and the plain bot waited for
them. `--before REF` runs the same against an older commit first (unpacked with git archive, with
a copy of this environment pointing at it, as match_cost.py does), so both sides print.

    python benchmarks/sleeping_builds.py [--seconds 60] [--sleep 150] [--warmup 30]
                                         [--build-workers 2] [--before REF]

About 7-8 minutes a side on two cores (the house bots qualify first).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# benchmarks/referee.py shares its name with the package used here: keep this folder off the path.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

import grpc  # noqa: E402

from referee.botkit.protocol import arena_pb2 as pb  # noqa: E402
from referee.botkit.protocol import arena_pb2_grpc  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "bots" / "examples" / "random"
STARTUP_LIMIT_SECONDS = 600.0
QUALIFY_LIMIT_SECONDS = 600.0
FINISHED_LADDER_MATCHES = "select count(*) from matches_match where kind = 'ladder' and status = 'finished'"
USERS_SCRIPT = """
import json, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from septet_platform.accounts.services import api_token_create
tokens = {}
for name in sys.argv[1:]:
    user, _ = get_user_model().objects.get_or_create(username=name)
    tokens[name] = api_token_create(user=user, name="benchmark")[1]
print(json.dumps(tokens))
"""


@dataclass(frozen=True)
class Phase:
    """What one window measured: ladder matches finished per minute, how long the plain bot took
    from its submission to ACTIVE, and how many builds still slept when the window closed."""

    ladder_per_minute: float
    qualify_seconds: float
    sleeping_at_end: int = 0
    cores_busy: float = 0.0
    """The whole machine's cores in use on average over the window (others' work shows here)."""


class Platform:
    """A running `septet up` of one side (its interpreter and tree), and how to read its database."""

    def __init__(self, python: str, tree: Path, data: Path, build_workers: int) -> None:
        self.python, self.tree, self.data = python, tree, data
        self.arena = f"127.0.0.1:{_free_port()}"
        env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
        env["SEPTET_BUILD_WORKERS"] = str(build_workers)
        self.env = env
        self.log = data / "up.log"
        command = [python, "-c", "import sys; from referee.tools.cli import main; sys.exit(main())", "up"]
        command += ["--data", str(data), "--web", f"127.0.0.1:{_free_port()}", "--arena", self.arena]
        with self.log.open("wb") as output:
            self.up = subprocess.Popen(command, env=env, cwd=tree, stdout=output, stderr=subprocess.STDOUT)

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        """One read-only query on the platform's database (no rows until it is migrated)."""
        url = self.env.get("DATABASE_URL")
        if url:
            import psycopg

            try:
                with psycopg.connect(url.replace("postgres://", "postgresql://", 1)) as connection:
                    return list(connection.execute(sql).fetchall())
            except psycopg.errors.UndefinedTable:
                return []
        database = self.data / "septet.sqlite3"
        if not database.exists():
            return []
        try:
            with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10) as connection:
                return connection.execute(sql).fetchall()
        except sqlite3.OperationalError:  # not migrated yet
            return []

    def ladder_finished(self) -> int:
        rows = self.query(FINISHED_LADDER_MATCHES)
        return int(rows[0][0]) if rows else 0

    def version(self, bot: str) -> tuple[str, str] | None:
        """(status, build status) of the bot's version 1; None before it is stored."""
        rows = self.query(
            "select v.status, v.build_status from bots_botversion v join bots_bot b on b.id = v.bot_id "
            f"where b.name = '{bot}' and v.number = 1"  # our own names: letters, digits, hyphens
        )
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    def tokens(self, *users: str) -> dict[str, str]:
        """An API token for each of `users` (made once the platform has migrated its database)."""
        env = {
            **self.env,
            "DJANGO_SETTINGS_MODULE": "septet_platform.settings.local",
            "SEPTET_DATA_DIR": str(self.data),
            "SEPTET_SECRET_KEY_FILE": str(self.data / "secret_key"),
            "PYTHONPATH": str(self.tree / "platform"),
        }
        done = subprocess.run(
            [self.python, "-c", USERS_SCRIPT, *users], env=env, cwd=self.tree, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"cannot make the benchmark's users:\n{done.stderr[-3000:]}")
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))

    def alive(self) -> None:
        if self.up.poll() is not None:
            raise SystemExit(
                f"septet up exited with code {self.up.returncode}:\n{self.log.read_text()[-3000:]}"
            )

    def stop(self) -> None:
        self.up.send_signal(signal.SIGTERM)
        try:
            self.up.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.up.kill()
            self.up.wait()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _archive(name: str, build: list[str] | None = None) -> bytes:
    """The random example named `name`, with `build` as its build (none: nothing to build)."""
    import io
    import tarfile

    manifest = (RANDOM_BOT / "septet-bot.toml").read_text().replace('name = "random"', f'name = "{name}"')
    if build:
        manifest += f"build = {json.dumps(build)}\n"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(RANDOM_BOT.iterdir()):
            if path.is_file() and path.name != "septet-bot.toml":
                archive.add(path, arcname=path.name)
        data = manifest.encode()
        info = tarfile.TarInfo("septet-bot.toml")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _submit(arena: arena_pb2_grpc.ArenaStub, token: str, name: str, build: list[str] | None = None) -> None:
    chunks = iter([pb.SubmitBotChunk(data=_archive(name, build))])
    arena.SubmitBot(chunks, metadata=[("authorization", f"Bearer {token}")], timeout=60)


def _until(platform: Platform, condition: Callable[[], Any], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        platform.alive()
        if time.monotonic() > deadline:
            raise SystemExit(f"not within {seconds:.0f} s: {what}\n{platform.log.read_text()[-3000:]}")
        time.sleep(0.2)


def _phase(
    platform: Platform,
    arena: arena_pb2_grpc.ArenaStub,
    token: str,
    bot: str,
    seconds: float,
    sleeping: Callable[[], int] = lambda: 0,
) -> Phase:
    """Ladder matches finished over `seconds` from when `bot` (nothing to build) is submitted, and
    how long it takes to qualify (waited for past the window if need be)."""
    begin, finished_before, ticks_before = time.monotonic(), platform.ladder_finished(), _cpu_ticks()
    _submit(arena, token, bot)
    qualified: float | None = None
    finished_after: int | None = None
    sleeping_at_end, cores_busy = 0, 0.0
    while qualified is None or finished_after is None:
        platform.alive()
        now = time.monotonic()
        if qualified is None and (platform.version(bot) or ("",))[0] == "active":
            qualified = now - begin
        if finished_after is None and now - begin >= seconds:
            finished_after = platform.ladder_finished()
            sleeping_at_end = sleeping()
            busy, total = (after - before for after, before in zip(_cpu_ticks(), ticks_before, strict=True))
            cores_busy = busy / max(total, 1) * (os.cpu_count() or 1)
        if now - begin > QUALIFY_LIMIT_SECONDS:
            raise SystemExit(f"{bot} did not qualify within {QUALIFY_LIMIT_SECONDS:.0f} s")
        time.sleep(0.2)
    return Phase((finished_after - finished_before) * 60 / seconds, qualified, sleeping_at_end, cores_busy)


def _cpu_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine so far, from /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def run_side(label: str, python: str, tree: Path, args: argparse.Namespace) -> tuple[Phase, Phase, Phase]:
    """The three windows on a fresh `septet up` of one side: without the sleeping builds, with
    them, and without them again once they are over (the ladder's pace drifts as a platform plays
    on, so the calm windows bracket the attacked one)."""
    data = Path(tempfile.mkdtemp(prefix="septet-sleeping-builds-"))
    platform = Platform(python, tree, data, args.build_workers)
    sleepers = ("sleeper-one", "sleeper-two")

    def sleeping() -> int:
        return sum((platform.version(bot) or ("", ""))[1] == "building" for bot in sleepers)

    def decided() -> bool:  # the builds fail once they have slept: no qualifying games follow
        return all((platform.version(bot) or ("",))[0] == "failed" for bot in sleepers)

    try:
        print(f"{label}: starting septet up ({tree})", file=sys.stderr)
        flowing = "ladder matches flow"
        _until(platform, lambda: platform.ladder_finished() >= 10, STARTUP_LIMIT_SECONDS, flowing)
        tokens = platform.tokens("carol", *(f"mallory-{number}" for number in (1, 2)))
        time.sleep(args.warmup)
        with grpc.insecure_channel(platform.arena) as channel:
            arena = arena_pb2_grpc.ArenaStub(channel)
            print(f"{label}: without sleeping builds, {args.seconds:.0f} s", file=sys.stderr)
            calm = _phase(platform, arena, tokens["carol"], "plain-calm", args.seconds)
            build = ["sh", "-c", f"sleep {args.sleep:g}; exit 1"]
            for number, bot in enumerate(sleepers, start=1):  # two users: one build each at a time
                _submit(arena, tokens[f"mallory-{number}"], bot, build)
            _until(platform, lambda: sleeping() >= min(2, args.build_workers), 60, "the builds sleep")
            print(f"{label}: {sleeping()} builds sleeping {args.sleep:.0f} s", file=sys.stderr)
            attacked = _phase(platform, arena, tokens["carol"], "plain-attacked", args.seconds, sleeping)
            _until(platform, decided, 3 * args.sleep + 60, "the sleeping builds end")
            print(f"{label}: without sleeping builds again, {args.seconds:.0f} s", file=sys.stderr)
            after = _phase(platform, arena, tokens["carol"], "plain-after", args.seconds)
        if attacked.sleeping_at_end == 0:
            print(f"{label}: warning: no build slept any more when the window closed", file=sys.stderr)
        return calm, attacked, after
    finally:
        platform.stop()
        shutil.rmtree(data, ignore_errors=True)


def unpack_commit(reference: str, target: Path) -> Path:
    """The tree of `reference` (a commit of this repository), unpacked with git archive."""
    target.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", reference], capture_output=True
    )
    if archive.returncode != 0:
        raise SystemExit(f"--before {reference}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def environment_for(tree: Path, target: Path) -> str:
    """This environment with `tree`'s packages, as match_cost.py makes it for its --before side
    (loaded from its file: this folder is kept off sys.path)."""
    spec = importlib.util.spec_from_file_location("match_cost", Path(__file__).with_name("match_cost.py"))
    assert spec is not None and spec.loader is not None
    match_cost = sys.modules.setdefault("match_cost", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(match_cost)  # registered first: its dataclasses look their module up
    return str(match_cost.environment_for(tree, target))


def _print(label: str, calm: Phase, attacked: Phase, after: Phase) -> None:
    """One side's table: the windows, and the attacked one against the mean of the calm two."""
    print(f"{label}")
    print(f"  {'':34} {'without':>8} {'with two sleeping builds':>25} {'without again':>14} {'ratio':>6}")
    phases = (calm, attacked, after)
    rows = (
        ("ladder matches finished per minute", [phase.ladder_per_minute for phase in phases]),
        ("plain bot qualified in (s)", [phase.qualify_seconds for phase in phases]),
    )
    for name, (without, with_sleepers, again) in rows:
        mean = (without + again) / 2
        ratio = with_sleepers / mean if mean else float("nan")
        print(f"  {name:34} {without:8.1f} {with_sleepers:25.1f} {again:14.1f} {ratio:6.2f}")
    busy = [phase.cores_busy for phase in phases]
    machine = f"machine: cores busy (of {os.cpu_count()})"
    print(f"  {machine:34} {busy[0]:8.2f} {busy[1]:25.2f} {busy[2]:14.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="each measured window (default: 60)")
    parser.add_argument("--sleep", type=float, default=150.0, help="the builds' sleep, s (default: 150)")
    parser.add_argument(
        "--warmup", type=float, default=30.0, help="play before the first window (default: 30)"
    )
    parser.add_argument("--build-workers", type=int, default=2, help="the builder's pool (default: 2)")
    parser.add_argument("--before", metavar="REF", help="an older commit to measure first")
    args = parser.parse_args()
    results: list[tuple[str, Phase, Phase, Phase]] = []
    if args.before:
        folder = Path(tempfile.mkdtemp(prefix="septet-sleeping-builds-before-"))
        try:
            tree = unpack_commit(args.before, folder / "tree")
            python = environment_for(tree, folder / "venv")
            results.append((f"before ({args.before})", *run_side("before", python, tree, args)))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    results.append(("this tree", *run_side("this tree", sys.executable, ROOT, args)))
    for label, *phases in results:
        _print(label, *phases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
