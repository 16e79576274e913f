"""The product as the README starts it: `bash scripts/start` itself, on free ports and its own data
folder, looked at in Debian's chromium the way a newcomer sees it.

The settings the tests choose are not the settings the command chooses: a fixture that builds the
site its own way can pass while the command serves every page unstyled with DEBUG on. So nothing
here configures the site: the command does, and the tests read what its children actually run with
(their environment in /proc) and what its pages actually load (every request, every console
message). Screenshots of every page at both widths go to $SEPTET_ARTIFACTS_DIR (default
var/artifacts/start/ in the repository) for a person to look at.
"""

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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from process_tree import descendants, left_after, running_from

ROOT = Path(__file__).resolve().parents[2]
START = ["bash", str(ROOT / "scripts" / "start")]
SEPTET = str(ROOT / ".venv" / "bin" / "septet")
STARTED = re.compile(r"septet up: started (\w+) \(pid (\d+)\)")
READY = re.compile(r"septet up: ready in \d+ s")
WIDTHS = (1280, 390)
STYLESHEET = "/static/web/site.css"

pytestmark = [pytest.mark.slow]


def _free_address() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def _clean_environment() -> dict[str, str]:
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
    children: dict[str, int] = field(default_factory=dict)

    def said(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_until(self, pattern: re.Pattern[str], seconds: float) -> re.Match[str]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = pattern.search(self.said())
            if found:
                self.children = {name: int(pid) for name, pid in STARTED.findall(self.said())}
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


def _start(
    command: list[str],
    folder: Path,
    *words: str,
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
    as_background_job: bool = False,
) -> Started:
    """`as_background_job`: with SIGINT and SIGQUIT ignored, as a shell without job control
    starts `command &` (a shell sets them so and execs the command: a preexec_fn would fork this
    process, whose gRPC threads abort in the child)."""
    web, arena = _free_address(), _free_address()
    data, log = folder / "data", folder / "start.log"
    shell = ["bash", "-c", "trap '' INT QUIT; exec \"$@\"", "bash"] if as_background_job else []
    process = subprocess.Popen(
        [*shell, *command, "--data", str(data), "--web", web, "--arena", arena, *words],
        env=env if env is not None else _clean_environment(), cwd=cwd,
        stdout=log.open("w"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    return Started(process, web, arena, data, log)


def _environment_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(entry.decode(errors="replace").split("=", 1) for entry in raw if b"=" in entry)


def _get(url: str) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            return response.status, dict(response.headers), response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode("utf-8", "replace")


def _finished_match(data: Path) -> int | None:
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


# The README's command, once for the module ----------------------------------------------------


@dataclass
class Platform:
    started: Started
    password: str
    match_id: int


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """`bash scripts/start` exactly as the README gives it, with the example bots; once it is ready
    and a rated match has finished."""
    started = _start(START, tmp_path_factory.mktemp("start"))
    try:
        started.wait_until(READY, 600)
        password = re.search(r"sign in\s+demo, password (\S+)", started.said())
        assert password, f"the ready message gives the demo account's password:\n{started.said()}"
        deadline = time.monotonic() + 300
        while (match_id := _finished_match(started.data)) is None:
            assert time.monotonic() < deadline, "a rated match finishes within 5 minutes of the start"
            assert started.process.poll() is None, started.said()
            time.sleep(2)
        yield Platform(started, password[1], match_id)
    finally:
        started.stop()


def test_every_child_of_the_readme_command_runs_the_debug_off_settings(platform: Platform) -> None:
    children = platform.started.children
    assert {"web", "worker1", "beat", "arena"} <= set(children), children
    for name, pid in children.items():
        if name == "redis":
            continue
        module = _environment_of(pid).get("DJANGO_SETTINGS_MODULE")
        assert module == "septet_platform.settings.local", f"{name} runs {module}"


def test_a_missing_page_is_the_sites_own_404_with_a_content_security_policy(platform: Platform) -> None:
    status, headers, body = _get(f"http://{platform.started.web}/no-such-page/")
    assert status == 404
    assert "URLconf" not in body and "DEBUG = True" not in body, "Django's technical 404 (DEBUG on)"
    assert 'href="/static/' in body, "the site's own 404 page, with its stylesheet"
    for path in ("/", "/no-such-page/", "/ladders/oh-hell/"):  # every document (not the static files)
        _, headers, _ = _get(f"http://{platform.started.web}{path}")
        assert "default-src 'self'" in headers.get("Content-Security-Policy", ""), path


def test_static_files_are_served(platform: Platform) -> None:
    for path in ("/static/septet-viewer/viewer.js", "/static/septet-viewer/viewer.css", STYLESHEET):
        status, _, body = _get(f"http://{platform.started.web}{path}")
        assert status == 200 and body, path


ANONYMOUS_PAGES = (
    "/",
    "/ladders/",
    "/ladders/oh-hell/",
    "/bots/montecarlo/",
    "/matches/",
    "/ratings/",
    "/rules/",
    "/rules/oh7-advanced/",
    "/docs/",
    "/docs/bots/",
    "/tournaments/",
    "/account/sign-in/",
    "/account/sign-up/",
)
OWNER_PAGES = ("/account/bots/", "/account/tokens/", "/account/upload/", "/challenges/", "/bots/random/")


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


def _artifacts() -> Path:
    folder = Path(os.environ.get("SEPTET_ARTIFACTS_DIR") or ROOT / "var" / "artifacts") / "start"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _styled(page: Any) -> bool:
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


def _sign_in(page: Any, web: str, password: str) -> None:
    page.goto(f"http://{web}/account/sign-in/")
    page.fill("input[name=username]", "demo")
    page.fill("input[name=password]", password)
    page.locator("form button[type=submit], form input[type=submit]").last.click()
    page.wait_for_load_state("networkidle")
    assert "/account/sign-in/" not in page.url, "the demo account signs in with the printed password"


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_loads_styled_with_no_error_at_both_widths(
    platform: Platform, browser: Any, width: int
) -> None:
    web = platform.started.web
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        watch = PageWatch(page)
        visited: dict[str, list[str]] = {}
        for path in (*ANONYMOUS_PAGES, f"/matches/{platform.match_id}/"):
            visited[path] = _visit(page, watch, web, path, width)
        broken = {path: problems for path, problems in visited.items() if problems}
        assert broken == {}, f"console errors, failed requests or unstyled pages at {width} px"
        _sign_in(page, web, platform.password)
        for path in OWNER_PAGES:
            visited[f"{path} (signed in)"] = _visit(page, watch, web, path, width)
        broken = {path: problems for path, problems in visited.items() if problems}
        assert broken == {}, f"console errors, failed requests or unstyled pages at {width} px"
    finally:
        context.close()


def _visit(page: Any, watch: PageWatch, web: str, path: str, width: int) -> list[str]:
    watch.problems.clear()
    response = page.goto(f"http://{web}{path.split(' ')[0]}")
    page.wait_for_load_state("networkidle")
    problems = list(watch.problems)
    if response is None or response.status != 200:
        problems.append(f"{path} answered {response.status if response else 'nothing'}")
    if not _styled(page):
        problems.append(f"{path} is unstyled")
    name = re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-") or "home"
    page.screenshot(path=str(_artifacts() / f"{name}-{width}.png"), full_page=True)
    return problems


@pytest.mark.browser
def test_a_finished_matchs_viewer_draws_first_and_steps(platform: Platform, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        watch = PageWatch(page)
        page.goto(f"http://{platform.started.web}/matches/{platform.match_id}/")
        page.wait_for_selector(".septet-viewer.sv-ready", timeout=20_000)
        viewer_top = page.evaluate("() => document.querySelector('.septet-viewer').getBoundingClientRect().y")
        assert viewer_top < 844, "the viewer is on the first screen of a phone, not under the facts"
        counter = page.locator(".septet-viewer [data-role=step]")
        before = counter.text_content()
        page.locator(".septet-viewer [data-action=forward]").click()
        page.locator(".septet-viewer [data-action=forward]").click()
        assert counter.text_content() != before, "stepping forward moves the replay"
        assert page.locator(".septet-viewer [data-role=hand]").count() >= 2, "the seats' hands are drawn"
        assert watch.problems == []
    finally:
        context.close()


# The settings every entry of `septet up` chooses, read from its children ------------------------


@pytest.mark.parametrize(
    ("words", "caller", "module"),
    [
        ([], None, "septet_platform.settings.local"),
        (["--dev"], None, "septet_platform.settings.dev"),
        (["--production"], None, "septet_platform.settings.prod"),
        ([], "septet_platform.settings.dev", "septet_platform.settings.dev"),
    ],
    ids=["default", "dev", "production", "caller-set"],
)
def test_the_children_run_the_settings_the_launcher_chose(
    tmp_path: Path, words: list[str], caller: str | None, module: str
) -> None:
    """Without the example bots (an empty --examples folder) so that it starts in seconds; the
    children's own environment, read from /proc, says which settings they run. Each is stopped
    by another signal: SIGTERM; SIGINT, started as a shell's background job (SIGINT ignored on
    arrival: a `kill -INT` once stopped nothing); SIGHUP, a closed terminal."""
    examples = tmp_path / "no-examples"
    examples.mkdir()
    env = _clean_environment()
    if caller:
        env["DJANGO_SETTINGS_MODULE"] = caller
    if "--production" in words:  # prod refuses the development key and insecure cookies over http
        env |= {"SECRET_KEY": "k" * 50, "SEPTET_HTTPS": "0", "SEPTET_STATIC_ROOT": str(tmp_path / "static")}
    stop_with = {
        "septet_platform.settings.dev": signal.SIGINT,
        "septet_platform.settings.prod": signal.SIGHUP,
    }
    signum = signal.SIGTERM if caller else stop_with.get(module, signal.SIGTERM)
    started = _start(
        [SEPTET, "up"], tmp_path, "--examples", str(examples), *words,
        env=env, as_background_job=signum == signal.SIGINT,
    )  # fmt: skip
    try:
        started.wait_until(READY, 240)
        for name in ("web", "worker1", "beat", "arena"):
            assert _environment_of(started.children[name]).get("DJANGO_SETTINGS_MODULE") == module, name
        status, _, body = _get(f"http://{started.web}/no-such-page/")
        assert status == 404
        assert ("URLconf" in body) == (module.endswith(".dev")), "a technical 404 only with DEBUG on"
    finally:
        started.stop(signum)
