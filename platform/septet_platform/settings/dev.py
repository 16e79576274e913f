"""Local development and the one-command platform: DEBUG on, everything on localhost."""

from septet_platform.settings.base import *  # noqa: F403

DEBUG = True
