"""A bot starts whatever the depth of the temporary folder: its unix socket's path must fit in
108 bytes, so a TMPDIR too deep for it (pytest's own folders can be) is not used for the socket."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from referee.tools.botfolder import MAX_SOCKET_PATH, start_bot

EXAMPLE = Path(__file__).resolve().parents[2] / "bots" / "examples" / "random"


def test_a_bot_starts_under_a_temporary_folder_too_deep_for_a_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    assert len(str(deep)) > MAX_SOCKET_PATH
    monkeypatch.setenv("TMPDIR", str(deep))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again

    bot = start_bot(EXAMPLE)
    try:
        assert bot.address.startswith("unix:") and len(bot.address) - len("unix:") <= MAX_SOCKET_PATH
    finally:
        bot.stop()
    assert not Path(bot.address.removeprefix("unix:")).exists(), "its folder is removed with it"
