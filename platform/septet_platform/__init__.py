"""The Septet platform: a Django project (site, Arena gRPC service, Celery tasks) over `referee`.

This folder's parent, `platform/`, is a source root with no `__init__.py`, so the standard
library's `platform` module is never shadowed.
"""

# First thing: gRPC's transport setting must be in the environment before grpc is imported.
from referee import grpc_transport

grpc_transport.prefer_legacy_endpoints()

from septet_platform.celery import app as celery_app  # noqa: E402

__all__ = ["celery_app"]
