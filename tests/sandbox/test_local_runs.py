"""`septet check`, `match` and `compare` run a bot folder safely by default: in the sandbox where
bubblewrap can make one, bare (saying so) where it cannot, and in every case with only the part
of the caller's environment a runtime needs, so a downloaded folder never gets the SEPTET_TOKEN
its user just exported for `septet submit`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from sandbox_helpers import hostile_copy

from referee.tools.botfolder import bot_environment
from referee.tools.sandbox import available

SEPTET = str(Path(sys.executable).with_name("septet"))
TOKEN = "sep_localruns_7f3a9c1e"
"""The value of the token a bot author exported: no variable a bot sees may hold it."""
SECRETS = {
    "SEPTET_TOKEN": TOKEN,
    "SEPTET_SERVER": "arena.example:50051",
    "AWS_SECRET_ACCESS_KEY": f"aws-{TOKEN}",
    "GITHUB_TOKEN": f"gh-{TOKEN}",
    "MY_API_KEY": f"key-{TOKEN}",
    "DATABASE_URL": f"postgres://septet:{TOKEN}@db/septet",
    "REDIS_URL": f"redis://:{TOKEN}@cache:6379/0",
}
needs_sandbox = pytest.mark.skipif(not available(), reason="bubblewrap cannot make a sandbox here")


def _hostile(tmp_path: Path) -> Path:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("the author's private notes")
    targets = {
        "needles": [TOKEN],
        "names": sorted(SECRETS),
        "wanted": ["SEPTET_MC_BUDGET"],
        "read": [str(secret)],
    }
    return hostile_copy("read-environment", tmp_path / "bots", targets)


def _check(folder: Path, *flags: str, env: dict[str, str] | None = None) -> tuple[dict[str, str], str]:
    """Runs `septet check FOLDER` with the secrets exported; what the hostile bot saw, and stderr."""
    done = subprocess.run(
        [SEPTET, "check", str(folder), "--game", "oh-hell", "--games", "1", "--json", *flags],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, **SECRETS, **(env or {})},
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]  # the bot always forfeits
    report: dict[str, Any] = json.loads(done.stdout)
    reasons = [failure["reason"] for game in report["games"] for failure in game["failures"]]
    assert reasons and "SEEN " in reasons[0], reasons
    said = reasons[0].split("SEEN ", 1)[1]
    return dict(part.split("=", 1) for part in said.split()), done.stderr


@needs_sandbox
def test_check_runs_a_folder_in_the_sandbox_by_default_without_the_callers_secrets(tmp_path: Path) -> None:
    """Tried: a folder that looks through its environment for the exported SEPTET_TOKEN (by name
    and by value), cloud keys and database URLs, and reads a file of its caller's, run by plain
    `septet check`: it gets none of them, and only what `--env` gives it on purpose."""
    seen, stderr = _check(_hostile(tmp_path), "--env", "SEPTET_MC_BUDGET=0.05")
    assert seen == {"needles": "", "names": "", "wanted": "SEPTET_MC_BUDGET", "files": "", "path": "yes"}
    assert stderr.startswith("sandbox: "), stderr  # the sandbox's limits, not the bare warning
    assert "--no-sandbox" not in stderr


def test_check_with_no_sandbox_warns_and_still_passes_no_secret(tmp_path: Path) -> None:
    """Tried: the same folder with `--no-sandbox`: as documented it reads the caller's file (it
    runs with the caller's rights), but its environment holds none of the secrets."""
    folder = _hostile(tmp_path)
    seen, stderr = _check(folder, "--no-sandbox", "--env", "SEPTET_MC_BUDGET", env={"SEPTET_MC_BUDGET": "1"})
    assert seen == {
        "needles": "",
        "names": "",
        "wanted": "SEPTET_MC_BUDGET",
        "files": "host-secret.txt",
        "path": "yes",
    }
    warnings = [line for line in stderr.splitlines() if "--no-sandbox" in line]
    assert len(warnings) == 1 and "your rights" in warnings[0] and "network" in warnings[0], stderr


def _path_without_bwrap(tmp_path: Path) -> str:
    """A PATH of this machine's tools but bubblewrap: `bwrap` cannot be found."""
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("setpriv", "prlimit", "sh"):
        found = shutil.which(name)
        if found:
            (tools / name).symlink_to(found)
    return str(tools)


def test_without_bubblewrap_check_says_so_once_and_runs_bare_without_secrets(tmp_path: Path) -> None:
    """Tried: `septet check` where bubblewrap is missing (not on PATH): one line says the folder
    runs bare and why, and the bot still gets none of the secrets (it reads the caller's file, as
    a bare run can)."""
    folder = _hostile(tmp_path)
    seen, stderr = _check(folder, env={"PATH": _path_without_bwrap(tmp_path), "SEPTET_MC_BUDGET": "1"})
    assert seen == {"needles": "", "names": "", "wanted": "", "files": "host-secret.txt", "path": "yes"}
    notes = [line for line in stderr.splitlines() if "bubblewrap" in line]
    assert len(notes) == 1 and "not installed" in notes[0] and "plain processes" in notes[0], stderr


def test_sandbox_flag_fails_clearly_where_bubblewrap_is_missing(tmp_path: Path) -> None:
    """Tried: `septet check --sandbox` where bubblewrap is missing: it refuses to run the folder
    bare, in one line naming what is missing and the way out, exit 2."""
    done = subprocess.run(
        [SEPTET, "check", str(_hostile(tmp_path)), "--sandbox", "--game", "oh-hell"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PATH": _path_without_bwrap(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("septet: error: --sandbox: bubblewrap is not installed"), done.stderr
    assert "--no-sandbox" in done.stderr and len(done.stderr.splitlines()) == 1


def _built_folder(tmp_path: Path) -> Path:
    """A bot whose build writes the file it needs to start (it exits without it)."""
    folder = tmp_path / "builds-a-file"
    folder.mkdir()
    (folder / "septet-bot.toml").write_text(
        'name = "builds-a-file"\ngames = ["oh-hell"]\n'
        'command = ["python", "bot.py", "--address", "{address}"]\n'
        'build = ["sh", "-c", "echo built > built.txt"]\n'
    )
    (folder / "bot.py").write_text(
        "import sys\nfrom pathlib import Path\n"
        "from referee.botkit.sdk import as_bot, serve\n"
        "if not Path('built.txt').is_file():\n    sys.exit('not built')\n"
        "serve(as_bot(lambda info, legal: legal[0], name='builds-a-file'))\n"
    )
    return folder


@needs_sandbox
def test_a_folder_with_a_build_is_built_in_the_sandbox_once_per_content(tmp_path: Path) -> None:
    """A sandboxed local run never runs a folder's build on the host: it builds a copy in the
    sandbox (offline, as the platform does) and plays the copy; the folder itself is not written.
    The copy is reused until a file of the folder changes; older copies are removed."""
    folder = _built_folder(tmp_path)
    env = {**os.environ, "SEPTET_BUILD_CACHE": str(tmp_path / "cache")}

    def check() -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [SEPTET, "check", str(folder), "--games", "1", "--budget", "1"],
            capture_output=True, text=True, timeout=300, check=False, env=env,
        )  # fmt: skip
        assert done.returncode == 0 and "PASS" in done.stdout, done.stdout + done.stderr
        return done

    assert "building builds-a-file in the sandbox" in check().stderr
    assert not (folder / "built.txt").exists(), "the build wrote into the folder"
    assert "building" not in check().stderr, "a second run of the same folder built again"
    forgotten = tmp_path / "cache" / "sandboxed" / "0123456789abcdef-0123"  # a deleted folder's copy
    forgotten.mkdir()
    os.utime(forgotten, (time.time() - 40 * 24 * 3600,) * 2)
    (folder / "bot.py").write_text((folder / "bot.py").read_text() + "# changed\n")
    assert "building builds-a-file in the sandbox" in check().stderr
    copies = list((tmp_path / "cache" / "sandboxed").iterdir())
    assert len(copies) == 1, f"the older copy and one unused for 40 days are removed: {copies}"


@needs_sandbox
@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs the sandbox as another user")
def test_a_folder_the_sandbox_user_cannot_read_is_refused_with_the_fix(tmp_path: Path) -> None:
    """Tried: a folder only its owner may read, checked by root: instead of a bot dying with
    "Permission denied" before it serves, one line says who cannot read what and how to fix it."""
    folder = _hostile(tmp_path)
    (folder / "bot.py").chmod(0o600)
    done = subprocess.run(
        [SEPTET, "check", str(folder), "--game", "oh-hell"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot read bot.py" in done.stderr and f"chmod -R o+rX {folder}" in done.stderr, done.stderr


def test_the_environment_a_bare_bot_keeps_is_an_allow_list() -> None:
    """What a runtime needs passes; tokens, keys, secrets, server and database addresses do not,
    nor a name that looks like a secret even under an allowed prefix."""
    caller = {
        "PATH": "/usr/bin",
        "HOME": "/home/author",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "LC_AUTH_TOKEN": "x",
        "TMPDIR": "/tmp",
        "PYTHONPATH": "/src",
        "GOPATH": "/go",
        "EDITOR": "vim",
        "SSH_AUTH_SOCK": "/run/agent",
        **SECRETS,
    }
    assert bot_environment(caller) == {
        "PATH": "/usr/bin",
        "HOME": "/home/author",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TMPDIR": "/tmp",
        "PYTHONPATH": "/src",
        "GOPATH": "/go",
    }
