"""The Septet platform: a Django project (site, Arena gRPC service, Celery tasks) over `referee`.

This folder's parent, `platform/`, is a source root with no `__init__.py`, so the standard
library's `platform` module is never shadowed.
"""

from septet_platform.celery import app as celery_app

__all__ = ["celery_app"]
