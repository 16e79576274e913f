"""The adapters are thin layers over the domain apps and never import one another (DESIGN.md, "Live
tables and remote seats"): the site (`web`), the Arena's gRPC API (`arena_api`) and the live
stream (`live_api`) each call the domain apps' services and selectors (accounts, bots, matches,
ladders, challenges, submissions, tournaments, ...), and no domain app imports an adapter.

Read from the source with `ast`, so an import inside a function counts as much as one at the top,
and nothing has to be imported (or configured) to be checked.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = "septet_platform"
ROOT = Path(__file__).resolve().parents[2] / "platform" / PACKAGE
ADAPTERS = ("web", "arena_api", "live_api")
"""The adapter packages under septet_platform; one not written yet (or gone) is simply not checked."""
NOT_DOMAIN = frozenset({"settings"})
"""Packages under septet_platform that are neither adapters nor domain apps (project wiring)."""


def _module_name(path: Path, root: Path) -> str:
    parts = [PACKAGE, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(source: str, module: str, *, is_package: bool = False) -> Iterator[tuple[int, str]]:
    """(line, module name) of every import in `source`, relative ones resolved against `module`;
    `from a import b` gives both `a` and `a.b` (b may be a module)."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def adapter_of(name: str) -> str | None:
    """The adapter package `name` is in or is, if any."""
    for adapter in ADAPTERS:
        prefix = f"{PACKAGE}.{adapter}"
        if name == prefix or name.startswith(prefix + "."):
            return adapter
    return None


def crossings(package_dir: Path, *, allowed: str | None, root: Path = ROOT) -> list[str]:
    """Every import statement, in the modules of `package_dir`, of an adapter other than `allowed`:
    "file:line imports module"."""
    found: dict[str, str] = {}
    for path in sorted(package_dir.rglob("*.py")):
        module = _module_name(path, root)
        for line, name in imported_names(path.read_text(), module, is_package=path.name == "__init__.py"):
            adapter = adapter_of(name)
            if adapter is not None and adapter != allowed:
                found.setdefault(f"{path.relative_to(root.parent)}:{line}", name)
    return [f"{where} imports {name}" for where, name in found.items()]


def _domain_packages(root: Path = ROOT) -> list[Path]:
    return sorted(
        path.parent
        for path in root.glob("*/__init__.py")
        if path.parent.name not in ADAPTERS and path.parent.name not in NOT_DOMAIN
    )


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_adapter_imports_no_other_adapter(adapter: str) -> None:
    package_dir = ROOT / adapter
    if not (package_dir / "__init__.py").is_file():
        pytest.skip(f"{PACKAGE}.{adapter} does not exist (yet)")
    assert crossings(package_dir, allowed=adapter) == []


def test_no_domain_app_imports_an_adapter() -> None:
    domains = _domain_packages()
    names = {domain.name for domain in domains}
    assert {"accounts", "bots", "matches", "ladders", "challenges", "submissions"} <= names
    assert [crossing for domain in domains for crossing in crossings(domain, allowed=None)] == []


def test_the_adapters_checked_include_the_site_and_the_arena() -> None:
    assert (ROOT / "web" / "__init__.py").is_file() and (ROOT / "arena_api" / "__init__.py").is_file()


@pytest.mark.parametrize(
    ("source", "module", "crossed"),
    [
        ("from septet_platform.arena_api import services", "septet_platform.web.views", "arena_api"),
        ("from septet_platform.arena_api.selectors import OVER", "septet_platform.web.sql", "arena_api"),
        ("import septet_platform.web.selectors", "septet_platform.arena_api.servicer", "web"),
        ("from septet_platform import web", "septet_platform.arena_api.servicer", "web"),
        ("from ..web import selectors", "septet_platform.arena_api.servicer", "web"),
        ("def f():\n    from septet_platform.live_api import x", "septet_platform.web.views", "live_api"),
    ],
)
def test_the_check_sees_every_form_of_import(source: str, module: str, crossed: str) -> None:
    assert crossed in {adapter_of(name) for _, name in imported_names(source, module)}


def test_the_check_lets_an_adapter_import_itself_and_the_domain_apps() -> None:
    source = (
        "from . import selectors\nfrom septet_platform.web.sql import fetch\n"
        "from septet_platform.challenges import services\nfrom septet_platform.webhooks import x\n"
    )
    names = [name for _, name in imported_names(source, "septet_platform.web.views")]
    assert "septet_platform.web.selectors" in names
    assert {adapter_of(name) for name in names} == {None, "web"}
