"""The Go example (bots/examples/go-lowest) builds from bot.proto with Debian's packages alone,
offline, through its manifest's build step, and passes `septet check`, in the sandbox and plain.
Skipped, saying what is missing, where the Go toolchain is not installed (apt-get install
golang-go protobuf-compiler protoc-gen-go protoc-gen-go-grpc golang-google-grpc-dev
golang-github-golang-protobuf-1-5-dev: about 100 MB of archives)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from referee.tools.botfolder import load_manifest
from referee.tools.sandbox import available

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "bots" / "examples" / "go-lowest"
SEPTET = str(Path(sys.executable).with_name("septet"))
GRPC_GO = Path("/usr/share/gocode/src/google.golang.org/grpc/health")
PROTOBUF_1_5 = Path("/usr/share/gocode/src/github.com/golang/protobuf/proto/wrappers.go")
"""Debian's golang-github-golang-protobuf-1-5-dev (1.3's codec cannot read the APIv2 stubs)."""

MISSING = [
    tool for tool in ("go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc") if shutil.which(tool) is None
]
MISSING += [f"{path}" for path in (GRPC_GO, PROTOBUF_1_5) if not path.exists()]
pytestmark = pytest.mark.skipif(
    bool(MISSING), reason=f"the Go toolchain is not installed: {', '.join(MISSING)}"
)


def test_the_go_example_builds_offline_and_passes_check_sandboxed_and_plain(tmp_path: Path) -> None:
    """`septet check` of the source folder builds it in the sandbox (the default: offline, into a
    copy, the folder left as it was) and passes; `--no-sandbox` runs build.sh in the folder and
    passes on the binary it leaves there."""
    folder = tmp_path / "go-lowest"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("go-lowest", "src"))
    env = {**os.environ, "SEPTET_BUILD_CACHE": str(tmp_path / "stamps"), "TMPDIR": str(tmp_path)}
    env.pop("GOFLAGS", None)
    binary = folder / "go-lowest"
    if available():
        sandboxed = subprocess.run(
            [SEPTET, "check", str(folder), "--game", "oh-hell", "--games", "1"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env,
        )  # fmt: skip
        assert sandboxed.returncode == 0 and "PASS" in sandboxed.stdout, sandboxed.stdout + sandboxed.stderr
        assert "building go-lowest in the sandbox" in sandboxed.stderr
        assert not binary.exists(), "the sandboxed build wrote into the folder"
    run = subprocess.run(
        [SEPTET, "check", str(folder), "--no-sandbox", "--games", "1", "--json"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["passed"] and report["bot"] == "go-lowest"
    assert {game["game"] for game in report["games"]} == set(load_manifest(folder).games)
    assert binary.is_file() and os.access(binary, os.X_OK), "the build step left the binary in the folder"
    assert binary.stat().st_size < 10 * 1024 * 1024, (
        "stripped (-ldflags='-s -w'): under the 10 MiB per-file limit"
    )
