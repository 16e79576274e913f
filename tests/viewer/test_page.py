"""The standalone viewer page and `septet replay view`, without a browser."""

from __future__ import annotations

import gzip
import json
import os
import stat
import subprocess
import sys
import time
import tomllib
from fnmatch import fnmatch
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from viewer_replays import make_replay

from referee.engine import replay
from referee.tools.cli import main
from referee.tools.viewer import STATIC_DIR, build_page
from referee.tools.viewer.page import default_output, embedded_json

REPO = Path(__file__).resolve().parents[2]
HOSTILE = "</script><script>alert(1)</script><!-- & \u2028"


class _Scripts(HTMLParser):
    """Collects each <script> element's text and the page's <title>, as a browser would split them."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.title = ""
        self._open: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts.append((dict(attrs), ""))
        self._open = tag

    def handle_endtag(self, tag: str) -> None:
        self._open = None

    def handle_data(self, data: str) -> None:
        if self._open == "script":
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)
        elif self._open == "title":
            self.title += data


def _parse(page: str) -> _Scripts:
    parser = _Scripts()
    parser.feed(page)
    return parser


def test_the_page_carries_the_replay_intact_even_with_a_hostile_seat_name() -> None:
    document = make_replay("oh-hell")
    document["seats"][1]["name"] = HOSTILE
    page = build_page(document)
    parsed = _parse(page)
    data = [text for attrs, text in parsed.scripts if attrs.get("type") == "application/json"]
    assert len(data) == 1, "the name must not open or close a script element"
    assert json.loads(data[0]) == document
    assert HOSTILE not in page and "<script>alert" not in page
    assert HOSTILE in parsed.title, "the title shows the name as text"


def test_the_page_inlines_the_viewer_so_it_needs_no_server() -> None:
    page = build_page(make_replay("oh7-duel"))
    assert (STATIC_DIR / "viewer.js").read_text(encoding="utf-8") in page
    assert (STATIC_DIR / "viewer.css").read_text(encoding="utf-8") in page
    assert "src=" not in page and "href=" not in page.split("<script", 1)[0], "no external file"


def test_embedded_json_escapes_what_could_end_a_script_element() -> None:
    text = embedded_json({"name": "</script>&<!--\u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"name": "</script>&<!--\u2028"}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("game.json.gz", "game.html"),
        ("game.json", "game.html"),
        ("game.gz", "game.html"),
        ("game", "game.html"),
    ],
)
def test_the_default_page_sits_beside_the_replay(tmp_path: Path, name: str, expected: str) -> None:
    assert default_output(tmp_path / name) == tmp_path / expected


def test_the_viewer_files_ship_in_the_package() -> None:
    """Every static file matches the package-data globs, so a wheel carries it."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["referee.tools.viewer"]
    files = [path.relative_to(STATIC_DIR.parent.parent).as_posix() for path in STATIC_DIR.iterdir()]
    assert {"static/septet-viewer/viewer.js", "static/septet-viewer/viewer.css"} <= set(files)
    assert all(any(fnmatch(name, pattern) for pattern in patterns) for name in files)


# septet replay view -------------------------------------------------------------------------


def test_replay_view_writes_the_page_beside_the_file_and_prints_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = replay.save(make_replay("black-sevens"), tmp_path / "game.json.gz")
    assert main(["replay", "view", str(source), "--no-open"]) == 0
    page = tmp_path / "game.html"
    assert capsys.readouterr().out.strip() == str(page)
    assert '"game":"black-sevens"' in page.read_text(encoding="utf-8")


def test_replay_view_out_names_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = replay.save(make_replay("oh7"), tmp_path / "game.json")
    target = tmp_path / "pages" / "mine.html"
    target.parent.mkdir()
    assert main(["replay", "view", str(source), "--out", str(target), "--no-open"]) == 0
    assert capsys.readouterr().out.strip() == str(target)
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def _tamper_card(document: dict[str, Any]) -> None:
    play = next(event for event in document["events"] if event["type"] == "play")
    play["card"] = "2C" if play["card"] != "2C" else "3C"


@pytest.mark.parametrize(
    ("what", "write"),
    [
        ("a played card changed", lambda path: replay.save(_tampered(), path)),
        ("a damaged gzip file", lambda path: path.write_bytes(gzip.compress(b"{}")[:12])),
        ("not JSON", lambda path: path.write_bytes(b"<html>")),
        ("another format", lambda path: path.write_text(json.dumps({"format": "septet-replay/0"}))),
    ],
)
def test_replay_view_refuses_a_damaged_or_tampered_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str, write: Any
) -> None:
    source = tmp_path / "game.json.gz"
    write(source)
    assert main(["replay", "view", str(source), "--no-open"]) == 2, what
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("septet: error: "), captured.err
    assert not (tmp_path / "game.html").exists(), "no page for a refused replay"


def _tampered() -> dict[str, Any]:
    document = make_replay("oh-hell")
    _tamper_card(document)
    return document


def test_replay_view_of_a_missing_file_or_unwritable_page_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", "view", str(tmp_path / "nothing.json.gz"), "--no-open"]) == 2
    assert capsys.readouterr().err.startswith("septet: error: cannot read")
    source = replay.save(make_replay("oh7"), tmp_path / "game.json.gz")
    assert main(["replay", "view", str(source), "--out", str(tmp_path / "no" / "dir.html"), "--no-open"]) == 2
    assert capsys.readouterr().err.startswith("septet: error: cannot write the page")


def test_replay_view_opens_the_page_in_the_browser_unless_told_not_to(tmp_path: Path) -> None:
    """A real `septet` process with BROWSER set to a script that records the address it gets."""
    record = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > "{record}"\n')
    browser.chmod(browser.stat().st_mode | stat.S_IXUSR)
    source = replay.save(make_replay("oh7-duel"), tmp_path / "duel.json.gz")
    env = {**os.environ, "BROWSER": f"{browser} %s", "DISPLAY": ""}
    septet = [sys.executable, "-c", "import sys; from referee.tools.cli import main; sys.exit(main())"]
    done = subprocess.run(
        [*septet, "replay", "view", str(source), "--no-open"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert not record.exists(), "--no-open must not start a browser"
    done = subprocess.run([*septet, "replay", "view", str(source)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 10
    while not record.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert record.read_text() == (tmp_path / "duel.html").resolve().as_uri()
