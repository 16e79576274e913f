"""A bot's output, read safely: the tail a failed start quotes, and what the platform's worker
keeps of each seat when its match ends, for the bot's owner.

The bot's stdout and stderr go to a log file in a scratch folder (the output redirection on the
host, so a file of ours); the bot controls its contents and its size (up to
the sandbox's file-size limit), so it is read here with a byte cap, from its end, never through a
link, and cut to whole lines. A house bot's process kept warm between matches has one log for all
of them: only what it wrote since `offset` (its size when this match took it) is this match's.

Whatever is kept for an owner (a seat's log, a start failure's quote, a build's log and a
version's error log through `referee.tools.building.bounded_log`) names no path of the worker:
the sandbox binds the runtime at its own paths, so a traceback or a build's command line showed
the worker's interpreter, its environment, the project's folder and the data folder.
`neutral_paths` writes them as `python`, `<python>`, `<septet>` and `<data>`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

import referee

LOG_TAIL_BYTES = 64 * 1024
"""How much of a seat's output is kept per match: the last 64 KiB, in whole lines."""
SYSTEM_FOLDER = Path("/usr")
"""A Python installed here (and `/` itself) is left as it is: every machine has it, and a bot
sees it in its sandbox anyway."""


def neutral_paths(text: str) -> str:
    """`text` with the worker's own paths replaced by neutral names: its interpreter (`python`),
    its Python environment and installation (`<python>`), the project's folder (`<septet>`) and
    the data folder of SEPTET_DATA_DIR (`<data>`); the most specific name wins, and only whole
    path components match (`/srv/septet-old` is not `/srv/septet`)."""
    pattern, names = _host_paths(os.environ.get("SEPTET_DATA_DIR", ""))
    if pattern is None:
        return text
    return pattern.sub(lambda found: names[found.group(0)], text)


@functools.lru_cache(maxsize=8)
def _host_paths(data_dir: str) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    names: dict[str, str] = {}

    def name(path: str | Path, neutral: str) -> None:
        for variant in {str(path), os.path.realpath(path)}:
            if variant and Path(variant) != Path("/") and not Path(variant).is_relative_to(SYSTEM_FOLDER):
                names.setdefault(variant.rstrip("/"), neutral)

    name(sys.executable, "python")
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        name(prefix, "<python>")
    if data_dir:
        name(data_dir, "<data>")
    project = Path(referee.__file__).resolve().parents[1]
    if project.name != "site-packages":  # installed, the package is inside `<python>` already
        name(project, "<septet>")
    if not names:
        return None, names
    alternatives = "|".join(re.escape(path) for path in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w./-])(?:{alternatives})(?![\w.-])"), names


@dataclass(frozen=True)
class CapturedLog:
    """The kept tail of a bot's output and whether anything before it was dropped."""

    text: str
    truncated: bool


def read_log_tail(
    path: Path, *, offset: int = 0, limit: int = LOG_TAIL_BYTES, whole_lines: bool = True
) -> CapturedLog:
    """The last `limit` bytes of the regular file at `path` written after byte `offset` (whole
    lines only, unless `whole_lines` is False: a caller that cuts long lines itself keeps the end
    of one that began before); empty for a missing file, a link or anything but a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return CapturedLog("", False)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return CapturedLog("", False)
        start = max(offset, info.st_size - limit)
        data = os.pread(fd, limit, start) if info.st_size > start else b""
    except OSError:
        return CapturedLog("", False)
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    truncated = start > offset
    if truncated and whole_lines:
        newline = data.find(b"\n")
        data = data[newline + 1 :] if newline >= 0 else b""  # never keep half a line
    return CapturedLog(neutral_paths(data.decode("utf-8", errors="replace").replace("\x00", "")), truncated)


def log_size(path: Path) -> int:
    """The log's current size without following a link (0 when unreadable): where a warm
    process's output for the next match starts."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def captured_text(text: str, *, limit: int = LOG_TAIL_BYTES) -> CapturedLog:
    """A text kept as a seat's log (a start failure's error and the output it quotes): its last
    `limit` bytes."""
    data = neutral_paths(text).encode()
    return CapturedLog(data[-limit:].decode(errors="ignore"), len(data) > limit)
