"""node-random's connect mode (`node bot.js --connect HOST:PORT`): the JavaScript example dials out
to the stand-in Arena of tests/connect_arena.py, plays interleaved seats of three games with legal
answers, dials again when the connection drops, and stops on SIGTERM; a refused token ends it with
one line and code 2. Skipped only where `node` is not installed.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from connect_arena import ConnectArena, SeatGame, play_interleaved, serving_arena

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "bots" / "examples" / "node-random"
TOKEN = "sep_node-connect-token"
STARTUP_SECONDS = 30.0

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def ensure_built() -> None:
    """The manifest's build (`npm ci`) once when node_modules is missing, under the lock
    tests/bots/test_node_bot.py takes for the same folder."""
    lock_path = Path(tempfile.gettempdir()) / "septet-node-random-build.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (FOLDER / "node_modules").is_dir():
            return
        build = tomllib.loads((FOLDER / "septet-bot.toml").read_text(encoding="utf-8"))["build"]
        done = subprocess.run(build, cwd=FOLDER, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, f"{' '.join(build)} failed:\n{done.stdout}{done.stderr}"


@pytest.fixture
def arena() -> Iterator[tuple[ConnectArena, str]]:
    ensure_built()
    servicer = ConnectArena(TOKEN, bot="node-random")
    with serving_arena(servicer) as (_, address):
        yield servicer, address


def node_bot(address: str, token: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["node", "bot.js", "--connect", address, "--seed", "3"],
        cwd=FOLDER,
        env={**os.environ, "SEPTET_TOKEN": token},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_node_random_plays_its_seats_over_one_connection_and_reconnects(
    arena: tuple[ConnectArena, str],
) -> None:
    servicer, address = arena
    bot = node_bot(address, TOKEN)
    try:
        session = servicer.next_session(timeout=STARTUP_SECONDS)
        games = {
            "m1/0": SeatGame("m1", 0, game_id="oh-hell", seed=1),
            "m2/2": SeatGame("m2", 2, game_id="oh7", players=4, seed=2),
        }
        kinds = play_interleaved(session, games, decisions=6)
        session.abort(grpc.StatusCode.UNAVAILABLE, "the server restarts")
        again = servicer.next_session()
        later = {"m3/1": SeatGame("m3", 1, game_id="black-sevens", players=4, seed=3)}
        kinds.update(play_interleaved(again, later, decisions=4))
        bot.send_signal(signal.SIGTERM)
        _, err = bot.communicate(timeout=10)
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait()
    assert bot.returncode == 0, err
    for handle, game in {**games, **later}.items():
        assert kinds[handle] == ["started", *["decision"] * len(game.played), "ended"], handle
        assert len(game.played) in (4, 6)
    lines = err.splitlines()
    assert lines[0] == f"node-random: connected to {address} as node-random (connection c1)"
    assert lines[1].startswith(
        f"node-random: lost the connection to {address} (UNAVAILABLE: the server restarts); reconnecting in"
    )
    assert lines[2:] == [
        f"node-random: reconnected to {address} as node-random (connection c2)",
        "node-random: stopped (SIGTERM)",
    ]


def test_node_random_with_a_refused_token_exits_2_with_one_line(arena: tuple[ConnectArena, str]) -> None:
    servicer, address = arena
    bot = node_bot(address, "sep_wrong")
    try:
        _, err = bot.communicate(timeout=STARTUP_SECONDS)
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait()
    assert bot.returncode == 2
    assert err.startswith(f"node-random: error: {address} refused the token (UNAUTHENTICATED")
    assert err.count("\n") == 1, err
    assert servicer.calls == 1
