"""Local development and the one-command platform: DEBUG on, everything on localhost."""

from septet_platform.settings.base import *  # noqa: F403

DEBUG = True
# A page changed by the developer (or their data) shows at once: no anonymous page is kept.
SEPTET_PAGE_CACHE_SECONDS = 0
