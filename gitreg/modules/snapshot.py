"""What the module side serves, as one immutable value: the catalog, a clone and a ledger per
repository, the modules each holds, its tags as last read, and the VersionIndex built from
them. A sync or a catalog reload makes a new snapshot and swaps it in whole."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from types import MappingProxyType

from gitreg.catalog.model import Catalog, ModuleSpec
from gitreg.git.clone import BareClone, TagRef
from gitreg.git.location import RepoLocation
from gitreg.modules.index import ModuleEntry, VersionIndex
from gitreg.state.ledger import DiskLedger, TagLedger

# A repository's ledger, by its location and its clone's name.
LedgerFor = Callable[[RepoLocation, str], TagLedger]


@dataclass(frozen=True)
class RegistrySnapshot:
    catalog: Catalog
    clones: Mapping[RepoLocation, BareClone]
    specs: Mapping[RepoLocation, tuple[ModuleSpec, ...]]  # the modules each repository holds
    ledgers: Mapping[RepoLocation, TagLedger]
    index: VersionIndex
    tags: Mapping[RepoLocation, tuple[TagRef, ...]]  # as last read; providers gate on them

    @classmethod
    def serving(
        cls,
        catalog: Catalog,
        previous: RegistrySnapshot | None = None,
        ledger_for: LedgerFor | None = None,
    ) -> RegistrySnapshot:
        """The snapshot that serves `catalog`. From `previous`, what still applies is kept: a
        clone whose credential and timeout did not change, the tags of a repository still
        listed, and the entry of a module still listed, until its repository is read again
        (so a reload never makes a module disappear for a moment)."""
        old_clones = previous.clones if previous else {}
        clones: dict[RepoLocation, BareClone] = {}
        for location in catalog.repositories:
            credential = catalog.credential_for(location.url)
            old = old_clones.get(location)
            same = old and old.credential == credential and old.timeout == catalog.fetch_timeout
            clones[location] = (
                old
                if old and same
                else BareClone(location, catalog.cache_dir, credential, catalog.fetch_timeout)
            )
        specs: dict[RepoLocation, list[ModuleSpec]] = {location: [] for location in clones}
        for spec in catalog.modules:
            specs[spec.repo].append(spec)
        if ledger_for is None:
            ledger_for = partial(_disk_ledger, catalog.cache_dir)
        ledgers = {location: ledger_for(location, clone.name) for location, clone in clones.items()}
        listed = {spec.address.key: spec for spec in catalog.modules}
        kept = [
            _archived_as(e, listed[e.spec.address.key])
            for e in (previous.index.entries() if previous else [])
            if e.spec.address.key in listed
        ]
        tags = {loc: t for loc, t in (previous.tags if previous else {}).items() if loc in clones}
        return cls(
            catalog,
            MappingProxyType(clones),
            MappingProxyType({location: tuple(s) for location, s in specs.items()}),
            MappingProxyType(ledgers),
            VersionIndex({e.spec.address.key: e for e in kept}),
            MappingProxyType(tags),
        )

    def entries_of(self, location: RepoLocation) -> list[ModuleEntry]:
        return [e for e in self.index.entries() if e.spec.repo == location]

    def with_repository(
        self, location: RepoLocation, entries: Iterable[ModuleEntry], tags: tuple[TagRef, ...]
    ) -> RegistrySnapshot:
        """This snapshot with one repository read anew: its modules' entries and its tags.
        Entries made for modules this snapshot does not list (the catalog changed while the
        repository was read) are left out, and the entries served before stay until the next
        read of the repository replaces them."""
        if location not in self.clones:
            return self  # removed from the catalog meanwhile
        current = set(self.specs[location])
        fresh = {e.spec.address.key: e for e in entries if e.spec in current}
        index = {key: e for key, e in self.index.items() if key not in fresh}
        index.update(fresh)
        return RegistrySnapshot(
            self.catalog,
            self.clones,
            self.specs,
            self.ledgers,
            VersionIndex(index),
            MappingProxyType({**self.tags, location: tags}),
        )


def _disk_ledger(cache_dir: Path, location: RepoLocation, name: str) -> TagLedger:
    return DiskLedger(cache_dir / "ledgers" / f"{name}.json")


def _archived_as(entry: ModuleEntry, spec: ModuleSpec) -> ModuleEntry:
    """A kept entry with the new catalog's archive scope at once, not at its repository's next
    read: an archive narrowed to its folder (gitreg.catalog.archive_scopes) must never be served
    whole meanwhile, nor a download answer point at the whole one."""
    old = entry.spec
    if (old.archive, old.archive_narrowed_by) == (spec.archive, spec.archive_narrowed_by):
        return entry
    scoped = replace(old, archive=spec.archive, archive_narrowed_by=spec.archive_narrowed_by)
    return replace(entry, spec=spec if scoped == spec else scoped)
