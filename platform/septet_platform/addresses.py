"""Service addresses as the platform prints them: a URL's password never reaches a log or a screen."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def hide_password(url: str) -> str:
    """`url` with the password of its user part replaced by ***: the broker's and the database's
    URLs carry them (deploy/README.md, credentials between hosts), and both are printed at start."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = f"{parts.username}:***@" if parts.username else ":***@"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit((parts.scheme, f"{user}{host}{port}", parts.path, parts.query, parts.fragment))
