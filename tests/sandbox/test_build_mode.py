"""Build mode of the sandbox, the contract intake builds rely on: the source read-only at /src, an
empty tmpfs of `limits.build_bytes` at /bot (the working folder), no network, stdout handed back
(a tar of the built folder), nothing written to the source folder."""

from __future__ import annotations

import io
import socket
import subprocess
import tarfile
from pathlib import Path

from sandbox_helpers import tree_digest

from referee.tools.sandbox import Limits, MiB, Sandbox

WRAPPER = "cp -R /src/. /bot/ && {build} && tar -C /bot -cf - ."


def _run(source: Path, build: str, limits: Limits | None = None) -> subprocess.CompletedProcess[bytes]:
    sandbox = Sandbox(limits=limits or Limits())
    words = ["sh", "-c", WRAPPER.format(build=build)]
    return subprocess.run(
        sandbox.command(words, folder=source, build=True), capture_output=True, timeout=60, check=False
    )


def _source(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    (source / "bot.py").write_text("print('hello')\n")
    return source


def test_a_build_gets_its_source_at_src_and_hands_back_a_tar_of_bot(tmp_path: Path) -> None:
    source = _source(tmp_path)
    before = tree_digest(source)
    done = _run(source, "echo built > out.txt && pwd > where.txt")
    assert done.returncode == 0, done.stderr
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        names = {name.removeprefix("./") for name in archive.getnames()}
        where = archive.extractfile("./where.txt")
        assert where is not None and where.read() == b"/bot\n"
    assert {"bot.py", "out.txt", "where.txt"} <= names
    assert tree_digest(source) == before, "the build wrote to the source folder"


def test_a_build_cannot_write_its_source(tmp_path: Path) -> None:
    source = _source(tmp_path)
    before = tree_digest(source)
    done = _run(source, "echo evil > /src/bot.py")
    assert done.returncode != 0, "writing /src was allowed"
    assert tree_digest(source) == before


def test_a_build_fills_no_more_than_build_bytes(tmp_path: Path) -> None:
    """Tried: 64 MiB of files into a 16 MiB build folder (each file under the per-file limit)."""
    source = _source(tmp_path)
    fill = "for i in 1 2 3 4 5 6 7 8; do head -c 8388608 /dev/zero > /bot/fill-$i || exit 1; done"
    done = _run(source, fill, Limits(build_bytes=16 * MiB))
    assert done.returncode != 0, "64 MiB fitted into a 16 MiB build folder"
    assert b"No space left" in done.stderr


def test_a_build_has_no_network(tmp_path: Path) -> None:
    """Tried: a connection to a listener the test runs on the host's loopback."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        probe = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)\""
        done = _run(_source(tmp_path), probe)
        assert done.returncode != 0, "the build reached the host's loopback"
        # refused: no IPv4 socket at all (seccomp), and its own empty loopback behind that
        assert b"Address family not supported" in done.stderr, done.stderr
        try:
            listener.accept()
            raise AssertionError("the listener was reached")
        except BlockingIOError:
            pass
    finally:
        listener.close()
