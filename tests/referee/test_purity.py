"""The referee's rooms keep their boundaries (DESIGN.md, README "Layout").

- `referee.engine` imports nothing of the bot kit, the tools, the wire (gRPC, protobuf), Django
  or Celery: checked on the source (every import statement, also those inside functions) and on
  what importing it actually loads.
- `referee.botkit` imports nothing of the tools (the CLI, the sandbox).
- Nothing in the referee imports Django or Celery.
"""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys

import pytest

import referee

ROOT = pathlib.Path(referee.__file__).parent
ENGINE_FORBIDDEN = ("referee.botkit", "referee.tools", "grpc", "grpc_health", "google.protobuf",
                    "django", "celery", "kombu")  # fmt: skip
BOTKIT_FORBIDDEN = ("referee.tools", "django", "celery", "kombu")
REFEREE_FORBIDDEN = ("django", "celery", "kombu")


def imported_modules(path: pathlib.Path) -> list[tuple[int, str]]:
    """(line, module) of every import in a file, relative imports resolved against its package."""
    package = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts[:-1])
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            # `from referee import tools` imports referee.tools: count each name as a module too.
            found += [(node.lineno, base)] + [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def violations(room: str, forbidden: tuple[str, ...]) -> list[str]:
    """`file:line module` for every import under referee/<room> of a forbidden module."""
    return [
        f"{path.relative_to(ROOT.parent)}:{line} {module}"
        for path in sorted((ROOT / room).rglob("*.py") if room else ROOT.rglob("*.py"))
        for line, module in imported_modules(path)
        if any(module == name or module.startswith(f"{name}.") for name in forbidden)
    ]


def test_the_engine_imports_nothing_of_the_bot_kit_the_tools_or_the_wire() -> None:
    assert violations("engine", ENGINE_FORBIDDEN) == []


def test_the_bot_kit_imports_nothing_of_the_tools() -> None:
    assert violations("botkit", BOTKIT_FORBIDDEN) == []


def test_nothing_in_the_referee_imports_django_or_celery() -> None:
    assert violations("", REFEREE_FORBIDDEN) == []


@pytest.mark.parametrize(
    ("source", "forbidden"),
    [
        ("import grpc\n", "grpc"),
        ("from referee.tools import sandbox\n", "referee.tools"),
        ("from referee import tools\n", "referee.tools"),
        ("def later():\n    from google.protobuf import json_format\n", "google.protobuf"),
        ("from ..botkit import sdk\n", "referee.botkit"),
    ],
)
def test_the_import_walk_sees_a_forbidden_import_in_the_engine(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, source: str, forbidden: str
) -> None:
    """The check above can fail: the same walk over a copy of the engine with match.py importing
    a forbidden module reports that line."""
    copy = tmp_path / "referee"
    (copy / "engine").mkdir(parents=True)
    original = (ROOT / "engine" / "match.py").read_text()
    (copy / "engine" / "match.py").write_text(original + "\n" + source)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", copy)
    found = violations("engine", ENGINE_FORBIDDEN)
    assert found and all(entry.startswith("referee/engine/match.py:") for entry in found)
    assert any(entry.split()[1].startswith(forbidden) for entry in found)


def test_importing_the_engine_and_every_game_loads_no_wire_tools_django_or_celery() -> None:
    code = (
        "import sys, referee.engine.match, referee.engine.replay, referee.engine.playout\n"
        "from referee.engine.games import GAMES\n"
        "assert GAMES\n"
        f"forbidden = {ENGINE_FORBIDDEN!r}\n"
        "bad = sorted(m for m in sys.modules if any(m == f or m.startswith(f + '.') for f in forbidden))\n"
        "print(','.join(bad))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == ""


def test_the_cli_loads_no_django_or_celery() -> None:
    code = (
        "import sys, referee.tools.cli, referee.botkit.sdk\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'celery', 'kombu'))\n"
        "print(','.join(bad))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == ""


def test_the_public_names_bots_use_are_the_engines_and_the_bot_kits_own_objects() -> None:
    """`referee.sdk`, `referee.games` (and its modules) and `referee.protocol` stay importable."""
    import referee.botkit.protocol.bot_pb2 as kit_bot_pb2
    import referee.botkit.protocol.bot_pb2_grpc as kit_bot_pb2_grpc
    import referee.botkit.sdk as kit_sdk
    import referee.engine.games as engine_games
    import referee.engine.games.oh7 as engine_oh7
    from referee import games, sdk
    from referee.games import GAMES, base, bidding, black_sevens, oh7, oh7_dummy, oh_hell, seven_up_seven_down
    from referee.protocol import bot_pb2, bot_pb2_grpc

    assert sdk.Bot is kit_sdk.Bot and sdk.serve is kit_sdk.serve and sdk.MatchStart is kit_sdk.MatchStart
    assert games.get_game is engine_games.get_game and GAMES is engine_games.GAMES
    assert oh7.InfoState is engine_oh7.InfoState and oh7.ORDER is engine_oh7.ORDER
    assert base.Game is games.Game and oh7_dummy.__doc__ and bidding.BiddingInfo
    assert black_sevens.GAME is GAMES["black-sevens"] and oh_hell.GAME and seven_up_seven_down.GAME
    assert bot_pb2.DecideRequest is kit_bot_pb2.DecideRequest
    assert bot_pb2_grpc.BotServicer is kit_bot_pb2_grpc.BotServicer


def test_nothing_in_referee_uses_the_global_random_generator() -> None:
    """The RNG is passed in, never global (STYLE.md): no module-level random.random() and kin."""
    pattern = re.compile(r"\brandom\.(random|randint|randrange|choice|choices|shuffle|sample|seed|uniform)\(")
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in ROOT.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []
