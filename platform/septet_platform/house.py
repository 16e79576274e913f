"""What `septet up` puts into a platform before it opens: ladders, the demo account, the house bots.

Every step is idempotent, so a restart on the same data folder changes nothing that is already
there: the house bots are registered once, and the demo account keeps the password and API token
it was given on its first start (kept in the data folder, readable by its owner only) instead of
minting a new token, valid for ever, at every start.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import stat
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DEMO_USER = "demo"
DEMO_FILE = "demo_account.json"
DEMO_TOKEN_NAME = "septet up demo"
DEMO_PASSWORD_BYTES = 12


@dataclass(frozen=True)
class HouseBot:
    """An example bot folder played as a house bot; `extra_arguments` go after its command."""

    folder: str
    extra_arguments: tuple[str, ...] = ()


MONTECARLO_HOUSE_BUDGET = "0.05"
"""Seconds per decision for the house montecarlo: a fifth of its default, so the strong opponent a
newcomer meets keeps the ladders moving (an oh-hell game in seconds, not a minute) on the two
match slots `septet up` has by default."""

HOUSE_BOTS = (
    HouseBot("random"),
    HouseBot("greedy"),
    HouseBot("half-greedy"),
    HouseBot("node-random"),
    HouseBot("montecarlo", ("--budget", MONTECARLO_HOUSE_BUDGET)),
)


class PrivateFileUnusable(Exception):
    """A data-folder file with secrets exists but cannot be trusted; the message says why."""


def check_private_file(path: Path) -> None:
    """Refuses a link, a non-file, or a file others may read: the launcher's secrets live in them."""
    status = path.lstat()
    if not stat.S_ISREG(status.st_mode):
        raise PrivateFileUnusable(f"{path} is not a regular file")
    if status.st_mode & 0o077:
        mode = f"{status.st_mode & 0o777:o}"
        raise PrivateFileUnusable(f"{path} may be read by others (mode {mode}); chmod 600 it")


@dataclass(frozen=True)
class DemoAccount:
    username: str
    password: str | None
    """None once its owner changed it on the site: the launcher no longer knows it."""
    token: str


def demo_account_ensure(data: Path) -> DemoAccount:
    """The demo account, usable on the site and over the Arena: created with a random password and
    an API token on the first start, both kept in `data/demo_account.json` (0600) and reused while
    they still work; a revoked token or a lost file gets a new one."""
    from django.contrib.auth import get_user_model

    from septet_platform.accounts.services import (
        AuthenticationFailed,
        api_token_authenticate,
        api_token_create,
    )

    path = data / DEMO_FILE
    kept = _read_private_json(path)
    user, _ = get_user_model().objects.get_or_create(username=DEMO_USER)
    password: str | None = kept.get("password")
    if not user.password or not user.has_usable_password():  # new, or made before it had one
        password = secrets.token_urlsafe(DEMO_PASSWORD_BYTES)
        user.set_password(password)
        user.save(update_fields=["password"])
    elif not (password and user.check_password(password)):
        password = None  # changed on the site: theirs now
    token: str | None = kept.get("token")
    try:
        valid = token is not None and api_token_authenticate(token=token).pk == user.pk
    except AuthenticationFailed:
        valid = False
    if not valid:
        _, token = api_token_create(user=user, name=DEMO_TOKEN_NAME)
    assert token is not None
    _write_private_json(path, {"username": DEMO_USER, "password": password, "token": token})
    return DemoAccount(username=DEMO_USER, password=password, token=token)


def house_bots_ensure(examples: Path, *, say: Callable[[str], None]) -> None:
    """Registers and qualifies each house bot not registered yet, owned by the demo account."""
    from django.contrib.auth import get_user_model

    from referee.tools.packing import pack_folder
    from septet_platform.bots.models import Bot, BotVersion
    from septet_platform.bots.qualification import bot_version_qualify
    from septet_platform.bots.services import bot_version_submit

    owner, _ = get_user_model().objects.get_or_create(username=DEMO_USER)
    for house in HOUSE_BOTS:
        source = examples / house.folder
        if not (source / "septet-bot.toml").is_file():
            say(f"no house bot {house.folder}: {source} is not a bot folder")
            continue
        if Bot.objects.filter(name=_manifest_name(source)).exists():
            continue
        with tempfile.TemporaryDirectory(prefix="septet-house-") as scratch:
            folder = _house_copy(source, Path(scratch) / house.folder, house.extra_arguments)
            archive = pack_folder(folder, build_first=True)  # node_modules for node-random
        version = bot_version_submit(owner=owner, archive=archive)
        Bot.objects.filter(pk=version.bot_id).update(is_house=True)
        say(f"qualifying house bot {house.folder} ...")
        if bot_version_qualify(version_id=version.pk).status != BotVersion.Status.ACTIVE:
            say(f"house bot {house.folder} did not qualify: see its error log in the admin")


def _manifest_name(folder: Path) -> str:
    with (folder / "septet-bot.toml").open("rb") as manifest:
        return str(tomllib.load(manifest)["name"])


def _house_copy(source: Path, target: Path, extra_arguments: tuple[str, ...]) -> Path:
    """The example folder as the house plays it: its manifest's command with `extra_arguments`
    appended (the examples themselves stay as authors copy them)."""
    shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    if extra_arguments:
        manifest_path = target / "septet-bot.toml"
        with manifest_path.open("rb") as handle:
            manifest = tomllib.load(handle)
        manifest["command"] = [*manifest["command"], *extra_arguments]
        manifest_path.write_text(_toml(manifest))
    return target


def _toml(table: dict[str, object]) -> str:
    """A flat manifest (strings, numbers, booleans, lists of them) as TOML: JSON's string and list
    syntax is valid TOML for these values."""
    lines = []
    for key, value in table.items():
        if isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, dict):
            raise ValueError(f"a house manifest has no tables, but {key!r} is one")
        else:
            lines.append(f"{key} = {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"


def _read_private_json(path: Path) -> dict[str, str]:
    try:
        check_private_file(path)
    except FileNotFoundError:
        return {}
    try:
        loaded = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError):
        return {}  # torn or edited by hand: made anew
    if not isinstance(loaded, dict):
        return {}
    return {key: value for key, value in loaded.items() if isinstance(value, str)}


def _write_private_json(path: Path, content: dict[str, str | None]) -> None:
    """Written to a new 0600 file beside it, then renamed over it: never readable by others, never
    half-written."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(temporary, flags, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump(content, handle)
    os.replace(temporary, path)
