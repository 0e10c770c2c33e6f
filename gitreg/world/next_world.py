"""A reload's next world, built beside the one served and swapped in whole.

It holds the modules the new catalog changes, read from their clones (`modules/next_catalog.py`),
its gate (the same one when auth: did not change) and its provider side, rescanned. Until the one
assignment that swaps it in, requests read the old world whole; from then on, the new one whole:
a module the new catalog adds is never served under the old gate, nor an old module under the
new one. See docs/how-it-works/internals.md."""

from __future__ import annotations

from dataclasses import dataclass

from gitreg.auth.gatekeeper import Gatekeeper
from gitreg.catalog.model import Catalog
from gitreg.modules.next_catalog import NextCatalog
from gitreg.state.shared import SharedState
from gitreg.world.provider_side import ProviderSide
from gitreg.world.world import CurrentWorld, World, gate_for


@dataclass(frozen=True)
class NextWorld:
    modules: NextCatalog
    gate: Gatekeeper
    side: ProviderSide

    @classmethod
    def prepare(
        cls, current: CurrentWorld, modules: NextCatalog, catalog: Catalog, shared: SharedState
    ) -> NextWorld:
        """The next world of `catalog`, around its `modules` as the module sync prepared them
        (this blocks: run it in a thread). Raises OSError or ValueError when a file the catalog
        names changed since it was read (a key file): the world served stays."""
        world = current.world
        side = world.side.rebuilt(catalog, current)
        gate = world.gate
        if catalog.auth != gate.settings:
            gate = gate_for(catalog, current.auth_counts, shared)
        return cls(modules, gate, side)

    def swap(self, current: CurrentWorld) -> World:
        """Serve this world (one assignment); returns the one it replaced."""
        return current.replace(
            lambda snapshot: World(self.modules.on(snapshot), self.gate, self.side)
        )
