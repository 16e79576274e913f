"""WSGI entry point for gunicorn: `gunicorn septet_platform.wsgi`."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "septet_platform.settings.prod")
application = get_wsgi_application()
