"""`septet up`'s safe defaults: the site it starts runs with DEBUG off (its own 404 page, static
files still served, no 500 for a `..%2f` path, a Content-Security-Policy), and signs sessions
with a random key kept in the data folder, created 0600 once and reused."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from platform_support import ROOT, local_address

from septet_platform.launcher import SecretKeyUnusable, secret_key_file


def _get(url: str) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode("utf-8", "replace")


@pytest.fixture
def site_as_up_runs_it(tmp_path: Path) -> Iterator[str]:
    """The web process `septet up` starts (runserver, settings.local, the data folder's key),
    on a free 127.0.0.1 port; its address."""
    address = local_address()
    env = {key: value for key, value in os.environ.items() if key not in ("SECRET_KEY", "DEBUG")}
    env |= {
        "DJANGO_SETTINGS_MODULE": "septet_platform.settings.local",
        "SEPTET_DATA_DIR": str(tmp_path),
        "SEPTET_SECRET_KEY_FILE": str(secret_key_file(tmp_path)),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'site.sqlite3'}",
    }
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "runserver", "--noreload", address],
        env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
            try:
                _get(f"http://{address}/static/septet-viewer/viewer.css")
                break
            except OSError:
                time.sleep(0.2)
        yield address
    finally:
        server.terminate()
        server.wait(timeout=15)


def test_a_missing_page_is_the_sites_own_404_with_debug_off(site_as_up_runs_it: str) -> None:
    status, headers, body = _get(f"http://{site_as_up_runs_it}/no-such-page/")

    assert status == 404
    assert "<h1>Not found</h1>" in body
    assert "URLconf" not in body and "DEBUG = True" not in body and "Traceback" not in body
    assert "default-src 'self'" in headers["Content-Security-Policy"]


@pytest.mark.parametrize(
    "path",
    [
        "/static/..%2f..%2fmanage.py",
        "/static/..%2f..%2fsettings%2fbase.py",
        "/static/%2e%2e/%2e%2e/etc/passwd",
    ],
)
def test_a_static_path_climbing_out_is_a_404_not_a_500(site_as_up_runs_it: str, path: str) -> None:
    status, _, body = _get(f"http://{site_as_up_runs_it}{path}")

    assert status == 404, f"{path} gave {status}"
    assert "SECRET_KEY" not in body and "import" not in body


def test_static_files_are_still_served_with_debug_off(site_as_up_runs_it: str) -> None:
    status, headers, body = _get(f"http://{site_as_up_runs_it}/static/septet-viewer/viewer.js")

    assert status == 200 and len(body) > 1000
    assert headers["Content-Type"].startswith(("text/javascript", "application/javascript"))


def test_the_secret_key_is_made_once_0600_and_reused(tmp_path: Path) -> None:
    made = secret_key_file(tmp_path)
    key = made.read_text()

    again = secret_key_file(tmp_path)

    assert again == made and again.read_text() == key
    assert stat.S_IMODE(made.stat().st_mode) == 0o600
    (tmp_path / "elsewhere").mkdir()
    assert len(key.strip()) >= 50 and key != secret_key_file(tmp_path / "elsewhere").read_text()


def test_a_secret_key_file_that_cannot_be_trusted_is_refused_and_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "someone-elses-file"
    target.write_text("precious")
    cases = {}
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "secret_key").symlink_to(target)
    cases["a link"] = linked
    readable = tmp_path / "readable"
    readable.mkdir()
    (readable / "secret_key").write_text("k" * 80)
    (readable / "secret_key").chmod(0o644)
    cases["readable by others"] = readable
    short = tmp_path / "short"
    short.mkdir()
    (short / "secret_key").write_text("abc")
    (short / "secret_key").chmod(0o600)
    cases["too short"] = short

    for what, folder in cases.items():
        before = (folder / "secret_key").read_text()
        with pytest.raises(SecretKeyUnusable):
            secret_key_file(folder)
        assert (folder / "secret_key").read_text() == before, what
    assert target.read_text() == "precious"


@pytest.mark.parametrize(
    ("words", "module"),
    [
        ([], "septet_platform.settings.local"),
        (["--dev"], "septet_platform.settings.dev"),
        (["--production"], "septet_platform.settings.prod"),
    ],
)
def test_septet_up_picks_debug_off_settings_unless_asked_for_dev(
    monkeypatch: pytest.MonkeyPatch, words: list[str], module: str
) -> None:
    import septet_platform
    from septet_platform import launcher

    monkeypatch.setattr(septet_platform, "CALLER_SETTINGS_MODULE", None)  # the caller set none

    assert launcher._settings_module(launcher._parser().parse_args(words)) == module


@pytest.mark.parametrize("caller", [None, "septet_platform.settings.dev"])
def test_importing_the_celery_app_first_does_not_change_the_launchers_choice(caller: str | None) -> None:
    """The package's Celery app fills in a default settings module on import; the launcher must still
    see what the caller set (or that it set nothing), whichever module is imported first."""
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    if caller:
        env["DJANGO_SETTINGS_MODULE"] = caller
    program = (
        "import septet_platform.celery, os; from septet_platform import launcher; "
        "print(launcher._settings_module(launcher._parser().parse_args([])))"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.stdout.strip() == (caller or "septet_platform.settings.local"), done.stderr


def test_the_one_command_settings_have_debug_off() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from septet_platform.settings import local; print(local.DEBUG)"],
        env={**os.environ, "SECRET_KEY": "k" * 50}, capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert done.stdout.strip() == "False", done.stderr
