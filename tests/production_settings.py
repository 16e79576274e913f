"""A production setting as a fresh interpreter reads it: prod settings read the environment at
import time, which a test process that already imported its own settings cannot do again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def production_setting(name: str, environment: dict[str, str] | None = None) -> str:
    """str() of `septet_platform.settings.prod.<name>`, imported with this environment less
    DEBUG, SECRET_KEY and `name` itself, plus a valid SECRET_KEY and `environment`."""
    env = {key: value for key, value in os.environ.items() if key not in ("DEBUG", "SECRET_KEY", name)}
    env |= {"PYTHONPATH": str(ROOT / "platform"), "SECRET_KEY": "x" * 40, **(environment or {})}
    script = f"import septet_platform.settings.prod as p; print(p.{name})"
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()
