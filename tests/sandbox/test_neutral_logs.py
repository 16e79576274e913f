"""What an owner reads of their bot names no path of the worker (issue 25, finding 7).

The sandbox binds the runtime at its own paths, so a build's command line, a build printing
`sys.executable` and a traceback through the SDK showed the worker's interpreter
(`.../.venv/bin/python`), its Python installation, the project's folder and the data folder in
the build log, the error log and a seat's log. Through the real intake path (submission, build and
qualification in the sandbox) and a real sandboxed bot's log, each now reads `python`,
`<python>`, `<septet>`, `<data>`. Seen to fail with `neutral_paths` returning its text unchanged.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from bot_versions import tar_folder
from sandbox_helpers import EXAMPLES

import referee
from referee.engine.games import get_game
from referee.engine.match import TimeControl, play_match
from referee.engine.players import Player, RandomPlayer
from referee.tools.bot_logs import neutral_paths, read_log_tail
from referee.tools.botfolder import start_bot
from referee.tools.grpc_player import GrpcPlayer
from referee.tools.sandbox import Sandbox
from septet_platform.bots.models import BotVersion
from septet_platform.bots.qualification import bot_version_qualify
from septet_platform.bots.services import bot_version_submit
from septet_platform.ladders.services import ladders_ensure

pytestmark = pytest.mark.django_db(transaction=True)
PROJECT = Path(referee.__file__).resolve().parents[1]
TELL_PATHS = """
import os, sys
import referee
print("interpreter", sys.executable, os.path.realpath(sys.executable))
print("installation", sys.prefix, sys.base_prefix)
print("project", referee.__file__)
"""
FAILING_BUILD = TELL_PATHS + "raise SystemExit(3)\n"
FAILING_START = TELL_PATHS + "from referee.botkit.sdk import serve\nserve(None)\n"
COMMAND = 'command = ["python", "bot.py", "--address", "{address}"]\n'
THEN_PLAY = "import runpy\nrunpy.run_path('bot.py', run_name='__main__')\n"


@pytest.fixture(autouse=True)
def platform_folders(settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Private archive and data folders, named to the worker as production names them
    (SEPTET_DATA_DIR); the ladders exist."""
    settings.SEPTET_ARCHIVES_DIR = tmp_path / "data" / "archives"
    settings.SEPTET_REPLAYS_DIR = tmp_path / "data" / "replays"
    settings.DATA_DIR = tmp_path / "data"
    monkeypatch.setenv("SEPTET_DATA_DIR", str(settings.DATA_DIR))
    monkeypatch.setenv("SEPTET_BUILD_CACHE", str(tmp_path / "build-cache"))
    ladders_ensure()
    return tmp_path


def _worker_paths() -> list[str]:
    """Every path of the worker an owner must not read."""
    paths = {sys.executable, os.path.realpath(sys.executable), sys.prefix, sys.base_prefix, str(PROJECT)}
    paths.add(os.environ["SEPTET_DATA_DIR"])
    return sorted(path for path in paths if not path.startswith("/usr"))


def _shown(text: str) -> list[str]:
    return [path for path in _worker_paths() if path in text]


def _qualified(owner: Any, name: str, files: dict[str, str], build: bool) -> BotVersion:
    manifest = f'name = "{name}"\ngames = ["oh-hell"]\n{COMMAND}'
    if build:
        manifest += 'build = ["python", "build.py"]\n'
    archive = tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest, **files})
    version = bot_version_submit(owner=owner, archive=archive)
    bot_version_qualify(version_id=version.pk)
    return BotVersion.objects.get(pk=version.pk)


def test_a_failed_builds_log_and_error_log_name_no_path_of_the_worker(django_user_model: type) -> None:
    # what was tried: a build printing its interpreter, installation and the SDK's file, then failing
    owner = django_user_model.objects.create_user("paths")
    version = _qualified(owner, "paths", {"build.py": FAILING_BUILD}, build=True)
    assert version.status == BotVersion.Status.FAILED
    for log in (version.build_log, version.error_log):
        assert "interpreter python python" in log and "installation <python> <python>" in log, log
        assert _shown(log) == [], log
    assert "the build `python build.py` failed" in version.build_log


def test_a_start_failures_traceback_in_the_error_log_names_no_path_of_the_worker(
    django_user_model: type,
) -> None:
    # what was tried: a bot printing the same, then failing inside the SDK (a traceback through it)
    owner = django_user_model.objects.create_user("traced")
    version = _qualified(owner, "traced", {"bot.py": FAILING_START}, build=False)
    assert version.status == BotVersion.Status.FAILED
    assert "<septet>/referee/botkit/sdk.py" in version.error_log, version.error_log
    assert _shown(version.error_log) == [], version.error_log


def test_a_seats_log_names_no_path_of_the_worker(tmp_path: Path) -> None:
    """A sandboxed bot that prints the paths, then plays: its log as the worker keeps it."""
    folder = tmp_path / "bots" / "talker"
    shutil.copytree(EXAMPLES / "random", folder)
    tmp_path.chmod(0o755)
    (folder / "talk.py").write_text(TELL_PATHS + THEN_PLAY)
    (folder / "septet-bot.toml").write_text(
        f'name = "talker"\ngames = ["oh-hell"]\n{COMMAND.replace("bot.py", "talk.py")}'
    )
    bot = start_bot(folder, sandbox=Sandbox())
    players: list[Player] = [GrpcPlayer(bot.address, "talker"), RandomPlayer(random.Random(1))]
    players.append(RandomPlayer(random.Random(2)))
    try:
        outcome = play_match(
            get_game("oh-hell"), players, seed=1, time_control=TimeControl(per_decision=5.0), match_id="logs"
        )
        log = read_log_tail(bot.log_path).text
    finally:
        players[0].close()  # type: ignore[attr-defined]
        bot.stop(grace=1.0)
    assert outcome.forfeits == []
    assert "interpreter python python" in log and "project <septet>/referee/__init__.py" in log, log
    assert _shown(log) == [], log


def test_the_data_folder_and_a_longer_name_beside_a_worker_path() -> None:
    """The data folder is `<data>`; only whole path components match."""
    data = os.environ["SEPTET_DATA_DIR"]
    assert neutral_paths(f"no room in {data}/archives/v3.tar") == "no room in <data>/archives/v3.tar"
    assert neutral_paths(f"{PROJECT}-old/x {PROJECT}x") == f"{PROJECT}-old/x {PROJECT}x"
