"""Health and metrics endpoints for load balancers, orchestrators and Prometheus, and the
organisers' operations page."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from septet_platform.ops import metrics, selectors


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 with every check ok, 503 naming what failed (a probe needs only the status code)."""
    checks = selectors.health_checks()
    healthy = all(check.ok for check in checks)
    body = {
        "status": "ok" if healthy else "unhealthy",
        "checks": {check.name: "ok" if check.ok else check.detail for check in checks},
    }
    return JsonResponse(body, status=200 if healthy else 503)


@never_cache
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus text format; with SEPTET_METRICS_TOKEN set, only for `Authorization: Bearer <it>`."""
    wanted = settings.SEPTET_METRICS_TOKEN
    if wanted:
        sent = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if not hmac.compare_digest(sent.encode(), wanted.encode()):
            return HttpResponse("metrics need the bearer token in SEPTET_METRICS_TOKEN\n", status=401)
    return HttpResponse(metrics.render(), content_type=CONTENT_TYPE_LATEST)


@never_cache
@require_GET
@staff_member_required
def ops_page(request: HttpRequest) -> HttpResponse:
    """For organisers (staff): the health checks, every process `septet up` supervises with its
    restarts and last exit, queue depths and match counts; a broker that does not answer is said
    so on the page, never a 500."""
    checks = selectors.health_checks()
    processes, supervision_problem = selectors.supervised_processes()
    try:
        queues = selectors.queue_depths()
    except Exception:  # the broker is down: the checks above already say why
        queues = {}
    context = {
        "checks": checks,
        "healthy": all(check.ok for check in checks),
        "processes": processes,
        "supervision_problem": supervision_problem,
        "queues": queues,
        "matches": selectors.matches_by_status(),
        "per_minute": selectors.finished_per_minute(),
    }
    return render(request, "ops/ops.html", context, status=200)
