"""A guide's Markdown as the site's HTML: CommonMark with tables (markdown-it-py), raw HTML off,
headings given the ids GitHub gives them (so `rules.md#forfeits` lands where it does there), links
between guides turned into the site's own /docs/ pages, and links to other files of the clone
(which the site does not serve) left as plain text rather than broken links."""

from __future__ import annotations

import functools
import html
import posixpath
import re
from pathlib import Path

from markdown_it import MarkdownIt

from septet_platform.web.source import GUIDES, Guide

_HEADING = re.compile(r"<(h[1-6])>(.*?)</\1>", re.DOTALL)
_RELATIVE_LINK = re.compile(r'<a href="(?![a-z][a-z0-9+.-]*:|#|/)([^"#]*)(#[^"]*)?"')
_BY_PATH = {path: slug for slug, path, _ in GUIDES}


def render_guide(guide: Guide) -> str:
    """The guide's HTML, kept while its file is unchanged (a guide is read on every page view)."""
    status = guide.file().stat()
    return _render(str(guide.file()), guide.path, status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=32)
def _render(file: str, path: str, mtime_ns: int, size: int) -> str:
    text = Path(file).read_text(encoding="utf-8")
    rendered = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    folder = posixpath.dirname(path)
    return _RELATIVE_LINK.sub(lambda link: _site_link(link, folder), _HEADING.sub(_with_id, rendered))


def _with_id(heading: re.Match[str]) -> str:
    tag, inner = heading[1], heading[2]
    return f'<{tag} id="{heading_id(inner)}">{inner}</{tag}>'


def heading_id(inner_html: str) -> str:
    """GitHub's anchor for a heading: its text lowercased, punctuation dropped, spaces to hyphens."""
    text = html.unescape(re.sub(r"<[^>]+>", "", inner_html)).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _site_link(link: re.Match[str], folder: str) -> str:
    target, anchor = link[1], link[2] or ""
    if not target:
        return f'<a href="{anchor}"'
    slug = _BY_PATH.get(posixpath.normpath(posixpath.join(folder, target)))
    return f'<a href="/docs/{slug}/{anchor}"' if slug else "<a"
