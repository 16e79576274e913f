"""Production: configuration from the environment; refuses to start unsafe.

It refuses DEBUG on, the development secret key (or any short key), and running submitted bots
outside the sandbox; each refusal names the variable to fix.
"""

import os

from django.core.exceptions import ImproperlyConfigured

from septet_platform.settings.base import *  # noqa: F403
from septet_platform.settings.base import (
    DEVELOPMENT_SECRET_KEY,
    LOGGING,
    MIDDLEWARE,
    SECRET_KEY,
    SEPTET_ALLOW_UNSANDBOXED,
)

MIN_SECRET_KEY_LENGTH = 32

DEBUG = os.environ.get("DEBUG", "") not in ("", "0", "false", "False")
if DEBUG:
    raise ImproperlyConfigured("production settings refuse to run with DEBUG on (unset DEBUG)")
if SECRET_KEY == DEVELOPMENT_SECRET_KEY or len(SECRET_KEY) < MIN_SECRET_KEY_LENGTH:
    raise ImproperlyConfigured(
        f"set SECRET_KEY to a random value of at least {MIN_SECRET_KEY_LENGTH} characters for production"
    )
if SEPTET_ALLOW_UNSANDBOXED:
    raise ImproperlyConfigured("production settings refuse SEPTET_ALLOW_UNSANDBOXED: bots run sandboxed")
# Bots run under the seccomp filter in production: a worker without libseccomp voids its matches
# (never the bots' fault) instead of running them with less (SEPTET_REQUIRE_SECCOMP=0 to allow).
SEPTET_REQUIRE_SECCOMP = os.environ.get("SEPTET_REQUIRE_SECCOMP", "1") not in ("0", "false", "False", "no")
# No gRPC server reflection: the Arena's clients carry its .proto, and a listing of every method
# only helps a prober (SEPTET_ARENA_REFLECTION=1 to serve it anyway).
SEPTET_ARENA_REFLECTION = os.environ.get("SEPTET_ARENA_REFLECTION", "0").lower() not in (
    "0",
    "false",
    "no",
    "",
)

# Static files: collected at image build (manage.py collectstatic), served by whitenoise from the
# app server itself with hashed names and far-future caching (development uses runserver's).
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
    "whitenoise.middleware.WhiteNoiseMiddleware",
)
STORAGES = {
    **STORAGES,  # noqa: F405 -- the archives' and replays' (SEPTET_STORAGE)
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = os.environ.get("SEPTET_HTTPS", "1") not in ("0", "false", "")
# HTTPS only, remembered by browsers (HSTS), when the site is served over TLS (SEPTET_HTTPS, on by
# default). Behind a proxy that terminates TLS, set SEPTET_PROXY_SSL_HEADER=1 so Django trusts
# its X-Forwarded-Proto (only where every request comes through that proxy); the redirect to
# HTTPS is then Django's, else leave it to the proxy.
if SESSION_COOKIE_SECURE:
    SECURE_HSTS_SECONDS = int(os.environ.get("SEPTET_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = os.environ.get("SEPTET_HSTS_SUBDOMAINS", "0") not in ("0", "false", "")
    SECURE_HSTS_PRELOAD = False
if os.environ.get("SEPTET_PROXY_SSL_HEADER", "") not in ("", "0", "false"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# A Content-Security-Policy on every page: scripts, styles and everything else from the site only,
# no inline scripts or styles, no framing (septet_platform.web.csp).
MIDDLEWARE.append("septet_platform.web.csp.ContentSecurityPolicyMiddleware")
CSRF_TRUSTED_ORIGINS = [origin for origin in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if origin]
LOGGING["handlers"]["stderr"]["formatter"] = os.environ.get("SEPTET_LOG_FORMAT", "json")
