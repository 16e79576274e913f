"""`pip install .` and then `septet up`, outside any clone: the package alone must start the platform
(the container image installs it this way), with no example bots to register, and say so."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import urllib.request
from pathlib import Path

import pytest
from start_support import READY, start

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow]


def _installed_septet(folder: Path) -> Path:
    """A new virtual environment holding the built wheel of this tree; its dependencies come from
    the test's own environment (added after its own site-packages, so the wheel's code is used,
    never the clone's)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(folder / "wheel"), str(ROOT)],
        check=True, capture_output=True, cwd=folder,
    )  # fmt: skip
    environment = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(environment)], check=True, capture_output=True)
    python = environment / "bin" / "python"
    own_site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    (Path(own_site) / "septet-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    wheel = next((folder / "wheel").glob("septet-*.whl"))
    subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    return environment / "bin" / "septet"


def test_septet_up_from_an_installed_package_starts_without_the_examples(tmp_path: Path) -> None:
    septet = _installed_septet(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    chosen = ("DJANGO_SETTINGS_MODULE", "PYTHONPATH", "REDIS_URL", "DATABASE_URL", "VIRTUAL_ENV")
    env = {key: value for key, value in os.environ.items() if key not in chosen}
    started = start([str(septet), "up"], elsewhere, env=env, cwd=elsewhere)
    try:
        started.wait_until(READY, 240)
        said = started.said()
        assert "no example bots in" in said and "--examples DIR" in said, said
        assert "Traceback" not in said, said
        for name in ("web", "worker1", "beat", "arena"):
            pid = started.children[name]
            code = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            assert str(ROOT / "manage.py") not in code, f"{name} runs the clone's manage.py"
        with urllib.request.urlopen(f"http://{started.web}/static/web/site.css", timeout=20) as response:
            assert response.status == 200, "the package's own static files are served"
        with urllib.request.urlopen(f"http://{started.web}/", timeout=20) as response:
            assert response.status == 200
    finally:
        started.stop()
