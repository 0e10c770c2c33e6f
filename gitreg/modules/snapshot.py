"""What the module side serves, as one immutable value swapped in whole.

It holds the catalog, a clone and a ledger per repository, the modules each holds, its tags as
last read, and the VersionIndex built from them. A sync or a catalog reload makes a new snapshot
and swaps it in whole, through the `SnapshotCell` that holds it (a server's is its world:
gitreg.world)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Protocol

from gitreg.catalog.model import Catalog
from gitreg.catalog.specs import ModuleSpec
from gitreg.git.clone import BareClone, TagRef
from gitreg.git.location import RepoLocation
from gitreg.modules.index import ModuleEntry, VersionIndex
from gitreg.modules.resolve import ModuleVersions
from gitreg.pacing import breathe
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
    # Repositories this process has not read yet (a start, or a reload that added them): their
    # modules are listed, with no versions, and answer 503 until read, never 404.
    unread: frozenset[RepoLocation] = frozenset()

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
        timeout = catalog.freshness.fetch_timeout
        for location in catalog.repositories:
            credential = catalog.credential_for(location.url)
            old = old_clones.get(location)
            same = old and old.credential == credential and old.timeout == timeout
            clones[location] = (
                old if old and same else BareClone(location, catalog.cache_dir, credential, timeout)
            )
        specs: dict[RepoLocation, list[ModuleSpec]] = {location: [] for location in clones}
        for spec in catalog.modules:
            specs[spec.repo].append(spec)
        if ledger_for is None:
            ledger_for = partial(_disk_ledger, catalog.cache_dir)
        ledgers = {location: ledger_for(location, clone.name) for location, clone in clones.items()}
        listed = {spec.address.key: spec for spec in catalog.modules}
        index = {
            e.spec.address.key: _archived_as(e, listed[e.spec.address.key])
            for e in (previous.index.entries() if previous else [])
            if e.spec.address.key in listed
        }
        read = previous.clones.keys() - previous.unread if previous else set()
        unread = frozenset(location for location in clones if location not in read)
        for spec in catalog.modules:
            breathe()  # a reload's, paced; elsewhere nothing
            if spec.address.key not in index:
                index[spec.address.key] = unread_entry(spec, clones[spec.repo])
        tags = {loc: t for loc, t in (previous.tags if previous else {}).items() if loc in clones}
        return cls(
            catalog,
            MappingProxyType(clones),
            MappingProxyType({location: tuple(s) for location, s in specs.items()}),
            MappingProxyType(ledgers),
            VersionIndex(index),
            MappingProxyType(tags),
            unread,
        )

    def entries_of(self, location: RepoLocation) -> list[ModuleEntry]:
        """The entries of `location`'s modules, looked up by their addresses: a scan of the
        whole index at each sync held the GIL for much of a start-up fetch at 10,000 modules,
        and requests waited for it (bench/RESULTS.md: bench.scale)."""
        found = (self.index.get(*spec.address.key) for spec in self.specs.get(location, ()))
        return [e for e in found if e is not None and e.spec.repo == location]

    def with_repository(
        self, location: RepoLocation, entries: Iterable[ModuleEntry], tags: tuple[TagRef, ...]
    ) -> RegistrySnapshot:
        """This snapshot with one repository read anew: its modules' entries and its tags.
        Entries made for modules this snapshot does not list (the catalog changed while the
        repository was read) are left out, and the entries served before stay until the next
        read of the repository replaces them."""
        return self.with_repositories({location: (tuple(entries), tags)})

    def with_repositories(
        self, read: Mapping[RepoLocation, tuple[tuple[ModuleEntry, ...], tuple[TagRef, ...]]]
    ) -> RegistrySnapshot:
        """`with_repository` for several at once: one new index, however many were read."""
        fresh: dict[tuple[str, str, str], ModuleEntry] = {}
        tags = dict(self.tags)
        for location, (entries, repository_tags) in read.items():
            if location not in self.clones:
                continue  # removed from the catalog meanwhile
            current = set(self.specs[location])
            fresh.update((e.spec.address.key, e) for e in entries if e.spec in current)
            tags[location] = repository_tags
        if not fresh and tags == dict(self.tags) and not (read.keys() & self.unread):
            return self
        index = dict(self.index.items())
        index.update(fresh)
        return RegistrySnapshot(
            self.catalog,
            self.clones,
            self.specs,
            self.ledgers,
            VersionIndex(index),
            MappingProxyType(tags),
            self.unread - read.keys(),
        )


class SnapshotCell(Protocol):
    """Where the snapshot being served is held, and replaced: one assignment, under a lock, so
    that two syncs never lose each other's change."""

    @property
    def snapshot(self) -> RegistrySnapshot: ...

    def update(self, change: Callable[[RegistrySnapshot], RegistrySnapshot]) -> None: ...


class OwnSnapshot:
    """A cell of its own, for a registry that serves nothing (`gitreg check`, `list`, `docs`)."""

    def __init__(self, snapshot: RegistrySnapshot) -> None:
        self.snapshot = snapshot
        self._lock = threading.Lock()

    def update(self, change: Callable[[RegistrySnapshot], RegistrySnapshot]) -> None:
        with self._lock:
            self.snapshot = change(self.snapshot)


def unread_entry(spec: ModuleSpec, clone: BareClone) -> ModuleEntry:
    """A module listed before its repository is read: known, with no versions yet."""
    return ModuleEntry(spec, clone.path, ModuleVersions((), (), 0))


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
