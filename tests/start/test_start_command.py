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

import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from start_support import (
    READY,
    SEPTET,
    STYLESHEET,
    WIDTHS,
    PageWatch,
    Platform,
    artifacts,
    clean_environment,
    environment_of,
    get,
    sign_in,
    start,
    styled,
)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("start-command")]


def test_every_child_of_the_readme_command_runs_the_debug_off_settings(platform: Platform) -> None:
    children = platform.started.children
    assert {"web", "worker1", "beat", "arena"} <= set(children), children
    for name in children:
        if name == "redis":
            continue
        module = _settings_of(platform, name)
        assert module == "septet_platform.settings.local", f"{name} runs {module}"


def _settings_of(platform: Platform, name: str) -> str | None:
    """The settings module child `name` runs; a child another test of this session killed on
    purpose (the tables worker) is read once the command has restarted it."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return environment_of(platform.started.children[name]).get("DJANGO_SETTINGS_MODULE")
        except FileNotFoundError:
            assert time.monotonic() < deadline, f"{name} was not running again within 60 s"
            time.sleep(0.5)


def test_a_missing_page_is_the_sites_own_404_with_a_content_security_policy(platform: Platform) -> None:
    status, headers, body = get(f"http://{platform.started.web}/no-such-page/")
    assert status == 404
    assert "URLconf" not in body and "DEBUG = True" not in body, "Django's technical 404 (DEBUG on)"
    assert 'href="/static/' in body, "the site's own 404 page, with its stylesheet"
    for path in ("/", "/no-such-page/", "/ladders/oh-hell/"):  # every document (not the static files)
        _, headers, _ = get(f"http://{platform.started.web}{path}")
        assert "default-src 'self'" in headers.get("Content-Security-Policy", ""), path


def test_static_files_are_served(platform: Platform) -> None:
    for path in ("/static/septet-viewer/viewer.js", "/static/septet-viewer/viewer.css", STYLESHEET):
        status, _, body = get(f"http://{platform.started.web}{path}")
        assert status == 200 and body, path


ANONYMOUS_PAGES = (
    "/",
    "/ladders/",
    "/ladders/oh-hell/",
    "/ladders/oh-hell/open/",
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
        sign_in(page, web, platform.password)
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
    if not styled(page):
        problems.append(f"{path} is unstyled")
    name = re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-") or "home"
    page.screenshot(path=str(artifacts() / f"{name}-{width}.png"), full_page=True)
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
    env = clean_environment()
    if caller:
        env["DJANGO_SETTINGS_MODULE"] = caller
    if "--production" in words:  # prod refuses the development key and insecure cookies over http
        env |= {"SECRET_KEY": "k" * 50, "SEPTET_HTTPS": "0", "SEPTET_STATIC_ROOT": str(tmp_path / "static")}
    stop_with = {
        "septet_platform.settings.dev": signal.SIGINT,
        "septet_platform.settings.prod": signal.SIGHUP,
    }
    signum = signal.SIGTERM if caller else stop_with.get(module, signal.SIGTERM)
    started = start(
        [SEPTET, "up"], tmp_path, "--examples", str(examples), *words,
        env=env, as_background_job=signum == signal.SIGINT,
    )  # fmt: skip
    try:
        started.wait_until(READY, 240)
        for name in ("web", "worker1", "beat", "arena"):
            assert environment_of(started.children[name]).get("DJANGO_SETTINGS_MODULE") == module, name
        status, _, body = get(f"http://{started.web}/no-such-page/")
        assert status == 404
        assert ("URLconf" in body) == (module.endswith(".dev")), "a technical 404 only with DEBUG on"
    finally:
        started.stop(signum)
