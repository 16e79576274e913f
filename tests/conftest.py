"""Shared pytest configuration for the whole suite."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

# Browser tests (marker `browser`): Playwright driving Debian's chromium, never Playwright's own builds.
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless chromium per test session (per xdist worker): launching costs about a second."""
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
