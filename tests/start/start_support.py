"""The README's start command as the tests start it: on free ports, in a folder of the test's own,
its children found from its pid (never by name), stopped by a signal with nothing left behind; and
a browser page watched for console errors, failed requests and error answers."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any

from process_tree import descendants, left_after, running_from

ROOT = Path(__file__).resolve().parents[2]
START = ["bash", str(ROOT / "scripts" / "start")]
SEPTET = str(ROOT / ".venv" / "bin" / "septet")
STARTED = re.compile(r"septet up: started (\w+) \(pid (\d+)\)")
READY = re.compile(r"septet up: ready in \d+ s")
WIDTHS = (1280, 390)
STYLESHEET = "/static/web/site.css"


def free_address(host: str = "127.0.0.1") -> str:
    """`host:port` with a port nobody listens on at `host` now."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return f"{host}:{probe.getsockname()[1]}"


def clean_environment() -> dict[str, str]:
    """This process's environment without anything that would choose for the command: the
    embedded defaults, and whatever settings module the command picks itself."""
    removed = ("REDIS_URL", "DATABASE_URL", "DJANGO_SETTINGS_MODULE", "SECRET_KEY", "DEBUG")
    return {key: value for key, value in os.environ.items() if key not in removed}


@dataclass
class Started:
    """One run of a start command: its process, addresses, data folder and everything it printed."""

    process: subprocess.Popen[str]
    web: str
    arena: str
    data: Path
    log: Path

    @property
    def children(self) -> dict[str, int]:
        """Each child's pid now, by name: the last `started` line of each (a child that died and
        was restarted, by a test that kills one on purpose, say, is named with its new pid)."""
        return {name: int(pid) for name, pid in STARTED.findall(self.said())}

    def said(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_until(self, pattern: re.Pattern[str], seconds: float) -> re.Match[str]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = pattern.search(self.said())
            if found:
                return found
            exited = self.process.poll()
            assert exited is None, f"the command exited ({exited}):\n{self.said()}"
            time.sleep(1)
        raise AssertionError(f"no {pattern.pattern!r} within {seconds:.0f} s:\n{self.said()}")

    def stop(self, signum: int = signal.SIGTERM) -> None:
        """`signum` (SIGTERM, as a service manager sends), then every process it started is gone:
        its children and theirs (bots, sandboxes, gunicorn's workers), found from its pid, and
        anything still running from its data folder."""
        started = descendants(self.process.pid)
        if self.process.poll() is None:
            self.process.send_signal(signum)
            try:
                self.process.wait(timeout=90)
            except subprocess.TimeoutExpired:  # it ignored the signal: stop what it started, then fail
                for pid, _ in descendants(self.process.pid) | started:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                self.process.kill()
                self.process.wait()
                raise AssertionError(
                    f"the command went on for 90 s after {signal.Signals(signum).name}"
                ) from None
        assert left_after(started, 10) == set(), "every process the command started has ended"
        assert running_from(self.data) == [], "nothing runs from its data folder"


def start(
    command: list[str],
    folder: Path,
    *words: str,
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
    as_background_job: bool = False,
    arena_host: str = "127.0.0.1",
) -> Started:
    """`as_background_job`: with SIGINT and SIGQUIT ignored, as a shell without job control
    starts `command &` (a shell sets them so and execs the command: a preexec_fn would fork this
    process, whose gRPC threads abort in the child). `arena_host`: the address the Arena listens
    on (a test's own veth address, for a bot in a network namespace to reach)."""
    web, arena = free_address(), free_address(arena_host)
    data, log = folder / "data", folder / "start.log"
    shell = ["bash", "-c", "trap '' INT QUIT; exec \"$@\"", "bash"] if as_background_job else []
    process = subprocess.Popen(
        [*shell, *command, "--data", str(data), "--web", web, "--arena", arena, *words],
        env=env if env is not None else clean_environment(), cwd=cwd,
        stdout=log.open("w"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    return Started(process, web, arena, data, log)


def demo_api_token(started: Started) -> str:
    """The demo account's API token, as the ready message prints it."""
    found = re.search(r"demo API token\s+(sep_\S+)", started.said())
    assert found, "the ready message prints the demo account's API token"
    return found[1]


@dataclass(frozen=True)
class SeatRow:
    """One seat of a bot's match, read from the command's database (not through the code under
    test): the match's id, status and kind, and how the seat ended."""

    match_id: int
    status: str
    kind: str
    forfeit_status: str
    forfeit_reason: str


def seats_of(data: Path, bot: str, kind: str | None = None) -> list[SeatRow]:
    """Every seat of `bot` in a match (of `kind` only, when given: a connected self-hosted bot
    also plays on its game's open ladder meanwhile), oldest match first."""
    with sqlite3.connect(f"file:{data / 'septet.sqlite3'}?mode=ro", uri=True, timeout=5) as connection:
        rows = connection.execute(
            "select m.id, m.status, m.kind, s.forfeit_status, s.forfeit_reason from matches_seat s"
            " join matches_match m on m.id = s.match_id"
            " join bots_botversion v on v.id = s.bot_version_id join bots_bot b on b.id = v.bot_id"
            " where b.name = ? and (? is null or m.kind = ?) order by m.id",
            [bot, kind, kind],
        ).fetchall()
    return [SeatRow(*row) for row in rows]


def environment_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(entry.decode(errors="replace").split("=", 1) for entry in raw if b"=" in entry)


def get(url: str) -> tuple[int, Message, str]:
    """A GET's status, headers (looked up by name in any case, as HTTP means them: the site's server
    sends them in lower case) and body, whatever the status."""
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            return response.status, response.headers, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode("utf-8", "replace")


def finished_match(data: Path) -> int | None:
    """A finished match whose replay is published (its whole duplicate set is over), read from the
    command's own database (not through the site)."""
    database = data / "septet.sqlite3"
    if not database.exists():
        return None
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as connection:
            row = connection.execute(
                "select id from matches_match m where status = 'finished' and not exists ("
                " select 1 from matches_match o where o.duplicate_set = m.duplicate_set"
                " and o.ladder_id is m.ladder_id and o.tournament_id is m.tournament_id"
                " and o.status in ('scheduled', 'running')) order by id limit 1"
            ).fetchone()
    except sqlite3.OperationalError:
        return None
    return int(row[0]) if row else None


class PageWatch:
    """Every console error, page error, failed request and error response of one browser page."""

    def __init__(self, page: Any) -> None:
        self.problems: list[str] = []
        page.on("console", lambda message: message.type == "error" and self.problems.append(message.text))
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("requestfailed", lambda request: self.problems.append(f"failed: {request.url}"))
        page.on("response", self._response)

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.problems.append(f"{response.status} {response.url}")


def artifacts() -> Path:
    folder = Path(os.environ.get("SEPTET_ARTIFACTS_DIR") or ROOT / "var" / "artifacts") / "start"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def styled(page: Any) -> bool:
    """The site's stylesheet is loaded and applied: at least one rule from /static/, and the body
    no longer in the browser's default serif at 8 px margins."""
    return bool(
        page.evaluate(
            """() => {
              const sheets = [...document.styleSheets].filter(s => (s.href || '').includes('/static/'));
              const count = s => { try { return s.cssRules.length; } catch (e) { return 0; } };
              const rules = sheets.reduce((n, s) => n + count(s), 0);  // a sheet that failed: none
              const body = getComputedStyle(document.body);
              return rules > 0 && !(body.fontFamily.includes('Times') && body.margin === '8px');
            }"""
        )
    )


def sign_in(page: Any, web: str, password: str) -> None:
    page.goto(f"http://{web}/account/sign-in/")
    page.fill("input[name=username]", "demo")
    page.fill("input[name=password]", password)
    page.locator("form button[type=submit], form input[type=submit]").last.click()
    page.wait_for_load_state("networkidle")
    assert "/account/sign-in/" not in page.url, "the demo account signs in with the printed password"


@dataclass
class Platform:
    """The README's command started and ready: its run, the demo account's password, and a
    finished rated match whose replay is published."""

    started: Started
    password: str
    match_id: int
