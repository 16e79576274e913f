"""Building a submitted bot folder once, offline, in a sandbox, into a tar the host then checks.

A manifest's `build` (`npm ci`, `make`) is code the bot's author wrote, so the platform runs it
exactly once per version, at intake, and trusts nothing it leaves behind:

- the source folder is visible read-only; the build works on a copy in an empty private tmpfs
  whose size is the build's whole disk budget (`BuildLimits.disk_bytes`: the sum of everything it
  writes, its npm cache and temporary files included, not a per-file limit);
- there is no network (a new network namespace with only a loopback), so a build can neither
  download nor reach the site, the Arena, Redis or PostgreSQL; an author vendors what the bot
  needs (node_modules, wheels) or builds it before submitting (`septet submit` runs the build
  locally first). A package index reached through an organiser's allow-list proxy is not
  implemented: builds are offline, with no setting to change that;
- a wall-clock limit (the process group is killed), the sandbox's process and CPU limits;
- what comes back is a plain tar on the build's stdout, read with a byte cap in proportion to the
  upload (`built_output_limit`: a 1 KiB upload cannot become a 200 MiB stored archive); symbolic links are
  deleted inside the sandbox before packing (npm's node_modules/.bin), and the host checks the tar
  with the same checker as an upload, which refuses any link, device or path outside the folder.
  Nothing the build wrote is ever opened on the host as a path: there is no stamp, no folder the
  build could have changed, and the build's processes are gone once this returns.

The build's own output (stdout and stderr) becomes its log, kept as a bounded tail (`bounded_log`).
`bounded_log` is also how every other error text a bot can cause is cut down before it is stored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import shlex
import shutil
import signal
import subprocess
import tarfile
import tempfile
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from referee.tools.bot_logs import neutral_paths
from referee.tools.sandbox import BOT_DIR, SOURCE_DIR, Limits, Sandbox

MiB = 1 << 20
LOG_BYTES = 4096
"""What is kept of any log a bot writes (build output, stderr, qualification), per version."""
LINE_CHARS = 240
"""Longer lines are cut to this many characters and marked."""
TRUNCATED = "[...]"
BUILD_DIR = BOT_DIR
"""Where the build works inside the sandbox: an empty tmpfs of the disk budget (build mode)."""


BUILT_FLOOR_BYTES = 32 * MiB
"""What any build may write back, however small its upload: a compiled gRPC bot is a binary of
10-25 MiB (the Go example's is 8 MiB), written from a few KiB of source."""
BUILT_PER_UPLOAD_BYTE = 4
"""Above the floor, a build may write back this many times its upload's unpacked size."""
BUILT_CEILING_BYTES = 64 * MiB
"""What no build may write back, whatever its upload."""


def built_output_limit(upload_bytes: int) -> int:
    """The most a build of an upload of `upload_bytes` (its files, unpacked) may write back: the
    built folder is stored for every version and unpacked on every worker that plays it, so it is
    bounded by what was uploaded (at least BUILT_FLOOR_BYTES, at most BUILT_CEILING_BYTES)."""
    return min(BUILT_CEILING_BYTES, max(BUILT_FLOOR_BYTES, BUILT_PER_UPLOAD_BYTE * upload_bytes))


@dataclass(frozen=True)
class BuildLimits:
    """What one build may use. The disk budget is the size of the tmpfs the build works on."""

    seconds: float = 600.0
    disk_bytes: int = 512 * MiB
    output_bytes: int = BUILT_CEILING_BYTES
    """The largest tar the host reads back (the checker then applies the archive limits)."""
    upload_bytes: int | None = None
    """The upload's unpacked size `output_bytes` was taken from (`for_upload`), for the message."""

    def for_upload(self, upload_bytes: int) -> BuildLimits:
        """These limits for the build of an upload of `upload_bytes`: its output at most
        `built_output_limit(upload_bytes)` (and never more than `output_bytes` already allows)."""
        output = min(self.output_bytes, built_output_limit(upload_bytes))
        return dataclasses.replace(self, output_bytes=output, upload_bytes=upload_bytes)

    def output_refusal(self, written: int) -> str:
        """Why a build that wrote `written` bytes back is refused, in the owner's words."""
        reason = (
            f"the build wrote {size_text(written)}; a build may write at most {size_text(self.output_bytes)}"
        )
        if self.upload_bytes is not None:
            reason += (
                f" for an upload of {size_text(self.upload_bytes)} ({BUILT_PER_UPLOAD_BYTE} times the "
                f"upload, at least {size_text(BUILT_FLOOR_BYTES)}, at most {size_text(BUILT_CEILING_BYTES)})"
            )
        return reason


def size_text(count: int) -> str:
    """A byte count as people read it: "963 bytes", "12.5 KiB", "95.4 MiB", "32 MiB"."""
    if count < 1024:
        return f"{count} bytes"
    for unit, size in (("MiB", MiB), ("KiB", 1024)):
        if count >= size:
            return f"{count / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{count} bytes"


@dataclass(frozen=True)
class BuildOutcome:
    """A finished build: `tar` is the built folder when `ok`; `log` its bounded output."""

    ok: bool
    reason: str
    log: str
    tar: bytes = b""
    seconds: float = 0.0
    too_big: bool = False
    """It failed for what it wrote back (more than its output limit, or than its owner's storage
    quota has room for), not for a failing command."""


def bounded_log(text: str, *, limit: int = LOG_BYTES, line_chars: int = LINE_CHARS) -> str:
    """The last lines of `text` that fit in `limit` UTF-8 bytes, each cut to `line_chars`
    characters with a marker; a marker line first when lines were dropped. Whole lines only, so a
    stored log stays readable and a bot printing 64 MiB cannot make a version unreadable. The
    worker's paths are written as neutral names (`bot_logs.neutral_paths`)."""
    lines = [_cut(line, line_chars) for line in neutral_paths(text).splitlines() if line.strip()]
    kept: list[str] = []
    used = len(TRUNCATED) + 1
    for line in reversed(lines):
        size = len(line.encode()) + 1
        if used + size > limit:
            break
        kept.append(line)
        used += size
    kept.reverse()
    if len(kept) < len(lines):
        kept.insert(0, f"{TRUNCATED} {len(lines) - len(kept)} earlier lines not kept")
    return "\n".join(kept)


def _cut(line: str, line_chars: int) -> str:
    line = line.rstrip()
    return line if len(line) <= line_chars else f"{line[:line_chars]} {TRUNCATED}"


def build_script(build: Sequence[str]) -> str:
    """The shell script the sandbox runs: copy the read-only source to the private tmpfs, build
    there with the build's output on stderr, drop links, and write the tree as a tar to stdout."""
    return (
        "set -e; umask 022; "
        f"cp -R {SOURCE_DIR}/. {BUILD_DIR}/ && cd {BUILD_DIR} && "
        f"( {shlex.join(build)} ) >&2 && cd {BUILD_DIR} && "
        f"find {BUILD_DIR} -type l -delete && "
        f"find . -mindepth 1 \\( -type f -o -type d \\) | LC_ALL=C sort | "
        f"tar --no-recursion --numeric-owner -cf - -T -"
    )


def build_in_sandbox(
    folder: Path,
    build: Sequence[str],
    sandbox: Sandbox,
    *,
    limits: BuildLimits = BuildLimits(),
) -> BuildOutcome:
    """Runs `build` on a copy of `folder` inside `sandbox` with no network and `limits`; returns
    the built tree as a tar (to be checked by the caller) or why it failed. Never raises for
    anything the build does; a sandbox that cannot be made raises SandboxError (ours)."""
    confined = dataclasses.replace(sandbox, limits=_sandbox_limits(sandbox.limits, limits))
    started = time.monotonic()
    prepared = confined.prepare(
        ["sh", "-c", build_script(build)], folder=folder, build=True, env={"npm_config_offline": "true"}
    )
    try:
        process = subprocess.Popen(
            prepared.words,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
        output = _CappedReader(process.stdout, limits.output_bytes)
        log = _TailReader(process.stderr, 4 * LOG_BYTES)
        timed_out = _wait(process, limits.seconds)
    finally:
        prepared.cleanup()  # every process of the build is gone before we go on
    output.join()
    log.join()
    seconds = time.monotonic() - started
    text = bounded_log(log.text())
    if timed_out:
        reason = f"the build ran past its limit of {limits.seconds:g} s and was stopped"
        return BuildOutcome(False, reason, text, b"", seconds)
    if output.over:
        return BuildOutcome(False, limits.output_refusal(output.total), text, b"", seconds, too_big=True)
    if process.returncode != 0:
        reason = f"the build `{shlex.join(build)}` failed (exit code {process.returncode})"
        if _disk_full(text):
            reason += f"; it ran out of its {limits.disk_bytes // MiB} MiB of disk"
        return BuildOutcome(False, reason, text, b"", seconds)
    return BuildOutcome(True, "built", text, output.data(), seconds)


def build_unsandboxed(
    folder: Path, build: Sequence[str], *, limits: BuildLimits = BuildLimits()
) -> BuildOutcome:
    """For development only, where there is no sandbox and the organiser allowed bots to run bare
    (SEPTET_ALLOW_UNSANDBOXED): the same build on a copy in a scratch folder, with the caller's
    rights and network; links are deleted (never followed) before the tree is packed as a tar."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="septet-build-bare-") as scratch:
        work = Path(scratch) / "bot"
        shutil.copytree(folder, work, symlinks=True)
        try:
            done = subprocess.run(
                list(build), cwd=work, capture_output=True, timeout=limits.seconds, check=False
            )
        except subprocess.TimeoutExpired:
            reason = f"the build ran past its limit of {limits.seconds:g} s and was stopped"
            return BuildOutcome(False, reason, "", b"", time.monotonic() - started)
        text = bounded_log((done.stdout + done.stderr).decode(errors="replace"))
        if done.returncode != 0:
            reason = f"the build `{shlex.join(build)}` failed (exit code {done.returncode})"
            return BuildOutcome(False, reason, text, b"", time.monotonic() - started)
        tar = _tar_without_links(work)
        if len(tar) > limits.output_bytes:
            reason = limits.output_refusal(len(tar))
            return BuildOutcome(False, reason, text, b"", time.monotonic() - started, too_big=True)
        return BuildOutcome(True, "built", text, tar, time.monotonic() - started)


def _tar_without_links(folder: Path) -> bytes:
    """A plain tar of the files and folders under `folder`, sorted; links are deleted first."""
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            if os.path.islink(os.path.join(root, name)):
                os.unlink(os.path.join(root, name))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in sorted(folder.rglob("*")):
            archive.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    return buffer.getvalue()


def _sandbox_limits(play: Limits, build: BuildLimits) -> Limits:
    """The sandbox's limits for a build: its private /tmp is the whole disk budget."""
    return dataclasses.replace(play, build_bytes=build.disk_bytes)


def _disk_full(text: str) -> bool:
    lowered = text.lower()
    return "no space left" in lowered or "enospc" in lowered or "file too large" in lowered


def _wait(process: subprocess.Popen[bytes], seconds: float) -> bool:
    """Waits for the build; past `seconds`, kills its whole process group. True if it timed out."""
    try:
        process.wait(timeout=seconds)
        return False
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return True


class _CappedReader(threading.Thread):
    """Reads a pipe to its end, keeping at most `cap` bytes (and noting it there was more, and how
    much came in all: `total`)."""

    def __init__(self, stream: IO[bytes] | None, cap: int) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.cap = cap
        self.chunks: list[bytes] = []
        self.size = 0
        self.total = 0
        self.over = False
        self.start()

    def run(self) -> None:
        if self.stream is None:
            return
        with self.stream:
            while chunk := self.stream.read(64 * 1024):
                self.total += len(chunk)
                if self.over or self.size + len(chunk) > self.cap:
                    self.over, self.chunks = True, []  # nothing of it is used any more
                    continue  # drained, not kept: the build must not block on a full pipe
                self.chunks.append(chunk)
                self.size += len(chunk)

    def data(self) -> bytes:
        return b"".join(self.chunks)


class _TailReader(threading.Thread):
    """Reads a pipe to its end, keeping only its last `cap` bytes."""

    def __init__(self, stream: IO[bytes] | None, cap: int) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.cap = cap
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.start()

    def run(self) -> None:
        if self.stream is None:
            return
        with self.stream:
            while chunk := self.stream.read(64 * 1024):
                self.chunks.append(chunk[-self.cap :])
                self.size += len(self.chunks[-1])
                while self.size - len(self.chunks[0]) >= self.cap:
                    self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        return b"".join(self.chunks)[-self.cap :].decode(errors="replace")
