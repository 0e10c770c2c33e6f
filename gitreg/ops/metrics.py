"""Prometheus metrics, read from the registry's state at each scrape (`/metrics`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import NamedTuple, Protocol

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from gitreg.freshness.deliveries import OUTCOMES
from gitreg.freshness.webhooks import PARSERS
from gitreg.mirror.origin import OriginRegistry
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.modules.status import StatusBoard
from gitreg.providers.hosted import Providers
from gitreg.sources.stats import OUTCOMES as SURVEY_OUTCOMES
from gitreg.sources.surveys import SourceSurveys
from gitreg.usage.tally import TallyStatus


class CountedModules(Protocol):
    """What metrics read of the module sync: the snapshot served, each repository's status,
    and the syncs counted by mechanism and result."""

    @property
    def snapshot(self) -> RegistrySnapshot: ...

    @property
    def status(self) -> StatusBoard: ...

    @property
    def sync_counts(self) -> Counter[tuple[str, str]]: ...

    clock: Callable[[], float]  # by which versions held back come due


class ModuleCollector(Collector):
    """The module side's metrics (versions, tag changes, each repository's syncs), and the
    webhooks received."""

    def __init__(self, modules: CountedModules, webhooks: Counter[tuple[str, str]]) -> None:
        self.modules = modules
        self.webhooks = webhooks

    def collect(self) -> Iterator[Metric]:
        modules = self.modules
        snapshot = modules.snapshot
        versions = GaugeMetricFamily(
            "gitreg_module_versions", "Versions served, per module", labels=["module"]
        )
        changes = GaugeMetricFamily(
            "gitreg_tag_changes",
            "Published tags that moved or were deleted, by what gitreg does about it",
            labels=["module", "kind", "action"],
        )
        for entry in snapshot.index.entries():
            module = str(entry.spec.address)
            versions.add_metric([module], len(entry.versions.releases))
            counted = Counter((c.kind, c.action) for c in entry.changes)
            for (kind, action), n in sorted(counted.items()):
                changes.add_metric([module, kind, action], n)
        yield versions
        yield changes
        yield from _pending(snapshot, modules.clock())
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
        for location in snapshot.clones:
            status = modules.status[location]
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
        for (mechanism, result), n in sorted(list(modules.sync_counts.items())):
            syncs.add_metric([mechanism, result], n)
        yield syncs
        hooks = CounterMetricFamily(
            "gitreg_webhooks",
            "Webhook requests, by forge and outcome (accepted, unauthorized, no_repository, "
            "ignored_event, bad_request)",
            labels=["forge", "result"],
        )
        # Every forge and outcome, from zero: an alert on a rate sees the first refusal.
        for forge in PARSERS:
            for outcome in OUTCOMES:
                hooks.add_metric([forge, outcome], self.webhooks[(forge, outcome)])
        yield hooks


# Each provider's release-list reads: the metric's name (after gitreg_provider_release_), the
# ReleaseStats field it shows, and what it says.
_RELEASE_COUNTS = (
    ("reads", "reads", "Reads of a provider's release list on its forge"),
    ("api_calls", "api_calls", "Requests to a provider's forge (pages, files), answered or not"),
    ("rate_limit_waits", "rate_limit_waits", "Times a provider's forge said to wait"),
    ("errors", "errors", "Requests to a provider's forge that failed other than by a wait"),
    ("fetches", "fetched", "Releases fetched whole from a provider's forge into cache_dir"),
    ("fetches_refused", "refused", "Releases fetched from a provider's forge, then refused"),
)


class ProviderCollector(Collector):
    """Hosted providers, and the network mirror: its requests, origins and downloads."""

    def __init__(
        self,
        providers: Providers,
        origin: OriginRegistry | None,
        mirror_requests: Counter[tuple[str, str]],
    ) -> None:
        self.providers = providers
        self.origin = origin
        self.mirror_requests = mirror_requests

    def collect(self) -> Iterator[Metric]:
        versions = GaugeMetricFamily(
            "gitreg_provider_versions", "Versions served, per hosted provider", labels=["provider"]
        )
        refused = GaugeMetricFamily(
            "gitreg_provider_releases_refused",
            "Releases in the folder that are not served (see /v1/status for why)",
            labels=["provider"],
        )
        for entry in self.providers.entries():
            versions.add_metric([str(entry.spec)], len(entry.releases))
            refused.add_metric([str(entry.spec)], len(entry.problems))
        yield versions
        yield refused
        yield from self._release_reads()
        requests = CounterMetricFamily(
            "gitreg_mirror_requests",
            "Network mirror requests, by what was asked and how it was answered",
            labels=["kind", "result"],
        )
        for (kind, result), n in sorted(self.mirror_requests.items()):
            requests.add_metric([kind, result], n)
        yield requests
        if self.origin is None:
            return
        up = GaugeMetricFamily(
            "gitreg_mirror_origin_up",
            "0 while read-through leaves a failed origin (or download host) alone",
            labels=["host"],
        )
        failures = CounterMetricFamily(
            "gitreg_mirror_origin_failures",
            "Failed requests to an origin or download host (unreachable, timeout, 5xx, 429)",
            labels=["host"],
        )
        for health in self.origin.health():
            up.add_metric([health.host], 1 if health.up else 0)
            failures.add_metric([health.host], health.failures)
        yield up
        yield failures
        downloads = CounterMetricFamily(
            "gitreg_mirror_downloads",
            "Packages read through from origins into the cache, by outcome",
            labels=["result"],
        )
        for result in ("ok", "failed"):
            downloads.add_metric([result], self.origin.downloads[result])
        yield downloads
        yield CounterMetricFamily(
            "gitreg_mirror_downloaded_bytes",
            "Bytes of verified packages read through into the cache",
            value=self.origin.downloaded_bytes,
        )

    def _release_reads(self) -> Iterator[Metric]:
        """Each forge provider's release-list reads, labelled by its address (`acme/widget`),
        never its forge's URL or token; no sample when no provider reads a forge."""
        fetchers = sorted(self.providers.fetchers.values(), key=lambda f: str(f.spec))
        for name, field, help_text in _RELEASE_COUNTS:
            family = CounterMetricFamily(
                f"gitreg_provider_release_{name}", help_text, labels=["provider"]
            )
            for fetcher in fetchers:
                family.add_metric([str(fetcher.spec)], getattr(fetcher.stats, field))
            yield family


class AuthCollector(Collector):
    """Requests auth decided, by principal (a token's name, never the token) and outcome."""

    def __init__(self, counts: Counter[tuple[str, str]]) -> None:
        self.counts = counts

    def collect(self) -> Iterator[Metric]:
        requests = CounterMetricFamily(
            "gitreg_auth_requests",
            "Requests auth decided: allowed, public, signed_url; or refused, and why",
            labels=["principal", "outcome"],
        )
        for (principal, outcome), n in sorted(self.counts.items()):
            requests.add_metric([principal, outcome], n)
        yield requests


class SourceCollector(Collector):
    """Each source's surveys in this process, by outcome, and what their listings counted;
    labelled by its key path in registry.yaml (`sources[0]`), never its URL or token."""

    def __init__(self, sources: SourceSurveys) -> None:
        self.sources = sources

    def collect(self) -> Iterator[Metric]:
        surveys = CounterMetricFamily(
            "gitreg_source_discoveries",
            "Discoveries of a source, by outcome (ok, unavailable, refused, held)",
            labels=["source", "outcome"],
        )
        counted = {
            name: CounterMetricFamily(f"gitreg_source_{name}", help, labels=["source"])
            for name, help in (
                ("api_calls", "Requests to a source's forge API, answered or not"),
                ("rate_limit_waits", "Times a source's forge said to wait (429, a spent limit)"),
                ("errors", "Listings of a source that ended in a fault other than a wait"),
            )
        }
        for spec, _ in self.sources.surveys():
            totals = self.sources.totals(spec)
            # Every outcome, from zero: an alert on a rate sees the first failure.
            for outcome in SURVEY_OUTCOMES:
                surveys.add_metric([spec.key_path, outcome], totals.surveys[outcome])
            counted["api_calls"].add_metric([spec.key_path], totals.api_calls)
            counted["rate_limit_waits"].add_metric([spec.key_path], totals.rate_limit_waits)
            counted["errors"].add_metric([spec.key_path], totals.errors)
        yield surveys
        yield from counted.values()


class ServingMemory(NamedTuple):
    """What this process holds to answer without work: archives read whole
    (`archives.memory_budget`) and the answers kept for the world served."""

    archive_bytes: int
    archives: int
    archive_budget: int
    kept_answers: int


class ServingMemoryCollector(Collector):
    def __init__(self, memory: ServingMemory) -> None:
        self.memory = memory

    def collect(self) -> Iterator[Metric]:
        memory = self.memory
        for name, help_text, value in (
            (
                "gitreg_archive_memory_bytes",
                "Bytes the archives held in memory cost, bodies and entries (this process's)",
                memory.archive_bytes,
            ),
            (
                "gitreg_archive_memory_budget_bytes",
                "archives.memory_budget: what the archives held may cost, per process",
                memory.archive_budget,
            ),
            ("gitreg_archives_held", "Archives held in memory (this process's)", memory.archives),
            (
                "gitreg_prepared_answers",
                "Answers kept for the world served, sent without their handler",
                memory.kept_answers,
            ),
        ):
            yield GaugeMetricFamily(name, help_text, value=value)


class DownloadCollector(Collector):
    """Installs counted in this process, and those whose counts were lost (never a request)."""

    def __init__(self, status: TallyStatus) -> None:
        self.status = status

    def collect(self) -> Iterator[Metric]:
        status = self.status
        for name, help_text, value in (
            ("gitreg_downloads_counted", "Installs counted (this process's)", status.counted),
            ("gitreg_downloads_written", "Installs written to the counts' store", status.written),
            (
                "gitreg_downloads_lost",
                "Installs counted but not written: the store out of reach, or too many pending",
                status.lost_events,
            ),
            (
                "gitreg_download_batches_lost",
                "Batches of counts the store refused",
                status.lost_batches,
            ),
        ):
            yield CounterMetricFamily(name, help_text, value=value)
        yield GaugeMetricFamily(
            "gitreg_downloads_pending", "Installs counted, not yet written", value=status.pending
        )


def _pending(snapshot: RegistrySnapshot, now: float) -> Iterator[Metric]:
    """Versions held back by publish_when, and the oldest one's age, per module: none at all
    (not even the families' help) in a registry without any."""
    held = [entry for entry in snapshot.index.entries() if entry.pending]
    if not held:
        return
    pending = GaugeMetricFamily(
        "gitreg_module_versions_pending", "Versions publish_when holds back", labels=["module"]
    )
    oldest = GaugeMetricFamily(
        "gitreg_module_pending_age_seconds",
        "Age of the oldest version publish_when holds back",
        labels=["module"],
    )
    for entry in held:
        module = str(entry.spec.address)
        pending.add_metric([module], len(entry.pending))
        oldest.add_metric([module], max(0.0, now - min(p.since for p in entry.pending)))
    yield pending
    yield oldest


def exposition(
    modules: CountedModules,
    webhooks: Counter[tuple[str, str]],
    providers: ProviderCollector | None = None,
    auth: Counter[tuple[str, str]] | None = None,
    sources: SourceSurveys | None = None,
    memory: ServingMemory | None = None,
    downloads: TallyStatus | None = None,
) -> bytes:
    collectors = CollectorRegistry(auto_describe=False)
    collectors.register(ModuleCollector(modules, webhooks))
    if memory is not None:
        collectors.register(ServingMemoryCollector(memory))
    if sources is not None:
        collectors.register(SourceCollector(sources))
    if providers is not None:
        collectors.register(providers)
    if auth is not None:
        collectors.register(AuthCollector(auth))
    if downloads is not None:
        collectors.register(DownloadCollector(downloads))
    return generate_latest(collectors)
