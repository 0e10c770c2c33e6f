"""registry.yaml applied while serving, by one owner: the file read again, the next world built
off the event loop and swapped in whole, then the repositories it added fetched."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Protocol

from gitreg.catalog.model import Catalog
from gitreg.errors import ConfigError
from gitreg.freshness.catalog_file import read_again, refused
from gitreg.mirror.readthrough import ReadThrough
from gitreg.modules.index_keeper import IndexKeeper
from gitreg.modules.next_catalog import NextCatalog
from gitreg.modules.read_summary import summarize
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.modules.sync import ModuleSync
from gitreg.pacing import UNPACED, Budget, paced
from gitreg.providers.hosted import Providers
from gitreg.sources.surveys import SourceSurveys
from gitreg.state.configured import open_state
from gitreg.state.shared import SharedState
from gitreg.world.next_world import NextWorld
from gitreg.world.provider_side import ProviderSide
from gitreg.world.world import CurrentWorld, World, gate_for

log = logging.getLogger(__name__)

# A replaced origin client stays open this long for the requests still using it (a read-through
# download of a large provider can take minutes), or its download deadline if longer, then it is
# closed (work still at it is cut off); at shutdown, at once.
RETIRE_AFTER = 300.0


def open_world(
    catalog: Catalog,
    on_swap: Callable[[], None] | None = None,
    auth_counts: Counter[tuple[str, str]] | None = None,
    budget: Budget = UNPACED,
) -> tuple[CurrentWorld, ModuleSync]:
    """The first world of `catalog` and of what its sources' last surveys found, every repository
    listed and none read yet (a server then reads the clones, `ModuleSync.read_clones`, and
    fetches), and the module sync that keeps its snapshot fresh. `serve`, `demo`, the tests
    and the benches all start here."""
    current = CurrentWorld(SourceSurveys(catalog), auth_counts)
    # What the sources' surveys found before this start (cache_dir/sources.json) serves at once.
    catalog = current.sources.served(catalog)
    shared = open_state(catalog)
    snapshot = RegistrySnapshot.serving(catalog, ledger_for=shared.ledger)
    side = ProviderSide.build(catalog, Providers(catalog, current))
    current.first(World(snapshot, gate_for(catalog, current.auth_counts, shared), side))
    # Each read of a repository is noted for the persisted index, which a start serves from.
    reads = IndexKeeper(catalog.cache_dir, shared)
    return current, ModuleSync(catalog, shared, on_swap, cell=current, reads=reads, budget=budget)


class CatalogSync(Protocol):
    """What a reload asks of the module sync: the next catalog's module side prepared, adopted
    once swapped in, its new repositories fetched; and the state replicas share."""

    @property
    def shared(self) -> SharedState: ...

    def prepare(self, catalog: Catalog) -> NextCatalog: ...

    def adopted(self, next_catalog: NextCatalog) -> None: ...

    def fetch_new(self, next_catalog: NextCatalog) -> int: ...


class LiveCatalog:
    """registry.yaml applied while serving, one reload at a time: the next world is built off
    the event loop and swapped in whole (gitreg.world.next_world); then the repositories it
    added are fetched, and what changed is said in one line."""

    def __init__(self, current: CurrentWorld, sync: CatalogSync) -> None:
        self.current = current
        self.sync = sync
        self._lock = asyncio.Lock()
        self._retiring: set[asyncio.Task[None]] = set()

    async def reload(self) -> bool:
        """Read registry.yaml again and serve it (SIGHUP; a write, when it is watched): an
        invalid file is refused, and the catalog served stays."""
        async with self._lock:
            try:
                declared = await paced(partial(read_again, self.current.world.catalog))
            except ConfigError as exc:
                refused(exc, "still serving the previous catalog")
                return False
            return await self._serve(declared)

    async def surveyed(self) -> bool:
        """Serve what the sources' surveys found now, beside registry.yaml as last read: a changed
        set of modules, prepared and swapped in as a reload of registry.yaml is."""
        async with self._lock:
            return await self._serve(self.current.sources.declared)

    async def _serve(self, declared: Catalog) -> bool:
        """Serve `declared` beside what the sources' surveys found: the next world prepared, swapped
        in, the repositories it added fetched, what changed said; in that order."""
        composed = self.current.sources.composed(declared)
        catalog = composed.served
        started = time.monotonic()
        try:
            next_world = await paced(partial(self._prepare, catalog))
        except (OSError, ValueError) as exc:  # a key file changed since the catalog was read
            log.error("%s; still serving the previous catalog", exc)
            return False
        old = await asyncio.to_thread(self._swap, next_world)
        self.current.sources.adopt(composed)
        if next_world.gate is not old.gate:
            old.gate.close()
            log.info("auth: %s", "on" if next_world.gate.on else "off: anyone may read everything")
        retired = old.side.read_through
        if retired is not None and retired is not next_world.side.read_through:
            task = asyncio.create_task(_close_later(retired))
            self._retiring.add(task)
            task.add_done_callback(self._retiring.discard)
        failed = await asyncio.to_thread(self.sync.fetch_new, next_world.modules)
        read = len(next_world.modules.read) + len(next_world.modules.fetch)
        seconds = time.monotonic() - started
        index = self.current.snapshot.index
        summary = await paced(partial(summarize, old.snapshot.index, index, read, failed, seconds))
        log.info("catalog reloaded: %s; %d providers", summary, len(catalog.providers))
        return True

    def _prepare(self, catalog: Catalog) -> NextWorld:
        modules = self.sync.prepare(catalog)
        return NextWorld.prepare(self.current, modules, catalog, self.sync.shared)

    def _swap(self, next_world: NextWorld) -> World:
        old = next_world.swap(self.current)
        self.sync.adopted(next_world.modules)
        return old

    async def close(self) -> None:
        """At shutdown: every origin client, the replaced ones too, and the gate's."""
        for task in self._retiring:
            task.cancel()
        await asyncio.gather(*self._retiring, return_exceptions=True)
        world = self.current.world
        if world.side.read_through is not None:
            world.side.read_through.close()
        world.gate.close()


async def _close_later(read_through: ReadThrough) -> None:
    try:
        await asyncio.sleep(max(RETIRE_AFTER, read_through.settings.download_deadline))
    finally:
        read_through.close()
