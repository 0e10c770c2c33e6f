"""What one catalog serves about providers: the hosted ones and the network mirror, built
together off the event loop and replaced with the world they belong to."""

from __future__ import annotations

from dataclasses import dataclass

from gitreg.catalog.mirror_settings import MirrorSettings
from gitreg.catalog.model import Catalog
from gitreg.mirror.readthrough import ReadThrough
from gitreg.mirror.recent_bodies import RecentBodies
from gitreg.mirror.sources import FolderSource, HostedSource, MirrorSource, NetworkMirror
from gitreg.providers.hashes import HashCache
from gitreg.providers.hosted import Providers, RepositoryTags


@dataclass(frozen=True)
class ProviderSide:
    """What one catalog serves about providers: the hosted ones and the network mirror."""

    providers: Providers
    mirror: NetworkMirror
    hashes: HashCache
    read_through: ReadThrough | None
    origins_for: tuple[str, MirrorSettings]  # the hostname and settings read_through was made for
    recent_bodies: RecentBodies  # the mirror's rendered JSON: it goes with the sources that made it

    @classmethod
    def build(
        cls, catalog: Catalog, providers: Providers, previous: ProviderSide | None = None
    ) -> ProviderSide:
        hashes = providers.hashes  # the hosted zips' hashes are the scan's
        origins_for = (catalog.server.hostname, catalog.mirror)
        read_through: ReadThrough | None = None
        if previous is not None and previous.origins_for == origins_for:
            read_through = previous.read_through
        elif catalog.mirror.read_through:
            read_through = ReadThrough(
                catalog.mirror, catalog.cache_dir, hashes, own=catalog.server.hostname
            )
        sources: list[MirrorSource] = [HostedSource(catalog.server.hostname, providers, hashes)]
        sources += [FolderSource(folder, hashes) for folder in catalog.mirror.folders]
        mirror = NetworkMirror(sources, read_through, own=catalog.server.hostname)
        return cls(providers, mirror, hashes, read_through, origins_for, RecentBodies())

    def rebuilt(self, catalog: Catalog, tags: RepositoryTags) -> ProviderSide:
        """A new catalog's side, scanned and ready to serve (this blocks: run it in a thread).
        What did not change is kept: release folders with their zip hashes, and the origin
        client while the hostname and the mirror settings stay the same."""
        providers = Providers(catalog, tags, previous=self.providers)
        providers.refresh()
        return ProviderSide.build(catalog, providers, previous=self)
