"""The Septet platform: a Django project (site, Arena gRPC service, Celery tasks) over `referee`.

This folder's parent, `platform/`, is a source root with no `__init__.py`, so the standard
library's `platform` module is never shadowed.
"""

import os

# What the caller asked for, read before anything below can set a default: `septet up` keeps it.
CALLER_SETTINGS_MODULE = os.environ.get("DJANGO_SETTINGS_MODULE")

# Then: gRPC's transport setting must be in the environment before grpc is imported.
from referee import grpc_transport  # noqa: E402

grpc_transport.prefer_legacy_endpoints()

from septet_platform.celery import app as celery_app  # noqa: E402

__all__ = ["CALLER_SETTINGS_MODULE", "celery_app"]
