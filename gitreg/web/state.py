"""What the app's handlers share, as one typed value that the lifespan yields (Starlette's
lifespan state): handlers read `state_of(request).registry`, never an untyped bag."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from starlette.requests import Request

from gitreg.docs.service import DocsService
from gitreg.freshness.background import BackgroundWork
from gitreg.freshness.deliveries import DeliveryLog, SeenDeliveries
from gitreg.freshness.fresh_reads import FreshReads
from gitreg.freshness.live import LiveCatalog, ProviderSide
from gitreg.freshness.sync_queue import SyncQueue
from gitreg.modules.archive_cache import ArchiveCache
from gitreg.modules.sync import Registry
from gitreg.providers.hosted import Providers

STATE_KEY = "gitreg"


@dataclass(frozen=True)
class RegistryState:
    """The module side (`registry`, and the checks that keep its reads fresh), the provider side
    (`live.side`, swapped whole on a reload), the archive cache, and the counters and tasks that
    outlive a reload."""

    registry: Registry
    archives: ArchiveCache
    live: LiveCatalog
    fresh_reads: FreshReads
    syncs: SyncQueue
    background: BackgroundWork
    docs: DocsService  # module docs, built once per commit, warmed after each swap
    webhook_counts: Counter[tuple[str, str]] = field(default_factory=Counter)  # (forge, outcome)
    webhook_log: DeliveryLog = field(default_factory=DeliveryLog)
    seen_deliveries: SeenDeliveries = field(default_factory=SeenDeliveries)
    mirror_counts: Counter[tuple[str, str]] = field(default_factory=Counter)  # (kind, outcome)
    started: float = field(default_factory=time.time)  # readiness counts a never-synced age from it

    @property
    def auth_counts(self) -> Counter[tuple[str, str]]:
        """(principal, outcome) of every request auth decided; kept across reloads."""
        return self.live.auth_counts

    @classmethod
    def build(
        cls,
        registry: Registry,
        archives: ArchiveCache,
        providers: Providers | None = None,
        fresh_reads: FreshReads | None = None,
        worker: int | None = None,
    ) -> RegistryState:
        """`worker`: which of several `gitreg serve --workers` this process is (None: the only
        server process)."""
        catalog = registry.snapshot.catalog
        if providers is None:
            providers = Providers(catalog, registry)
        side = ProviderSide.build(catalog, providers)
        live = LiveCatalog(registry, side)
        syncs = SyncQueue(registry)
        fresh_reads = fresh_reads or FreshReads(registry)
        return cls(
            registry,
            archives,
            live,
            fresh_reads,
            syncs,
            BackgroundWork(live, syncs, worker),
            DocsService(catalog.cache_dir),
        )


def state_of(request: Request) -> RegistryState:
    state: RegistryState = getattr(request.state, STATE_KEY)
    return state
