"""Which build of the engine runs: the compiled one (mypyc) or the pure-Python sources.

`scripts/compile_engine.py` compiles `COMPILED_MODULES` with mypyc into extension modules beside
their sources (gitignored) and writes `compiled.json`, the SHA-256 of every source it compiled.
Python prefers an extension module to a source of the same name, so `select()`, run by
`import referee` before any engine module loads, keeps the compiled modules only when:

- `SEPTET_PURE_PYTHON` is not set to 1 (the pure build, which CI tests as well), and
- `compiled.json` matches the sources on disk: a source edited after the last compile would
  otherwise be hidden by its older compiled module.

Otherwise it installs a finder that loads every engine module from its `.py` source. A machine
without a C compiler, or a checkout never compiled, simply runs the sources: both builds play
the same games and write byte-identical replays (tests/referee/test_engine_build.py).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

COMPILED_MODULES = (
    "referee.engine.cards",
    "referee.engine.tricks",
    "referee.engine.games.base",
    "referee.engine.games.bidding",
    "referee.engine.games.oh_hell",
    "referee.engine.games.seven_up_seven_down",
    "referee.engine.games.oh7",
    "referee.engine.games.oh7_dummy",
    "referee.engine.games.black_sevens",
    "referee.engine.match",
    "referee.engine.replay",
    "referee.engine.playout",
)
"""The modules compiled into one mypyc group. Left out: the packages' `__init__` modules (they
only load the others), this module (it must run before the choice is made) and `players` (its
runtime-checkable Protocol does not compile, and a player's own code runs interpreted anyway)."""

GROUP = "referee.engine.native"
"""The mypyc group: its shared library, `native__mypyc`, sits beside this module."""

PURE_ENV = "SEPTET_PURE_PYTHON"
SOURCE_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding the `referee` package."""
MANIFEST = Path(__file__).with_name("compiled.json")

reason = "not selected yet"
"""Why the pure build runs, or "" when the compiled one was kept (set by `select`)."""


def source_path(module: str) -> Path:
    return SOURCE_ROOT.joinpath(*module.split(".")).with_suffix(".py")


def source_digests(modules: Sequence[str] = COMPILED_MODULES) -> dict[str, str]:
    """Module name -> SHA-256 (hex) of its source, as the manifest records them."""
    import hashlib  # here, not at the top: a checkout never compiled does not pay for the import
    return {module: hashlib.sha256(source_path(module).read_bytes()).hexdigest() for module in modules}


def _manifest_problem() -> str:
    """Why the compiled modules must not be used, or "" when they match the sources."""
    if not MANIFEST.exists():
        return "not compiled (scripts/compile_engine.py compiles it)"
    import json

    try:
        manifest = json.loads(MANIFEST.read_text())
    except FileNotFoundError:
        return "not compiled (scripts/compile_engine.py compiles it)"
    except (OSError, ValueError) as error:
        return f"unreadable {MANIFEST.name} ({error})"
    if not isinstance(manifest, dict) or manifest.get("python") != sys.implementation.cache_tag:
        return "compiled for another Python (run scripts/compile_engine.py)"
    recorded = manifest.get("sources")
    try:
        if recorded != source_digests(tuple(recorded or ())) or set(recorded) != set(COMPILED_MODULES):
            return "compiled build out of date: sources changed since (run scripts/compile_engine.py)"
    except OSError as error:
        return f"a compiled source is unreadable ({error})"
    return ""


class SourceFinder(importlib.abc.MetaPathFinder):
    """Finds `referee.engine.*` modules as `.py` sources only, never as extension modules."""

    def __init__(self) -> None:
        self._finders: dict[str, importlib.machinery.FileFinder] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if path is None or not fullname.startswith("referee.engine."):
            return None
        for entry in path:
            finder = self._finders.get(entry)
            if finder is None:
                loader = (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES)
                finder = self._finders[entry] = importlib.machinery.FileFinder(entry, loader)
            spec = finder.find_spec(fullname)
            if spec is not None and spec.loader is not None:
                return spec
        return None


def select() -> None:
    """Keeps the compiled build, or makes every engine module load from its source (see above)."""
    global reason
    if any(isinstance(finder, SourceFinder) for finder in sys.meta_path):
        return
    reason = f"{PURE_ENV}=1" if os.environ.get(PURE_ENV) == "1" else _manifest_problem()
    if reason:
        sys.meta_path.insert(0, SourceFinder())


def is_compiled() -> bool:
    """Whether the engine runs compiled (judged by what `referee.engine.match` was loaded from)."""
    import referee.engine.match as match

    return (match.__file__ or "").endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def describe() -> str:
    """One line for people (`septet --version`, benchmarks): the build in use, and why."""
    if is_compiled():
        return "engine compiled (mypyc)"
    return f"engine pure Python: {reason or 'the compiled modules did not load'}"
