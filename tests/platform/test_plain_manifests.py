"""Bounded, plain manifests: a description that is too long or holds control, format or direction
characters, and a bot name in another script, are refused with one line naming the rule, by
`septet check`, by `septet submit` and by the platform's intake, which then stores nothing.

An audit stored an 8.4 MB description with a right-to-left override and served it as the bot's
page; matchmaking loads every active manifest. Each case below says what was tried."""

from __future__ import annotations

import io
import random
import string
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from fixtures_intake import random_copy

from referee.tools.botfolder import DESCRIPTION_MAX_CHARS, BotFolderError, load_manifest
from septet_platform.bots.archives import ArchiveRejected
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.services import bot_version_submit

ROOT = Path(__file__).resolve().parents[2]
SEPTET = str(Path(sys.executable).with_name("septet"))

BAD_DESCRIPTIONS: dict[str, tuple[str, str]] = {
    "a description of 8.4 million characters": (
        "".join(random.Random(7).choices(string.ascii_letters + " ", k=8_400_000)),
        rf"description is 8400000 characters, over the limit of {DESCRIPTION_MAX_CHARS}: shorten it",
    ),
    "one character over the limit": (
        "y" * (DESCRIPTION_MAX_CHARS + 1),
        rf"description is {DESCRIPTION_MAX_CHARS + 1} characters, over the limit",
    ),
    "a right-to-left override (U+202E) reversing what follows": (
        "plays well \u202eydeerg",
        r"description has U\+202E \(RIGHT-TO-LEFT OVERRIDE\) at character 12: .*"
        r"direction characters; remove it",
    ),
    "a first-strong isolate (U+2068)": ("a \u2068b", r"description has U\+2068 \(FIRST STRONG ISOLATE\)"),
    "a left-to-right mark (U+200E)": ("a\u200eb", r"description has U\+200E \(LEFT-TO-RIGHT MARK\)"),
    "an Arabic letter mark (U+061C)": ("a\u061cb", r"description has U\+061C \(ARABIC LETTER MARK\)"),
    "a zero-width joiner (format character U+200D)": ("de\u200dmo", r"description has U\+200D"),
    "a control character (BEL, U+0007)": ("ring \x07", r"description has U\+0007 \(a control"),
    "a newline, which would break the line it is shown in": ("two\nlines", r"description has U\+000A"),
    "an escape sequence (ESC, U+001B) that recolours a terminal": (
        "\x1b[31mred",
        r"description has U\+001B",
    ),
}

GOOD_DESCRIPTIONS = [
    "Python example (the SDK): a random legal action in every game",
    "Ярослав's bot — bids low, plays high; 小明 helped 🂡",
    "z" * DESCRIPTION_MAX_CHARS,
]


def _folder_with(tmp_path: Path, *, description: str | None = None, name: str | None = None) -> Path:
    """A copy of the random example whose manifest has this description or name (TOML escapes
    keep every character as it is, control characters included)."""
    folder = random_copy(tmp_path)
    path = folder / "septet-bot.toml"
    text = path.read_text(encoding="utf-8")
    if name is not None:
        text = text.replace('name = "my-random"', f'name = "{name}"')
    if description is not None:
        escaped = "".join(f"\\u{ord(char):04X}" if ord(char) < 0x20 else char for char in description)
        lines = [line for line in text.splitlines() if not line.startswith("description")]
        text = "\n".join([*lines, f'description = "{escaped}"', ""])
    path.write_text(text, encoding="utf-8")
    return folder


def _septet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SEPTET, *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


@pytest.mark.parametrize("tried", list(BAD_DESCRIPTIONS))
def test_a_bad_description_is_refused_with_one_line_naming_the_rule(tried: str, tmp_path: Path) -> None:
    description, reason = BAD_DESCRIPTIONS[tried]
    folder = _folder_with(tmp_path, description=description)
    with pytest.raises(BotFolderError, match=reason) as refused:
        load_manifest(folder)
    message = str(refused.value)
    assert "\n" not in message and len(message) < 400, "one short line, never the description itself"


@pytest.mark.parametrize("description", GOOD_DESCRIPTIONS)
def test_plain_text_in_any_script_up_to_the_limit_is_accepted(description: str, tmp_path: Path) -> None:
    assert load_manifest(_folder_with(tmp_path, description=description)).description == description


def test_a_bot_name_with_cyrillic_letters_is_refused_as_the_names_are_ascii_only(tmp_path: Path) -> None:
    """Tried: `grееdy` (two Cyrillic `е`) beside the house bot `greedy`. Bot names are a-z, 0-9
    and '-' only, so no bot name can be a look-alike in another script."""
    folder = _folder_with(tmp_path, name="gr\u0435\u0435dy")
    with pytest.raises(BotFolderError, match=r"name must be 1-40 characters of a-z, 0-9 and '-', not 'gr"):
        load_manifest(folder)


def test_septet_check_refuses_a_right_to_left_override_before_starting_anything(tmp_path: Path) -> None:
    """Tried: `septet check` on a folder whose description holds U+202E."""
    folder = _folder_with(tmp_path, description="nice \u202eevil")
    run = _septet("check", str(folder))
    assert run.returncode != 0
    assert "description has U+202E (RIGHT-TO-LEFT OVERRIDE)" in run.stderr
    assert run.stderr.strip().count("\n") == 0, run.stderr


def test_septet_submit_refuses_a_long_description_before_uploading(tmp_path: Path) -> None:
    """Tried: `septet submit` of a folder with a 301-character description, to a server that is
    not there: the manifest is refused while packing, so nothing is ever sent."""
    folder = _folder_with(tmp_path, description="w" * (DESCRIPTION_MAX_CHARS + 1))
    run = _septet("submit", str(folder), "--server", "127.0.0.1:9", "--token", "sep_" + "0" * 55)
    assert run.returncode != 0
    assert f"over the limit of {DESCRIPTION_MAX_CHARS}" in run.stderr, run.stderr
    assert "connect" not in run.stderr.lower()


@pytest.fixture
def alice(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("alice", password="x")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "tried",
    [
        "a description of 8.4 million characters",
        "a right-to-left override (U+202E) reversing what follows",
        "a control character (BEL, U+0007)",
    ],
)
def test_intake_refuses_a_bad_description_and_stores_nothing(
    tried: str, alice: User, settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tried: an archive packed by hand (as a hostile client would, past `septet submit`'s own
    check) whose manifest breaks the description's rule, submitted to the platform."""
    settings.SEPTET_ARCHIVES_DIR = tmp_path / "archives"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    description, reason = BAD_DESCRIPTIONS[tried]
    archive = _packed_by_hand(_folder_with(tmp_path, description=description))
    with pytest.raises(ArchiveRejected, match=reason) as refused:
        bot_version_submit(owner=alice, archive=archive)
    assert "\n" not in str(refused.value)
    assert not Bot.objects.exists() and not BotVersion.objects.exists()
    assert not (tmp_path / "archives").exists() or not any((tmp_path / "archives").rglob("*"))
    assert list(scratch.iterdir()) == []


def _packed_by_hand(folder: Path) -> bytes:
    """The folder as a .tar.gz made without `pack_folder` (which would refuse the manifest)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.add(path, arcname=path.relative_to(folder).as_posix())
    return buffer.getvalue()
