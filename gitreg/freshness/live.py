"""registry.yaml applied while serving: the modules by the registry, then the provider side
(hosted providers and the network mirror) rebuilt off the event loop and swapped in whole."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from dataclasses import dataclass

from gitreg.auth.gate import Gate
from gitreg.catalog.model import Catalog, MirrorSettings
from gitreg.freshness.watching import reload_catalog
from gitreg.mirror.answers import Answers
from gitreg.mirror.readthrough import ReadThrough
from gitreg.mirror.sources import FolderSource, HostedSource, MirrorSource, NetworkMirror
from gitreg.modules.sync import Registry
from gitreg.providers.hashes import HashCache
from gitreg.providers.hosted import Providers
from gitreg.state.ended_sessions import EndedSessions

log = logging.getLogger(__name__)

# A replaced origin client stays open this long for the requests still using it (a read-through
# download of a large provider can take minutes), or its download deadline if longer, then it is
# closed (work still at it is cut off); at shutdown, at once.
RETIRE_AFTER = 300.0


@dataclass(frozen=True)
class ProviderSide:
    """What one catalog serves about providers: the hosted ones and the network mirror."""

    providers: Providers
    mirror: NetworkMirror
    hashes: HashCache
    read_through: ReadThrough | None
    origins_for: tuple[str, MirrorSettings]  # the hostname and settings read_through was made for
    answers: Answers  # the mirror's rendered answers: they go with the sources that made them

    @classmethod
    def build(
        cls, catalog: Catalog, providers: Providers, previous: ProviderSide | None = None
    ) -> ProviderSide:
        hashes = previous.hashes if previous else HashCache()
        origins_for = (catalog.hostname, catalog.mirror)
        read_through: ReadThrough | None = None
        if previous is not None and previous.origins_for == origins_for:
            read_through = previous.read_through
        elif catalog.mirror.read_through:
            read_through = ReadThrough(
                catalog.mirror, catalog.cache_dir, hashes, own=catalog.hostname
            )
        sources: list[MirrorSource] = [HostedSource(catalog.hostname, providers, hashes)]
        sources += [FolderSource(folder, hashes) for folder in catalog.mirror.folders]
        mirror = NetworkMirror(sources, read_through, own=catalog.hostname)
        return cls(providers, mirror, hashes, read_through, origins_for, Answers())

    def rebuilt(self, catalog: Catalog, registry: Registry) -> ProviderSide:
        """A new catalog's side, scanned and ready to serve (this blocks: run it in a thread).
        What did not change is kept: release folders with their zip hashes, and the origin
        client while the hostname and the mirror settings stay the same."""
        providers = Providers(catalog, registry, previous=self.providers)
        providers.refresh()
        return ProviderSide.build(catalog, providers, previous=self)


class LiveCatalog:
    """registry.yaml applied while serving, one reload at a time: the registry swaps in its
    modules, then a new provider side, built whole off the event loop, replaces the old one in
    one step on the loop (no await in between: a request sees all or none of it)."""

    def __init__(
        self,
        registry: Registry,
        side: ProviderSide,
        auth_counts: Counter[tuple[str, str]] | None = None,
    ) -> None:
        self.registry = registry
        self.side = side
        self.auth_counts: Counter[tuple[str, str]] = (
            Counter() if auth_counts is None else auth_counts
        )
        self.gate = gate_for(registry.snapshot.catalog, self.auth_counts, registry.shared)
        self._lock = asyncio.Lock()
        self._retiring: set[asyncio.Task[None]] = set()

    def providers(self) -> Providers:
        return self.side.providers

    async def reload(self) -> bool:
        """Read registry.yaml again and serve it (SIGHUP; a write, when it is watched)."""
        async with self._lock:
            source = self.registry.snapshot.catalog.source
            return await reload_catalog(self.registry, source, self._follow)

    async def _follow(self, catalog: Catalog) -> bool:
        old = self.side
        try:
            new = await asyncio.to_thread(old.rebuilt, catalog, self.registry)
        except (OSError, ValueError) as exc:  # a key file changed since the catalog was read
            log.error("%s\nstill serving the previous providers and mirror", exc)
            return False
        self.side = new
        if catalog.auth != (self.gate.settings if self.gate else None):
            old_gate, self.gate = (
                self.gate,
                gate_for(catalog, self.auth_counts, self.registry.shared),
            )
            if old_gate is not None:
                old_gate.close()
            log.info("auth: %s", "on" if self.gate else "off: anyone may read everything")
        if old.read_through is not None and old.read_through is not new.read_through:
            task = asyncio.create_task(_close_later(old.read_through))
            self._retiring.add(task)
            task.add_done_callback(self._retiring.discard)
        return True

    async def close(self) -> None:
        """At shutdown: every origin client, the replaced ones too."""
        for task in self._retiring:
            task.cancel()
        await asyncio.gather(*self._retiring, return_exceptions=True)
        if self.side.read_through is not None:
            self.side.read_through.close()
        if self.gate is not None:
            self.gate.close()


def gate_for(
    catalog: Catalog, counts: Counter[tuple[str, str]], ended: EndedSessions | None = None
) -> Gate | None:
    """The catalog's auth, or None when it has no auth: section (open to all). `ended`: where
    sign-outs are recorded (the registry's shared state)."""
    if catalog.auth is None:
        return None
    return Gate.build(
        catalog.auth,
        catalog.cache_dir,
        counts,
        credential_for=catalog.credential_for,
        ended=ended,
    )


async def _close_later(read_through: ReadThrough) -> None:
    try:
        await asyncio.sleep(max(RETIRE_AFTER, read_through.settings.download_deadline))
    finally:
        read_through.close()
