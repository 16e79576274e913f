"""referee/ stays pure: importing it and every game loads no Django or Celery (DESIGN.md)."""

from __future__ import annotations

import subprocess
import sys


def test_referee_and_every_game_import_without_django_or_celery() -> None:
    code = (
        "import sys, referee, referee.cli, referee.match, referee.replay\n"
        "from referee.games import GAMES\n"
        "assert GAMES\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'celery', 'kombu'))\n"
        "print(','.join(bad))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == ""


def test_nothing_in_referee_uses_the_global_random_generator() -> None:
    """The RNG is passed in, never global (STYLE.md): no module-level random.random() and kin."""
    import pathlib
    import re

    import referee

    root = pathlib.Path(referee.__file__).parent
    pattern = re.compile(r"\brandom\.(random|randint|randrange|choice|choices|shuffle|sample|seed|uniform)\(")
    offenders = [
        f"{path.relative_to(root)}:{number}"
        for path in root.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []
