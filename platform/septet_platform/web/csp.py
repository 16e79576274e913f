"""A Content-Security-Policy header on every response (Django 5.2 has none built in).

The site's pages and the replay viewer use only their own files: no inline scripts or styles, no
third-party hosts. So the policy allows the site itself and nothing else; an injected `<script>`
or inline handler would not run, and no other site may frame the pages. settings.SEPTET_CSP
replaces the policy where an organiser needs another.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

DEFAULT_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
HEADER = "Content-Security-Policy"


class ContentSecurityPolicyMiddleware:
    """Adds the policy to responses that do not set their own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.policy = getattr(settings, "SEPTET_CSP", "") or DEFAULT_POLICY

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if HEADER not in response:
            response[HEADER] = self.policy
        return response
