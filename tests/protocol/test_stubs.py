"""The committed Python stubs match protos/septet/v1 (regenerate: python scripts/generate_protos.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_stubs_are_not_stale() -> None:
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_protos.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_stubs_import_from_the_referee_package() -> None:
    from referee.botkit.protocol import bot_pb2, bot_pb2_grpc

    assert bot_pb2.DESCRIPTOR.package == "septet.v1"
    assert hasattr(bot_pb2_grpc, "BotServicer")
