"""What the app's handlers share, as one typed value the lifespan yields.

It is Starlette's lifespan state, never an untyped bag; and the world a request reads,
`world_of(request)`: the same one from the request's first read to its answer, whatever a reload
swaps meanwhile."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from starlette.requests import Request
from starlette.types import Scope

from gitreg.dependents.consumers import ConsumerReads
from gitreg.dependents.keeping import Dependents
from gitreg.docs.service import DocsService
from gitreg.docs.warming import WarmedModules
from gitreg.freshness.background import BackgroundWork
from gitreg.freshness.deliveries import DeliveryLog, SeenDeliveries
from gitreg.freshness.fresh_reads import FreshReads
from gitreg.freshness.live import LiveCatalog
from gitreg.freshness.sync_queue import SyncQueue
from gitreg.modules.archive_cache import ZIP, ArchiveCache
from gitreg.modules.on_demand import OnDemand
from gitreg.modules.sync import ModuleSync
from gitreg.oci.packages import ModulePackages
from gitreg.oci.referrers import Attached, ModuleReferrers
from gitreg.ops.metrics import CountedModules
from gitreg.ops.readiness import ReadinessModules
from gitreg.pacing import UNPACED, Budget
from gitreg.usage.installed import InstalledBefore
from gitreg.usage.tally import DownloadTally
from gitreg.web import attachments
from gitreg.web.held_archives import HeldArchives
from gitreg.web.kept import KeptAnswers
from gitreg.world.world import CurrentWorld, World

STATE_KEY = "gitreg"
_WORLD_KEY = "gitreg.world"  # in a request's scope: the world it reads


class ServedModules(ReadinessModules, CountedModules, WarmedModules, Protocol):
    """What handlers ask of the module sync: each repository's status, why its versions are
    not known yet, the refreshes a cache miss may cause; and what readiness, metrics and the
    docs warming they start read."""

    @property
    def on_demand(self) -> OnDemand: ...


@dataclass(frozen=True)
class RegistryState:
    """The world served (`current`), the module sync that keeps its snapshot fresh as handlers
    see it (`modules`), the reloads that replace it whole (`live`), the archive cache and the
    answers of the archives it holds, the installs counted, and the counters and tasks that
    outlive a reload."""

    current: CurrentWorld
    modules: ServedModules
    archives: ArchiveCache
    live: LiveCatalog
    fresh_reads: FreshReads
    syncs: SyncQueue
    background: BackgroundWork
    docs: DocsService  # module docs, built once per commit, warmed after each swap
    packages: ModulePackages  # module versions as OCI packages: zips and their manifests
    held_archives: HeldArchives  # archives.memory_budget's: this process's alone
    referrers: ModuleReferrers  # documents attached to module versions, as OCI referrers
    downloads: DownloadTally  # installs counted, written off the request path
    dependents: Dependents  # who calls each module, rebuilt whole off the event loop
    webhook_counts: Counter[tuple[str, str]] = field(default_factory=Counter)  # (forge, outcome)
    webhook_log: DeliveryLog = field(default_factory=DeliveryLog)
    seen_deliveries: SeenDeliveries = field(default_factory=SeenDeliveries)
    mirror_counts: Counter[tuple[str, str]] = field(default_factory=Counter)  # (kind, outcome)
    started: float = field(default_factory=time.time)  # readiness counts a never-synced age from it
    kept: KeptAnswers = field(default_factory=KeptAnswers)  # the hot routes' answers, kept
    installed: InstalledBefore = field(init=False)  # who installed what: what revocation asks

    def __post_init__(self) -> None:
        object.__setattr__(self, "installed", InstalledBefore(self.downloads))

    @property
    def auth_counts(self) -> Counter[tuple[str, str]]:
        """(principal, outcome) of every request auth decided; kept across reloads."""
        return self.current.auth_counts

    @classmethod
    def build(
        cls,
        current: CurrentWorld,
        sync: ModuleSync,
        fresh_reads: FreshReads | None = None,
        worker: int | None = None,
        budget: Budget = UNPACED,
        attached: Attached | None = None,
    ) -> RegistryState:
        """Around a world `gitreg.freshness.live.open_world` opened. `worker`: which of several
        `gitreg serve --workers` this process is (None: the only server process). `budget`:
        the process's CPU budget, which its background work keeps to (a server's).
        `attached`: what module versions carry as OCI referrers, instead of
        `web/attachments.py`'s."""
        catalog = current.world.catalog
        archives = ArchiveCache(catalog.cache_dir, limits=catalog.archives.limits)
        live = LiveCatalog(current, sync)
        syncs = SyncQueue(sync, budget=budget)
        docs = DocsService(catalog.cache_dir)
        packages = ModulePackages(
            ArchiveCache(catalog.cache_dir, limits=catalog.archives.limits, form=ZIP)
        )
        if attached is None:
            attached = attachments.attached(archives, docs)
        return cls(
            current,
            sync,
            archives,
            live,
            fresh_reads or FreshReads(sync),
            syncs,
            BackgroundWork(live, sync, syncs, worker, budget),
            docs,
            packages,
            HeldArchives(catalog.archives.memory_budget),
            ModuleReferrers(packages, attached, docs.commit_time),
            DownloadTally(sync.shared.download_store(), lambda: current.world.catalog.downloads),
            Dependents(docs, ConsumerReads(), lambda: current.world.side.providers),
        )


def state_of(request: Request) -> RegistryState:
    state: RegistryState = getattr(request.state, STATE_KEY)
    return state


def world_of(request: Request) -> World:
    """The world this request reads: the one served at its first read, kept in its scope."""
    world: World | None = request.scope.get(_WORLD_KEY)
    if world is None:
        world = request.scope[_WORLD_KEY] = state_of(request).current.world
    return world


def world_read(scope: Scope, world: World) -> None:
    """`world`, read for the request of `scope` before any handler (`web/kept_routes.py`)."""
    scope[_WORLD_KEY] = world


def world_synced(request: Request) -> World:
    """The world this request reads, with what syncs swapped in since its first read (a fresh
    read it waited for): the same catalog, gate and providers, newer versions. After a reload
    meanwhile, still the world it began with: a request never mixes two catalogs."""
    world = world_of(request)
    now = state_of(request).current.world
    if now is not world and now.catalog is world.catalog and now.gate is world.gate:
        world = request.scope[_WORLD_KEY] = now
    return world
