"""The Celery app: configured from Django settings under the `CELERY_` namespace."""

import os

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_ready

from septet_platform.settings import DEFAULT_MODULE

# `celery -A septet_platform` started by hand needs a settings module; the shared default is the
# one `septet up` would choose, so this line can never change what the launcher decides.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", DEFAULT_MODULE)

app = Celery("septet_platform")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
@task_postrun.connect
def _database_connections_renewed(**_: object) -> None:
    """Around each task, what Django does around each request: closes connections older than
    CONN_MAX_AGE or broken by an error, and has the next task's first query ping the one it keeps
    (CONN_HEALTH_CHECKS). Celery would otherwise close them all after every task
    (CELERY_DB_REUSE_MAX in the settings)."""
    from django.db import close_old_connections

    close_old_connections()


@worker_ready.connect
def _sandbox_limits_logged(**_: object) -> None:
    """Says once, when a worker starts, which sandbox limits hold on its machine (control groups,
    seccomp), so an organiser sees at once when bots run with less than the full set; and ends
    what is left of the sandboxes of a worker that died before this one started."""
    import logging

    from referee.tools.sandbox import describe_limits
    from referee.tools.sandbox_cgroups import sweep_orphaned

    log = logging.getLogger("septet_platform.sandbox")
    log.warning(describe_limits())
    cleared = sweep_orphaned()  # sandboxes of a worker that was killed outright, if any
    if cleared:
        log.warning("ended the sandboxes of %d bot starts whose worker had died", cleared)
