"""Compiles the engine with mypyc: extension modules beside their sources, plus compiled.json.

    python scripts/compile_engine.py            # compile when the sources changed (quiet otherwise)
    python scripts/compile_engine.py --force    # compile again
    python scripts/compile_engine.py --clean    # remove the compiled build: the pure one runs
    python scripts/compile_engine.py --toolchain  # exit 0 when this machine can compile it

Which modules, and how `import referee` picks the compiled build or the sources, is said in
referee/engine/build.py. Without mypyc, a C compiler or Python's headers this prints one line and
exits 0: the pure-Python engine runs, as it does in a bot folder. The extension modules and the
manifest are gitignored and replaced atomically (new files renamed over the old), so a process
already running the old ones keeps working; the manifest is written last, after every module.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["SEPTET_PURE_PYTHON"] = "1"  # this process reads the sources, never a stale build

from referee.engine import build  # noqa: E402

BUILD_DIR = ROOT / "build" / "mypyc"
EXTENSION_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"


def missing_toolchain() -> str:
    """What is missing to compile, or "" when mypyc, a C compiler and Python.h are all here."""
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "mypyc is not installed (it comes with mypy, in the dev extra)"
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler})"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "no Python.h (install this Python's development headers)"
    return ""


def extension_paths() -> list[Path]:
    """Where the compiled build's files go: one per module, and the group's shared library."""
    paths = [build.source_path(module).with_suffix(EXTENSION_SUFFIX) for module in build.COMPILED_MODULES]
    group = build.GROUP.split(".")
    return [*paths, ROOT.joinpath(*group[:-1], f"{group[-1]}__mypyc{EXTENSION_SUFFIX}")]


def up_to_date() -> bool:
    try:
        manifest = json.loads(build.MANIFEST.read_text())
    except (OSError, ValueError):
        return False
    return (
        manifest.get("python") == sys.implementation.cache_tag
        and manifest.get("sources") == build.source_digests()
        and all(path.exists() for path in extension_paths())
    )


def clean() -> None:
    build.MANIFEST.unlink(missing_ok=True)  # first: from here on the sources are used
    for path in extension_paths():
        path.unlink(missing_ok=True)


def replace_atomically(source: Path, target: Path) -> None:
    """Copies `source` to `target` through a temporary file renamed over it (a new inode: a
    process that mapped the old file keeps it)."""
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)
    try:
        shutil.copyfile(source, temporary)
        os.chmod(temporary, 0o755)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def compile_engine() -> None:
    from mypyc.build import mypycify
    from setuptools import Distribution

    digests = build.source_digests()  # before compiling: a source edited meanwhile reads as stale
    os.chdir(ROOT)  # mypy reads its settings from pyproject.toml here
    sources = [str(build.source_path(module).relative_to(ROOT)) for module in build.COMPILED_MODULES]
    lib_dir = BUILD_DIR / "lib"
    shutil.rmtree(lib_dir, ignore_errors=True)
    extensions = mypycify(sources, group_name=build.GROUP, target_dir=str(BUILD_DIR / "c"), opt_level="3")
    # A bare Distribution: setuptools' `setup()` would read the project's packaging from pyproject.toml.
    distribution = Distribution({"name": "septet-engine", "ext_modules": extensions})
    distribution.script_args = ["--quiet", "build_ext", "--build-lib", str(lib_dir),
                                "--build-temp", str(BUILD_DIR / "temp")]  # fmt: skip
    distribution.parse_command_line()
    distribution.run_commands()
    build.MANIFEST.unlink(missing_ok=True)  # while modules are replaced, the sources are used
    for target in extension_paths():
        replace_atomically(lib_dir / target.relative_to(ROOT), target)
    manifest = {"python": sys.implementation.cache_tag, "group": build.GROUP, "sources": digests}
    handle, temporary = tempfile.mkstemp(prefix=".compiled.", dir=build.MANIFEST.parent)
    with os.fdopen(handle, "w") as file:
        json.dump(manifest, file, indent=1, sort_keys=True)
    os.chmod(temporary, 0o644)  # mkstemp's 0600 hid it from a sandboxed bot's uid: it ran the slow sources
    os.replace(temporary, build.MANIFEST)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--force", action="store_true", help="compile even when up to date")
    parser.add_argument("--clean", action="store_true", help="remove the compiled build")
    parser.add_argument(
        "--toolchain", action="store_true", help="exit 0 when the engine can be compiled here"
    )
    args = parser.parse_args()
    if args.clean:
        clean()
        print("engine: compiled build removed; the pure-Python engine runs")
        return 0
    problem = missing_toolchain()
    if args.toolchain:
        print(problem or "mypyc, a C compiler and Python.h are here")
        return 1 if problem else 0
    if problem:
        print(f"engine: not compiled, {problem}; the pure-Python engine runs")
        return 0
    if not args.force and up_to_date():
        build.MANIFEST.chmod(0o644)  # a manifest written 0600 by an older version of this script
        return 0
    started = time.monotonic()
    print(f"==> compiling the engine with mypyc ({len(build.COMPILED_MODULES)} modules)", flush=True)
    compile_engine()
    print(f"engine: compiled in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
