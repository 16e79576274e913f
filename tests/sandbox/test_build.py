"""A manifest's build in the sandbox: it may write its own folder (and nothing else), it runs once
however many workers start the new version at the same time, and the bot that then plays cannot
write the folder the build wrote."""

from __future__ import annotations

import threading
from pathlib import Path

from referee.botfolder import build, load_manifest
from referee.sandbox import Sandbox

BUILD = """import pathlib, time
log = pathlib.Path("builds.txt")
log.write_text((log.read_text() if log.exists() else "") + "built\\n")
time.sleep(1)
"""


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "builder"
    folder.mkdir()
    (folder / "build.py").write_text(BUILD)
    (folder / "septet-bot.toml").write_text(
        'name = "builder"\ngames = ["oh-hell"]\ncommand = ["python", "bot.py", "--address", "{address}"]\n'
        'build = ["python", "build.py"]\n'
    )
    return folder


def test_a_build_started_by_two_workers_at_once_runs_once_in_the_sandbox(tmp_path: Path) -> None:
    manifest = load_manifest(_folder(tmp_path))
    errors: list[BaseException] = []

    def start() -> None:
        try:
            build(manifest, sandbox=Sandbox())
        except BaseException as error:  # surfaced below
            errors.append(error)

    threads = [threading.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert (manifest.folder / "builds.txt").read_text() == "built\n"
    owners = {path.stat().st_uid for path in [manifest.folder, *manifest.folder.rglob("*")]}
    assert owners == {manifest.folder.parent.stat().st_uid}, "the built folder was not given back"
