"""The one-command platform (`septet up` without --dev): DEBUG off, static files from the app itself.

With DEBUG off a missing page is the site's own 404 (no settings, no URL list, no traceback), and
static files are served by whitenoise straight from the apps' and the viewer's static folders (no
collectstatic step); a path it does not know, `..%2f` tricks included, falls through to the site's
404. The secret key comes from the data folder (see `septet_platform.launcher`).
"""

from septet_platform.settings.base import *  # noqa: F403
from septet_platform.settings.base import MIDDLEWARE

DEBUG = False
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
    "whitenoise.middleware.WhiteNoiseMiddleware",
)
WHITENOISE_USE_FINDERS = True
# Nothing is collected here: the finders serve the apps' own folders, so whitenoise is given no
# collected folder to look in (and no "No directory at" warning in every web process's output).
STATIC_ROOT = None
MIDDLEWARE.append("septet_platform.web.csp.ContentSecurityPolicyMiddleware")
