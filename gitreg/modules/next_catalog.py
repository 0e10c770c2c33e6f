"""A new catalog's module side, prepared beside the one served: what a reload changes is read
before anything is swapped, and only that. A repository whose modules are the same keeps its
entries as they are; one whose modules changed is read again from its clone (no fetch); a new
one is read from its clone when it has one, and otherwise listed unread (503 until fetched,
after the swap). With 10,000 modules, a reload that adds one reads one repository."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gitreg.catalog.model import Catalog
from gitreg.git.clone import TagRef
from gitreg.git.location import RepoLocation
from gitreg.modules.index import ModuleEntry
from gitreg.modules.snapshot import LedgerFor, RegistrySnapshot

# A repository read for the next catalog: its entries and its tags.
Read = Mapping[RepoLocation, tuple[tuple[ModuleEntry, ...], tuple[TagRef, ...]]]


@dataclass(frozen=True)
class NextCatalog:
    catalog: Catalog
    base: RegistrySnapshot  # the snapshot served when it was prepared
    draft: RegistrySnapshot  # what serves the catalog, if `base` is still served at the swap
    read: Read  # the repositories read for it
    fetch: tuple[RepoLocation, ...]  # new repositories: fetched once it serves
    ledger_for: LedgerFor

    @staticmethod
    def changed(base: RegistrySnapshot, draft: RegistrySnapshot) -> list[RepoLocation]:
        """The repositories `draft` must read again: new ones, and those whose modules or clone
        (credential, timeout) changed."""
        return [
            location
            for location, clone in draft.clones.items()
            if base.clones.get(location) is not clone
            or base.specs.get(location) != draft.specs[location]
        ]

    def on(self, current: RegistrySnapshot) -> RegistrySnapshot:
        """The snapshot to serve in place of `current`: the draft, or, when a sync swapped a
        repository meanwhile, the same made again on `current` (so that sync is not lost)."""
        if current is self.base:
            return self.draft
        return RegistrySnapshot.serving(self.catalog, current, self.ledger_for).with_repositories(
            self.read
        )
