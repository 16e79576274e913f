"""A self-contained HTML page for one replay: the viewer's JS and CSS and the replay inlined.

The page opens from disk (file://) with no server and no network: everything it needs is in it.
The replay travels as JSON inside a `<script type="application/json">` element, with `<`, `>`
and `&` escaped as JSON `\\u` sequences so no name in the replay can close the element.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from referee.engine import replay

STATIC_DIR = Path(__file__).parent / "static" / "septet-viewer"
"""viewer.js and viewer.css; the site serves this folder as `septet-viewer/`."""

_JSON_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026",
                 0x2028: "\\u2028", 0x2029: "\\u2029"}  # fmt: skip

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ margin: 0; padding: 16px; background: #e9ece8; }}
{css}
</style>
</head>
<body>
<div class="septet-viewer" id="septet-viewer"></div>
<script type="application/json" id="septet-replay">{replay}</script>
<script>
{js}
</script>
<script>
SeptetViewer.mount(document.getElementById("septet-viewer"),
  JSON.parse(document.getElementById("septet-replay").textContent), {{hash: true}});
</script>
</body>
</html>
"""


def _asset(name: str, closing_tag: str) -> str:
    """A static file's text, refused if it could end the element it is inlined in."""
    text = (STATIC_DIR / name).read_text(encoding="utf-8")
    if closing_tag in text.lower():
        raise ValueError(f"{name} contains {closing_tag!r} and cannot be inlined")
    return text


def embedded_json(document: Any) -> str:
    """JSON text safe inside a `<script>` element: no `<`, `>` or `&` appear literally."""
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).translate(_JSON_ESCAPES)


def build_page(document: dict[str, Any]) -> str:
    """The standalone viewer page of a replay document (already read; see `replay.load`)."""
    names = [str(seat.get("name", "?")) for seat in document.get("seats", []) if isinstance(seat, dict)]
    title = f"Septet replay: {document.get('game', '?')}, {' vs '.join(names)}"
    return _PAGE.format(
        title=html.escape(title),
        css=_asset("viewer.css", "</style"),
        js=_asset("viewer.js", "</script"),
        replay=embedded_json(document),
    )


def default_output(source: Path) -> Path:
    """Where `septet replay view FILE` writes its page: beside FILE, `game.json.gz` -> `game.html`."""
    name = source.name
    for suffix in (".json.gz", ".json", ".gz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return source.with_name(f"{name or source.name}.html")


def view_replay_file(source: Path, output: Path | None = None) -> Path:
    """Reads and verifies a replay file, writes its standalone page, and returns the page's path.

    The replay is verified through the engine first, so a damaged or tampered file is refused
    (ReplayError, one line) and no page is written for it; a page that cannot be written raises
    OSError.
    """
    document = replay.load(source)
    replay.verify(document)
    target = output if output is not None else default_output(source)
    target.write_text(build_page(document), encoding="utf-8")
    return target
