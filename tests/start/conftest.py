"""The README's start command, once per test session (per xdist group: see pyproject's
`xdist_group` use), shared by the modules of this folder."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from start_support import READY, START, Platform, finished_match, start


@pytest.fixture(scope="session")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """`bash scripts/start` exactly as the README gives it, with the example bots; once it is ready
    and a rated match has finished."""
    started = start(START, tmp_path_factory.mktemp("start"))
    try:
        started.wait_until(READY, 600)
        password = re.search(r"sign in\s+demo, password (\S+)", started.said())
        assert password, f"the ready message gives the demo account's password:\n{started.said()}"
        deadline = time.monotonic() + 300
        while (match_id := finished_match(started.data)) is None:
            assert time.monotonic() < deadline, "a rated match finishes within 5 minutes of the start"
            assert started.process.poll() is None, started.said()
            time.sleep(2)
        yield Platform(started, password[1], match_id)
    finally:
        started.stop()
