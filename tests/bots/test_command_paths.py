"""A manifest's relative command (`./bot`, `bin/bot`) is the bot folder's own program, wherever the
tool runs from: `septet check`, `match` and the sandbox (the platform's way) all start it, and a
missing or non-executable program is refused with its folder-relative path and the fix, before
any process starts. Every bot here is a real process: the random example's code as an executable
script with a shebang, as a compiled bot would ship its binary."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from referee.tools import sandbox as sandbox_module
from referee.tools.botfolder import BotFolderError, launch_bot, start_bot

ROOT = Path(__file__).resolve().parents[2]
SEPTET = str(Path(sys.executable).with_name("septet"))
RANDOM_BOT = ROOT / "bots" / "examples" / "random" / "bot.py"


def shipped_bot(folder: Path, program: str = "./go-lowest", *, executable: bool = True) -> Path:
    """A bot folder whose command is a program it ships (`program`, folder-relative): the random
    example's code behind a shebang line naming this interpreter."""
    folder.mkdir(parents=True)
    target = folder / os.path.normpath(program)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f"#!{sys.executable}\n" + RANDOM_BOT.read_text())
    target.chmod(0o755 if executable else 0o644)
    (folder / "septet-bot.toml").write_text(
        f'name = "shipped"\ngames = ["oh-hell"]\ncommand = ["{program}", "--address", "{{address}}"]\n'
    )
    return folder


def septet(*words: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SEPTET, *words], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize("program", ["./go-lowest", "bin/go-lowest"])
def test_a_relative_command_runs_the_folders_program_from_any_directory(tmp_path: Path, program: str) -> None:
    """Tried: `septet check` from a directory that is neither the folder nor its parent (the
    lookup used to be relative to the caller's directory: "which is not installed")."""
    folder = shipped_bot(tmp_path / "bot", program)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = septet("check", str(folder), "--games", "1", "--budget", "5", cwd=elsewhere)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "PASS" in run.stdout
    played = septet(
        "match", "--game", "oh-hell", "--games", "1", str(folder), "random", "random", cwd=elsewhere
    )
    assert played.returncode == 0, played.stdout + played.stderr
    assert "forfeits: none" in played.stdout


@pytest.mark.skipif(
    not sandbox_module.available(), reason="bubblewrap (Debian package bubblewrap) is not installed"
)
def test_a_relative_command_runs_inside_the_sandbox_as_on_the_platform(tmp_path: Path) -> None:
    """Tried: the platform's start (start_bot with a Sandbox) of a folder whose command is
    `bin/go-lowest`: the program is found at /bot/bin/go-lowest inside and serves."""
    folder = shipped_bot(tmp_path / "bot", "bin/go-lowest")
    os.chmod(tmp_path, 0o755)  # the sandbox's own uid reads the folder, as an unpacked version
    bot = start_bot(folder, sandbox=sandbox_module.Sandbox())
    try:
        assert bot.alive()
        assert "/bot/bin/go-lowest" in bot.process.args  # type: ignore[operator]
    finally:
        bot.stop()


def test_a_non_executable_program_is_refused_with_chmod_and_nothing_runs(tmp_path: Path) -> None:
    """Tried: the program shipped without its executable bit; the error names the file as the
    folder has it and the fix, and the file is left as it was (no process, no chmod of ours)."""
    folder = shipped_bot(tmp_path / "bot", "./go-lowest", executable=False)
    before = (folder / "go-lowest").stat().st_mode
    with pytest.raises(BotFolderError) as refused:
        launch_bot(folder)
    assert "'./go-lowest'" in str(refused.value) and "not executable: chmod +x go-lowest" in str(
        refused.value
    )
    assert (folder / "go-lowest").stat().st_mode == before and not before & stat.S_IXUSR
    run = septet("check", str(folder), cwd=tmp_path)
    assert run.returncode == 2 and "chmod +x go-lowest" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize(
    ("command", "message", "what_was_tried"),
    [
        ("bin/missing", "which is not there: build it into the folder", "a program not built yet"),
        ("../go-lowest", "points outside the bot folder", "a path leaving the folder"),
        ("go-lowest", "write './go-lowest'", "the folder's program named without ./"),
    ],
)
def test_a_program_the_folder_does_not_have_is_a_clear_error(
    tmp_path: Path, command: str, message: str, what_was_tried: str
) -> None:
    folder = shipped_bot(tmp_path / "bot", "./go-lowest")
    (folder / "septet-bot.toml").write_text(
        f'name = "shipped"\ngames = ["oh-hell"]\ncommand = ["{command}", "--address", "{{address}}"]\n'
    )
    (tmp_path / "go-lowest").write_text("#!/bin/sh\necho outside\n")  # what ../ would reach
    (tmp_path / "go-lowest").chmod(0o755)
    with pytest.raises(BotFolderError, match=message):
        launch_bot(folder)
    run = septet("check", str(folder), cwd=tmp_path)
    assert run.returncode == 2 and message in run.stderr, what_was_tried


def test_a_relative_build_step_is_the_folders_own_script(tmp_path: Path) -> None:
    """Tried: `build = ["./build.sh"]` that makes the program the command runs, started from
    another directory: the build runs in the folder, then the built program serves. Bare
    (--no-sandbox), where the build writes the folder; in the sandbox it builds a copy
    (tests/sandbox/test_local_runs.py)."""
    folder = shipped_bot(tmp_path / "bot", "./go-lowest")
    shutil.move(folder / "go-lowest", folder / "source.py")
    (folder / "build.sh").write_text("#!/bin/sh\ncp source.py go-lowest && chmod +x go-lowest\n")
    (folder / "build.sh").chmod(0o755)
    manifest = (folder / "septet-bot.toml").read_text()
    (folder / "septet-bot.toml").write_text(manifest + 'build = ["./build.sh"]\n')
    env = {**os.environ, "SEPTET_BUILD_CACHE": str(tmp_path / "cache")}
    run = subprocess.run(
        [SEPTET, "match", "--no-sandbox", "--game", "oh-hell", "--games", "1", str(folder), "random",
         "random"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert (folder / "go-lowest").is_file()
