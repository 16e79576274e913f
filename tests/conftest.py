"""Shared pytest configuration for the whole suite."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# Browser tests (marker `browser`): Playwright driving Debian's chromium, never Playwright's own builds.
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless chromium per test module: launching costs about a second. Not one per session:
    Playwright's sync API keeps an asyncio loop running in this thread while it is open, and every
    later test of the worker (a database call of a test with no browser) would be taken for async
    code (SynchronousOnlyOperation, depending on which tests an xdist worker happened to get)."""
    from playwright.sync_api import sync_playwright

    executable = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if executable is None:
        pytest.fail("Debian's chromium is not installed (scripts/test installs it with apt-get)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A fresh page (its own context: no cookies or storage shared between tests).

    Playwright's sync API keeps an asyncio loop running underneath, which Django's ORM would take
    for async code; the test's own database calls are synchronous, so that check is off here.
    """
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    context = browser.new_context()
    opened = context.new_page()
    yield opened
    context.close()


# The Arena service running in this process (test_arena.py, test_arena_cli.py) -----------------


class Queued:
    """Stands in for a Celery task: records what `.delay` was called with."""

    def __init__(self) -> None:
        self.calls: list[int] = []

        self.queues: list[str | None] = []

    def delay(self, object_id: int) -> None:
        self.calls.append(object_id)
        self.queues.append(None)

    def apply_async(self, args: tuple[int], queue: str | None = None) -> None:
        self.calls.append(args[0])
        self.queues.append(queue)


@pytest.fixture
def storage(settings: Any, tmp_path: Path) -> tuple[Path, Path]:
    """Private archive and replay folders for the test."""
    settings.SEPTET_ARCHIVES_DIR = tmp_path / "archives"
    settings.SEPTET_REPLAYS_DIR = tmp_path / "replays"
    return settings.SEPTET_ARCHIVES_DIR, settings.SEPTET_REPLAYS_DIR


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> dict[str, Queued]:
    """The build, qualification and match tasks, recorded instead of sent to a broker."""
    from septet_platform.challenges import services as challenge_services
    from septet_platform.submissions import services as submission_services

    tasks = {"build": Queued(), "qualify": Queued(), "match": Queued()}
    monkeypatch.setattr(submission_services, "bot_version_build_task", tasks["build"])
    monkeypatch.setattr(submission_services, "bot_version_qualify_task", tasks["qualify"])
    monkeypatch.setattr(challenge_services, "match_run_task", tasks["match"])
    return tasks


@pytest.fixture
def arena_address(storage: tuple[Path, Path], queued: dict[str, Queued]) -> Iterator[str]:
    """host:port of an Arena server running in this process on a free port."""
    from septet_platform.arena_api.server import create_server

    server, port = create_server("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(grace=None).wait()


@pytest.fixture
def septet(arena_address: str, capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """septet(*words, token=None) -> (exit code, stdout, stderr) of the CLI against the Arena."""
    from referee.tools.cli import main

    def run(*words: str, token: str | None = None) -> tuple[int, str, str]:
        extra = ["--server", arena_address] + (["--token", token] if token else [])
        code = main([*words, *extra])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
