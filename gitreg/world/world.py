"""The world served now, as one value: a catalog's module snapshot, its gate and its provider
side. A request reads it once (`web/state.py` keeps it for the request's whole life), so it
never sees a module of one catalog under another catalog's gate. A sync replaces the snapshot
inside it; a reload replaces the whole of it; each is one assignment under one lock."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from gitreg.auth.gate import Gate
from gitreg.auth.gatekeeper import Gatekeeper
from gitreg.auth.open_gate import OPEN_GATE
from gitreg.auth.own_origin import own_origin
from gitreg.catalog.model import Catalog
from gitreg.git.clone import TagRef
from gitreg.git.location import RepoLocation
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.sources.surveys import SourceSurveys
from gitreg.state.shared import SharedState
from gitreg.world.provider_side import ProviderSide


@dataclass(frozen=True)
class World:
    snapshot: RegistrySnapshot  # the modules, and the catalog they were read for
    gate: Gatekeeper  # without an auth: section, the open gate: anyone reads everything
    side: ProviderSide  # hosted providers and the network mirror

    @property
    def catalog(self) -> Catalog:
        return self.snapshot.catalog


class CurrentWorld:
    """Holds the world served now. It is the module sync's snapshot cell (a sync swaps its
    snapshot in here) and the providers' source of tags (they gate on the snapshot's)."""

    def __init__(
        self,
        sources: SourceSurveys,
        auth_counts: Counter[tuple[str, str]] | None = None,
    ) -> None:
        self._world: World | None = None
        # What the catalog's sources' last surveys found: an input of every world, beside
        # registry.yaml (the catalog a world serves holds both).
        self.sources = sources
        self._lock = threading.Lock()
        # (principal, outcome) of every request auth decided, kept across reloads.
        self.auth_counts: Counter[tuple[str, str]] = (
            Counter() if auth_counts is None else auth_counts
        )

    @property
    def world(self) -> World:
        if self._world is None:
            raise RuntimeError("no world is served yet")  # a bug: open_world sets the first
        return self._world

    @property
    def snapshot(self) -> RegistrySnapshot:
        return self.world.snapshot

    def tags_of(self, location: RepoLocation) -> Sequence[TagRef]:
        return self.world.snapshot.tags.get(location, ())

    def clone_path(self, location: RepoLocation) -> Path | None:
        clone = self.world.snapshot.clones.get(location)
        return clone.path if clone is not None else None

    def update(self, change: Callable[[RegistrySnapshot], RegistrySnapshot]) -> None:
        """A sync's swap: the snapshot, in the world served now."""
        with self._lock:
            world = self.world
            self._world = replace(world, snapshot=change(world.snapshot))

    def replace(self, make: Callable[[RegistrySnapshot], World]) -> World:
        """A reload's swap: a whole world, made from the snapshot served at this moment (so a
        sync swapped in meanwhile is kept); returns the world it replaced."""
        with self._lock:
            old = self.world
            self._world = make(old.snapshot)
            return old

    def first(self, world: World) -> None:
        with self._lock:
            self._world = world


def gate_for(
    catalog: Catalog, counts: Counter[tuple[str, str]], shared: SharedState | None = None
) -> Gatekeeper:
    """The catalog's auth, or the open gate when it has no auth: section. `shared`: where
    sign-outs and the tokens sign-in issued are kept (the registry's shared state)."""
    if catalog.auth is None:
        return OPEN_GATE
    return Gate.build(
        catalog.auth,
        catalog.cache_dir,
        counts,
        credential_for=catalog.credential_for,
        ended=shared,
        issued=shared.issued if shared is not None else None,
        origin=str(own_origin(catalog.server.hostname, catalog.server.public_url)),
    )
