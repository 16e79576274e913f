"""Production: configuration from the environment; refuses to start unsafe.

It refuses DEBUG on, the development secret key (or any short key), and running submitted bots
outside the sandbox; each refusal names the variable to fix.
"""

import os

from django.core.exceptions import ImproperlyConfigured

from septet_platform.settings.base import *  # noqa: F403
from septet_platform.settings.base import LOGGING, MIDDLEWARE, SECRET_KEY, SEPTET_ALLOW_UNSANDBOXED

DEVELOPMENT_SECRET_KEY = "septet-insecure-development-key"
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

# Static files: collected at image build (manage.py collectstatic), served by whitenoise from the
# app server itself with hashed names and far-future caching (development uses runserver's).
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
    "whitenoise.middleware.WhiteNoiseMiddleware",
)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = os.environ.get("SEPTET_HTTPS", "1") not in ("0", "false", "")
CSRF_TRUSTED_ORIGINS = [origin for origin in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if origin]
LOGGING["handlers"]["stderr"]["formatter"] = os.environ.get("SEPTET_LOG_FORMAT", "json")
