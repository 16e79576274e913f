"""Production: configuration from the environment; refuses to start unsafe."""

import os

from django.core.exceptions import ImproperlyConfigured

from septet_platform.settings.base import *  # noqa: F403
from septet_platform.settings.base import SECRET_KEY

DEBUG = os.environ.get("DEBUG", "") not in ("", "0", "false", "False")
if DEBUG:
    raise ImproperlyConfigured("production settings refuse to run with DEBUG on")
if SECRET_KEY == "septet-insecure-development-key" or len(SECRET_KEY) < 32:
    raise ImproperlyConfigured("set SECRET_KEY to a long random value for production")
