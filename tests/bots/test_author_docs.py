"""The author's documents say what the code does: README names every argument scripts/start
passes on to `septet up`, docs/bots.md is linked where authors look and its links resolve."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEPTET = str(Path(sys.executable).with_name("septet"))
GUIDE = ROOT / "docs" / "bots.md"


def _paragraph_with(text: str, marker: str) -> str:
    return next(block for block in text.split("\n\n") if marker in block)


def test_readme_names_every_argument_scripts_start_passes_to_septet_up() -> None:
    usage = subprocess.run([SEPTET, "up", "--help"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert usage.returncode == 0, usage.stderr
    options = set(re.findall(r"(--[a-z][a-z-]+)", usage.stdout)) - {"--help"}
    assert {"--web", "--arena", "--workers"} <= options
    sentence = _paragraph_with((ROOT / "README.md").read_text(), "Arguments after `scripts/start`")
    assert "bash scripts/start --" in sentence, "with an example"
    missing = sorted(option for option in options if f"`{option}" not in sentence)
    assert missing == [], f"README does not say scripts/start passes on {missing}"


def test_the_authors_guide_is_linked_from_readme_and_the_examples() -> None:
    readme = (ROOT / "README.md").read_text()
    write_a_bot = readme.split("## Write a bot", 1)[1].split("\n## ", 1)[0]
    assert "(docs/bots.md)" in write_a_bot
    assert "(../../docs/bots.md)" in (ROOT / "bots" / "examples" / "README.md").read_text()


def test_the_guide_s_worked_examples_and_links_exist() -> None:
    guide = GUIDE.read_text()
    for example in ("node-random", "grpcio-random"):
        assert f"bots/examples/{example}/" in guide
        assert (ROOT / "bots" / "examples" / example / "septet-bot.toml").is_file()
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", guide):
        assert (GUIDE.parent / target).exists(), f"docs/bots.md links to {target}, which is missing"
    for topic in ("manifest", "Time controls", "What a seat sees", "sandbox", "septet bot serve",
                  "septet check", "septet logs"):  # fmt: skip
        assert topic in guide, f"the guide says nothing of {topic}"
