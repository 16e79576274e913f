"""The /metrics page in Prometheus's text format, built at each scrape from the selectors (no
state kept in the web process, so any number of web processes report the same figures)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from septet_platform.ops import selectors


class PlatformCollector(Collector):
    """Queue depths, matches by status and per worker, throughput, bot versions by status."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        checks = GaugeMetricFamily(
            "septet_up", "1 when the dependency answers, else 0", labels=["dependency"]
        )
        for check in selectors.health_checks():
            checks.add_metric([check.name], 1.0 if check.ok else 0.0)
        yield checks
        depth = GaugeMetricFamily("septet_queue_depth", "Celery messages waiting per queue", labels=["queue"])
        try:
            for queue, count in selectors.queue_depths().items():
                depth.add_metric([queue], count)
        except Exception:  # the broker is down: septet_up says so; no depths to report
            pass
        yield depth
        matches = GaugeMetricFamily("septet_matches", "Matches by status", labels=["status"])
        for status, count in selectors.matches_by_status().items():
            matches.add_metric([status], count)
        yield matches
        running = GaugeMetricFamily("septet_matches_running", "Running matches per worker", labels=["worker"])
        for worker, count in selectors.running_by_worker().items():
            running.add_metric([worker or "unknown"], count)
        yield running
        yield GaugeMetricFamily(
            "septet_matches_finished_per_minute",
            f"Matches finished per minute over the last {selectors.THROUGHPUT_WINDOW.seconds // 60} minutes",
            value=selectors.finished_per_minute(),
        )
        versions = GaugeMetricFamily("septet_bot_versions", "Bot versions by status", labels=["status"])
        for status, count in selectors.versions_by_status().items():
            versions.add_metric([status], count)
        yield versions


def render() -> bytes:
    registry = CollectorRegistry()
    registry.register(PlatformCollector())
    return generate_latest(registry)
