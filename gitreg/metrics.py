"""Prometheus metrics, read from the registry's state at each scrape (`/metrics`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from gitreg.registry import Registry


class RegistryCollector(Collector):
    def __init__(self, registry: Registry, webhooks: Counter[tuple[str, str]]) -> None:
        self.registry = registry
        self.webhooks = webhooks

    def collect(self) -> Iterator[Metric]:
        registry = self.registry
        versions = GaugeMetricFamily(
            "gitreg_module_versions", "Versions served, per module", labels=["module"]
        )
        changes = GaugeMetricFamily(
            "gitreg_tag_changes",
            "Published tags that moved or were deleted, by what gitreg does about it",
            labels=["module", "kind", "action"],
        )
        for entry in registry.index.entries():
            module = str(entry.spec.address)
            versions.add_metric([module], len(entry.versions.releases))
            counted = Counter((c.kind, c.action) for c in entry.changes)
            for (kind, action), n in sorted(counted.items()):
                changes.add_metric([module, kind, action], n)
        yield versions
        yield changes
        up = GaugeMetricFamily(
            "gitreg_repository_up",
            "1 when the last sync of the repository worked",
            labels=["repository"],
        )
        last = GaugeMetricFamily(
            "gitreg_repository_last_success_timestamp_seconds",
            "When the repository last synced",
            labels=["repository"],
        )
        for location, status in list(registry.status.items()):
            up.add_metric([str(location)], 0 if status.last_error else 1)
            if status.last_success:
                last.add_metric([str(location)], status.last_success)
        yield up
        yield last
        syncs = CounterMetricFamily(
            "gitreg_syncs",
            "Syncs, by what started them and how they ended",
            labels=["mechanism", "result"],
        )
        for (mechanism, result), n in sorted(registry.sync_counts.items()):
            syncs.add_metric([mechanism, result], n)
        yield syncs
        hooks = CounterMetricFamily(
            "gitreg_webhooks", "Webhook requests, by forge and outcome", labels=["forge", "result"]
        )
        for (forge, result), n in sorted(self.webhooks.items()):
            hooks.add_metric([forge, result], n)
        yield hooks


def exposition(registry: Registry, webhooks: Counter[tuple[str, str]]) -> bytes:
    collectors = CollectorRegistry(auto_describe=False)
    collectors.register(RegistryCollector(registry, webhooks))
    return generate_latest(collectors)
