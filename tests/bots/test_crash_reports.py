"""A bot that dies mid-game is reported with how it ended (exit code or signal) and, to the author
running it locally, the tail of its output; a bot that never serves says why at once where it can
(no health service) and plainly where it cannot (nothing listening at its address). Real processes
throughout: tests/bots/faulty/misbehave.py on unary calls, an SDK bot on the Play stream."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.engine.games import get_game
from referee.engine.match import TimeControl, play_match
from referee.engine.players import RandomPlayer
from referee.tools import sandbox as sandbox_module
from referee.tools.botfolder import BotFolderError, describe_exit, start_bot, wait_until_serving
from referee.tools.lineup import Lineup, parse_bot

SEPTET = str(Path(sys.executable).with_name("septet"))
FAST = TimeControl(per_decision=0.5, bank=2.0)

DYING_SDK_BOT = """
import os, signal, sys
from referee.sdk import Bot, serve

class Dying(Bot):
    name = "dying"
    asked = 0

    def decide(self, info, legal):
        self.asked += 1
        if self.asked > 3:
            print("segfault in my native search", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.{signal})
        return legal[0]

serve(Dying())
"""


def dying_sdk_bot(folder: Path, signal: str = "SIGSEGV") -> Path:
    """An SDK bot (so on the Play stream) that kills itself with `signal` at its fourth decision."""
    folder.mkdir()
    (folder / "bot.py").write_text(DYING_SDK_BOT.format(signal=signal))
    (folder / "septet-bot.toml").write_text(
        'name = "dying"\ngames = ["oh-hell"]\ncommand = ["python", "bot.py", "--address", "{address}"]\n'
    )
    return folder


def play_one(folder: Path, *, sandbox: sandbox_module.Sandbox | None = None) -> str:
    """The forfeit reason of the bot at seat 0 of one Oh Hell! game against two random players."""
    game = get_game("oh-hell")
    with Lineup([parse_bot(str(folder))], game, sandbox=sandbox) as lineup:
        players = [*lineup.players((0,), 3), RandomPlayer(random.Random(1)), RandomPlayer(random.Random(2))]
        outcome = play_match(game, players, seed=3, time_control=FAST, match_id="crash-report")
    assert [(forfeit.seat, str(forfeit.status)) for forfeit in outcome.forfeits] == [(0, "ERROR")]
    return outcome.forfeits[0].reason


def test_a_unary_bot_that_exits_mid_game_says_its_code_and_stderr(faulty_bot: Callable[..., Path]) -> None:
    """Tried: misbehave's `crash` (prints a line, then exit code 3 at its fourth decision); it used
    to read only `bot unreachable: Stream removed (Socket closed)`."""
    reason = play_one(faulty_bot("crash"))
    assert "unreachable" in reason and "its process exited with code 3" in reason
    assert "out of memory in my lookup table" in reason, "the stderr tail comes with it"


def test_a_stream_bot_killed_by_a_signal_says_which(tmp_path: Path) -> None:
    """Tried: an SDK bot (Play stream) that kills itself with SIGSEGV mid-game."""
    reason = play_one(dying_sdk_bot(tmp_path / "dying"))
    assert "its process was killed by SIGSEGV" in reason, reason
    assert "segfault in my native search" in reason


def test_check_shows_the_exit_and_stderr_of_a_crash(tmp_path: Path, faulty_bot: Callable[..., Path]) -> None:
    run = subprocess.run(
        [SEPTET, "check", str(faulty_bot("killed")), "--game", "oh-hell", "--games", "1", "--budget", "5"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 1 and "FAIL" in run.stdout
    # "its process was killed by SIGKILL" bare; in the sandbox (the default) "its process exited
    # with code 137 (killed by SIGKILL)", the code bubblewrap passes on
    assert "its process " in run.stdout and "killed by SIGKILL" in run.stdout, run.stdout


@pytest.mark.skipif(not sandbox_module.available(), reason="bubblewrap cannot make a sandbox here")
def test_a_sandboxed_bot_killed_mid_game_says_the_signal(tmp_path: Path) -> None:
    """Tried: the dying SDK bot inside the sandbox, where the launcher passes on bubblewrap's code."""
    tmp_path.chmod(0o755)
    reason = play_one(dying_sdk_bot(tmp_path / "dying", "SIGKILL"), sandbox=sandbox_module.Sandbox())
    assert "(killed by SIGKILL)" in reason, reason


def test_describe_exit_names_signals_and_codes() -> None:
    assert describe_exit(3) == "exited with code 3"
    assert describe_exit(-11) == "was killed by SIGSEGV"
    assert describe_exit(139, sandboxed=True) == "exited with code 139 (killed by SIGSEGV)"
    assert describe_exit(139) == "exited with code 139", "outside the sandbox 139 is a code like any"


def test_a_bot_without_the_health_service_is_told_so_at_once(faulty_bot: Callable[..., Path]) -> None:
    """Tried: a server that serves septet.v1.Bot but not grpc.health.v1 (it used to wait the
    whole start-up time and say DEADLINE_EXCEEDED)."""
    started = time.monotonic()
    with pytest.raises(BotFolderError) as failure:
        start_bot(faulty_bot("no-health"), startup_timeout=15.0)
    assert "has no grpc.health.v1.Health service" in str(failure.value)
    assert "docs/bots.md#health" in str(failure.value)
    assert time.monotonic() - started < 8, "told at once, not after the 15 s start-up time"


def test_a_bot_listening_elsewhere_is_told_nothing_listens_at_its_address(
    faulty_bot: Callable[..., Path],
) -> None:
    """Tried: a bot that binds 127.0.0.1:0 instead of the {address} it was given."""
    with pytest.raises(BotFolderError) as failure:
        start_bot(faulty_bot("wrong-address"), startup_timeout=2.0)
    message = str(failure.value)
    assert "nothing is listening on unix:" in message and "the {address} it was given" in message
    assert "DEADLINE_EXCEEDED" not in message


def test_an_address_that_refuses_connections_is_given_up_on_quickly(tmp_path: Path) -> None:
    """Tried: a bot given by address (a unix socket nobody made): no process of ours is starting,
    so a refused connection is not waited on for the full time."""
    started = time.monotonic()
    with pytest.raises(BotFolderError, match=r"nothing is listening on unix:.*is the bot running"):
        wait_until_serving(f"unix:{tmp_path / 'nobody.sock'}", 15.0)
    assert time.monotonic() - started < 6
