"""The replay viewer: plain JavaScript and CSS in `static/septet-viewer/`, served by the site as
static files, and `build_page` for a self-contained page of one replay (`septet replay view`)."""

from __future__ import annotations

from referee.tools.viewer.page import STATIC_DIR, build_page, view_replay_file

__all__ = ["STATIC_DIR", "build_page", "view_replay_file"]
