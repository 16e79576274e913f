"""A self-hosted bot on the platform the README starts: registered on the site in chromium, run on
"its own machine" by `septet bot connect FOLDER` (a separate process that reaches the Arena only
over gRPC), rated on its game's open ladder while connected, challenged with the CLI, and its
matches and ratings checked from the command's own database.
Stopping the connecting command stops everything it started, and the site then shows the bot as
not connected."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from process_tree import descendants, left_after
from start_support import (
    ROOT,
    SEPTET,
    PageWatch,
    Platform,
    clean_environment,
    demo_api_token,
    get,
    seats_of,
    sign_in,
)

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("start-command")]

BOT = "demos-laptop-bot"


def _register(page: Any, web: str) -> str:
    """Registers the self-hosted bot on the tokens page; its connect token, shown once."""
    page.goto(f"http://{web}/account/tokens/")
    page.fill("input[name=name][maxlength='40']", BOT)
    page.check("input[name=games][value=oh-hell]")
    page.locator("button", has_text="Register a self-hosted bot").click()
    page.wait_for_selector("#new-token")
    token = page.locator("#new-token").inner_text().strip()
    assert token.startswith("sep_"), token
    assert "septet bot connect" in page.locator("#submit-command").inner_text()
    return token


def test_a_self_hosted_bot_connects_from_its_own_process_and_plays_a_challenge(
    platform: Platform, browser: Any, tmp_path: Path
) -> None:
    web, arena = platform.started.web, platform.started.arena
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        watch = PageWatch(page)
        sign_in(page, web, platform.password)
        token = _register(page, web)
        log = (tmp_path / "connect.log").open("w")
        connecting = subprocess.Popen(
            [SEPTET, "bot", "connect", str(ROOT / "bots" / "examples" / "greedy"), "--server", arena],
            env={**clean_environment(), "SEPTET_TOKEN": token},
            cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while "connected to" not in (tmp_path / "connect.log").read_text():
                assert connecting.poll() is None, (tmp_path / "connect.log").read_text()
                assert time.monotonic() < deadline, "the bot connects within a minute"
                time.sleep(0.2)
            page.goto(f"http://{web}/bots/{BOT}/")
            assert "Connected since" in page.locator("#connection").inner_text()
            challenged = subprocess.run(
                [SEPTET, "challenge", BOT, "greedy", "random", "--game", "oh-hell", "--wait",
                 "--server", arena, "--token", demo_api_token(platform.started)],
                env=clean_environment(), cwd=tmp_path, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            assert challenged.returncode == 0, challenged.stdout + challenged.stderr
            seats = seats_of(platform.started.data, BOT, kind="challenge")  # not its open-ladder ones
            assert len(seats) == 3, seats  # one seat in each rotation of the set
            assert all(seat.status == "finished" and not seat.forfeit_status for seat in seats), seats
            deadline = time.monotonic() + 300
            while not (rated := _open_ladder_rating_changes(platform.started.data, BOT)):
                assert connecting.poll() is None, (tmp_path / "connect.log").read_text()
                assert time.monotonic() < deadline, "a connected bot plays rated open-ladder matches"
                time.sleep(1.0)
            assert all(pool == "open" for pool, _ in rated), rated
            open_seats = seats_of(platform.started.data, BOT, kind="ladder")
            assert not [seat for seat in open_seats if seat.forfeit_status], open_seats
            page.goto(f"http://{web}/ladders/oh-hell/open/")
            assert BOT in page.locator("table.standings").inner_text()
            started_here = descendants(connecting.pid)
            assert started_here, "the command runs the bot folder as a process of its own"
        finally:
            connecting.send_signal(signal.SIGINT)  # Ctrl-C
            try:
                connecting.wait(timeout=20)
            except subprocess.TimeoutExpired:
                connecting.kill()
                raise AssertionError("septet bot connect did not stop on Ctrl-C") from None
            finally:
                log.close()
        assert not left_after(started_here, 10), "Ctrl-C stopped the bot it started"
        status, _, body = get(f"http://{web}/bots/{BOT}/")
        assert status == 200 and "Not connected now" in body
        assert not watch.problems, watch.problems
    finally:
        context.close()


def _open_ladder_rating_changes(data: Path, bot: str) -> list[tuple[str, int]]:
    """(ladder pool, match id) of every rating change of `bot`, read from the command's database
    (not through the site); its matches are on the open ladder only, so a pool other than "open"
    here would be a self-hosted bot rated among sandboxed ones."""
    with sqlite3.connect(f"file:{data / 'septet.sqlite3'}?mode=ro", uri=True, timeout=5) as connection:
        return connection.execute(
            "select l.pool, c.match_id from ladders_ratingchange c"
            " join ladders_rating r on r.id = c.rating_id join ladders_ladder l on l.id = r.ladder_id"
            " join bots_botversion v on v.id = r.bot_version_id join bots_bot b on b.id = v.bot_id"
            " where b.name = ?",
            [bot],
        ).fetchall()
