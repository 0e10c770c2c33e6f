"""Every module and hosted provider a requester may read, with its newest version and a
description, a shelf per namespace. The costly part (newest versions, web URLs, order, where
each namespace's modules begin and end, and each system's) is worked out once per module
snapshot; a request only picks the namespaces its reader may read, and describes the modules
it shows (a page of them, or all of them for a search)."""

from __future__ import annotations

import bisect
import dataclasses
import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from gitreg.catalog.specs import ModuleSpec, ProviderSpec
from gitreg.directory.repository_url import web_url
from gitreg.modules.index import ModuleEntry, VersionIndex
from gitreg.modules.resolve import Release
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.providers.artifacts import ProviderRelease
from gitreg.providers.hosted import ProviderEntry, Providers
from gitreg.tags import parse_version

_R = TypeVar("_R", Release, ProviderRelease)

# The description of a module version (the README's first paragraph), or None while it is not
# known yet (its docs are not built): asked again next time, where a text, even empty, is kept.
Describe = Callable[[ModuleEntry, Release], str | None]
# What a reader may open beyond its namespaces: with auth.git, a repository whose Git server
# accepted its token.
Opened = Callable[[ModuleSpec | ProviderSpec], bool]


@dataclass(frozen=True)
class DirectoryModule:
    namespace: str
    name: str
    system: str
    version: str  # the newest release (a prerelease only when all of them are)
    description: str
    repository_url: str | None  # where people read the repository, when it can be told
    entry: ModuleEntry
    release: Release  # the release `version` names
    key: tuple[str, str, str] = ("", "", "")  # namespace, name and system in lower case

    @property
    def address(self) -> str:
        return f"{self.namespace}/{self.name}/{self.system}"

    @property
    def versions(self) -> tuple[str, ...]:
        """Every version served, newest first."""
        return tuple(r.version for r in self.entry.versions.releases)


@dataclass(frozen=True)
class DirectoryProvider:
    namespace: str
    type: str
    version: str
    description: str  # empty: providers have no docs here yet
    repository_url: str | None
    entry: ProviderEntry
    release: ProviderRelease

    @property
    def address(self) -> str:
        return f"{self.namespace}/{self.type}"


@dataclass(frozen=True)
class NamespaceGroup:
    namespace: str  # as the catalog spells it (the first spelling, when several differ in case)
    modules: tuple[DirectoryModule, ...]
    providers: tuple[DirectoryProvider, ...]


@dataclass(frozen=True)
class Shelf:
    """One namespace as a reader sees it: where its readable modules are among the directory's
    sorted modules (a range when the reader reads the whole namespace; then it is the one built
    with the index), and its readable providers."""

    namespace: str  # as the catalog spells it (the first spelling, when several differ in case)
    key: str  # in lower case
    positions: Sequence[int]
    providers: tuple[DirectoryProvider, ...] = ()

    @property
    def size(self) -> int:
        """Modules and providers: what a page of the namespace lists."""
        return len(self.positions) + len(self.providers)


class DirectoryView:
    """What one reader may read, a shelf per namespace, sorted case-insensitively; within one,
    modules by name, then system. A module is described when it is asked for, so that a page
    of a large directory costs the page, not the directory."""

    def __init__(self, built: _Built, describe: Describe, shelves: Sequence[Shelf]) -> None:
        self._built, self._describe = built, describe
        self.shelves = tuple(shelves)

    def described(self, positions: Iterable[int]) -> list[DirectoryModule]:
        return [self._built.described(i, self._describe) for i in positions]

    @functools.cached_property
    def modules(self) -> tuple[DirectoryModule, ...]:
        """Every readable module, described (search reads them all)."""
        every = self._built.all_described(self._describe)
        found: list[DirectoryModule] = []
        for shelf in self.shelves:
            positions = shelf.positions
            if isinstance(positions, range):
                found += every[positions.start : positions.stop]
            else:
                found += (every[i] for i in positions)
        return tuple(found)

    @property
    def providers(self) -> tuple[DirectoryProvider, ...]:
        return tuple(p for s in self.shelves for p in s.providers)

    def shelf(self, namespace: str) -> Shelf | None:
        """The namespace's shelf; None alike when it does not exist and when it is not readable."""
        return self._by_key.get(namespace.lower())

    @functools.cached_property
    def _by_key(self) -> dict[str, Shelf]:
        return {s.key: s for s in self.shelves}

    def namespaces(self) -> list[NamespaceGroup]:
        return [
            NamespaceGroup(s.namespace, tuple(self.described(s.positions)), s.providers)
            for s in self.shelves
        ]

    def module(self, namespace: str, name: str, system: str) -> DirectoryModule | None:
        key = (namespace.lower(), name.lower(), system.lower())
        return next((m for m in self.modules if m.key == key), None)

    def module_runs(
        self, namespace: str | None = None, name: str | None = None, system: str | None = None
    ) -> list[Sequence[int]]:
        """The positions of the readable modules that match (each argument lower case, None for
        any), as one run per namespace, in the view's order: a page is cut from their
        lengths, and only its modules are described. Worked out per namespace, from what the
        index's build already knows (its runs by namespace, by name, by system)."""
        if namespace is not None:
            shelf = self.shelf(namespace)
            shelves: tuple[Shelf, ...] = (shelf,) if shelf is not None else ()
        else:
            shelves = self.shelves
        return [run for s in shelves if (run := self._built.narrowed(s, name, system))]


def directory_view(
    snapshot: RegistrySnapshot,
    providers: Providers,
    may_read: Callable[[str], bool],
    describe: Describe,
    opened: Opened | None = None,
) -> DirectoryView:
    """What a reader may read: the modules and hosted providers in a namespace `may_read`
    (asked once per namespace), or that `opened` opens. Modules and providers that serve no
    version yet are left out: there is nothing to fetch. Costs a look per namespace (and per
    module of a namespace it may not read, with `opened`)."""
    built = _built.of(snapshot.index, describe)
    readable = _providers_of(providers.entries())
    by_namespace: dict[str, list[DirectoryProvider]] = {}
    for provider in readable:
        by_namespace.setdefault(provider.namespace.lower(), []).append(provider)
    keys: Iterable[str] = built.shelves
    if by_namespace:
        keys = sorted(built.shelves.keys() | by_namespace.keys())
    shelves = []
    for key in keys:
        whole = built.shelves.get(key)
        spelled = whole.namespace if whole is not None else by_namespace[key][0].namespace
        here = tuple(by_namespace.get(key, ()))
        if may_read(spelled):
            if not here and whole is not None:
                shelves.append(whole)
                continue
            positions: Sequence[int] = whole.positions if whole is not None else ()
        elif opened is not None:
            positions = built.opened(whole, opened)
            here = tuple(p for p in here if opened(p.entry.spec))
        else:
            continue
        if positions or here:
            shelves.append(Shelf(spelled, key, positions, here))
    return DirectoryView(built, describe, shelves)


class _Built:
    """The modules of one index, listed and sorted, cut into one shelf per namespace, and those
    already described: a module version's description never changes once its docs are built
    (they are per commit), so it is asked for until there is one, then kept. Replaced when a
    sync swaps the index."""

    def __init__(self, index: VersionIndex | None, describe: Describe | None) -> None:
        self.index, self.describe = index, describe
        self._described: dict[int, DirectoryModule] = {}
        self._all: tuple[DirectoryModule, ...] | None = None
        self.adopt(_modules_of(index.entries()) if index is not None else ())

    def adopt(self, modules: tuple[DirectoryModule, ...]) -> None:
        """Take `modules` (sorted by key) as this index's, and cut them by namespace."""
        self.modules = modules
        self.keys = [m.key for m in modules]
        starts: dict[str, int] = {}
        self.systems: dict[tuple[str, str], list[int]] = {}
        for position, (namespace, _, system) in enumerate(self.keys):
            starts.setdefault(namespace, position)
            self.systems.setdefault((namespace, system), []).append(position)
        ends = [*list(starts.values())[1:], len(modules)][: len(starts)]
        self.shelves = {
            key: Shelf(modules[start].namespace, key, range(start, end))
            for (key, start), end in zip(starts.items(), ends, strict=True)
        }

    def described(self, position: int, describe: Describe) -> DirectoryModule:
        known = self._described.get(position)
        if known is not None:
            return known
        module = self.modules[position]
        text = describe(module.entry, module.release)
        if text is None:
            return module
        described = module if not text else dataclasses.replace(module, description=text)
        self._described[position] = described
        return described

    def all_described(self, describe: Describe) -> tuple[DirectoryModule, ...]:
        """Every module, described as far as is known; kept once every one is (the warming
        describes them all), so that a search of 10,000 modules does not ask 10,000 times."""
        if self._all is not None:
            return self._all
        every = tuple(self.described(i, describe) for i in range(len(self.modules)))
        if len(self._described) == len(every):
            self._all = every
        return every

    def opened(self, whole: Shelf | None, opened: Opened) -> tuple[int, ...]:
        if whole is None:
            return ()
        return tuple(i for i in whole.positions if opened(self.modules[i].entry.spec))

    def narrowed(self, shelf: Shelf, name: str | None, system: str | None) -> Sequence[int]:
        """The shelf's positions of modules named `name`, of `system` (None: any)."""
        positions = shelf.positions
        if name is not None and isinstance(positions, range):
            # Sorted by (namespace, name, system): one name is one run, found by bisection.
            def prefix(key: tuple[str, str, str]) -> tuple[str, str]:
                return key[:2]

            wanted = (shelf.key, name)
            low = bisect.bisect_left(self.keys, wanted, positions.start, positions.stop, key=prefix)
            high = bisect.bisect_right(self.keys, wanted, low, positions.stop, key=prefix)
            positions = range(low, high)
        elif name is not None:
            positions = tuple(i for i in positions if self.keys[i][1] == name)
        if system is None:
            return positions
        whole = self.shelves.get(shelf.key)
        if whole is not None and positions is whole.positions:
            return self.systems.get((shelf.key, system), ())
        return tuple(i for i in positions if self.keys[i][2] == system)


class _Last:
    """The view built last; a request that reads the same index reuses it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._built = _Built(None, None)

    def of(self, index: VersionIndex, describe: Describe) -> _Built:
        with self._lock:
            built = self._built
        if built.index is index and built.describe is describe:
            return built
        if built.index is index:  # another describer (tests): the same modules, described anew
            fresh = _Built(None, describe)
            fresh.index = index
            fresh.adopt(built.modules)
        else:
            fresh = _Built(index, describe)
        with self._lock:
            self._built = fresh
        return fresh


_built = _Last()


def _modules_of(entries: Iterable[ModuleEntry]) -> tuple[DirectoryModule, ...]:
    listed = []
    urls: dict[object, str | None] = {}
    for entry in entries:
        release = newest(entry.versions.releases)
        if release is None or entry.spec.hidden:
            continue
        spec = entry.spec
        if spec.repo not in urls:
            urls[spec.repo] = web_url(spec.repo)
        address = spec.address
        listed.append(
            DirectoryModule(
                address.namespace,
                address.name,
                address.system,
                release.version,
                "",
                urls[spec.repo],
                entry,
                release,
                address.key,
            )
        )
    listed.sort(key=lambda m: m.key)
    return tuple(listed)


def _providers_of(entries: Iterable[ProviderEntry]) -> list[DirectoryProvider]:
    listed = []
    for entry in entries:
        release = newest(entry.releases)
        if release is None or entry.spec.hidden:
            continue
        spec = entry.spec
        url = web_url(spec.repo) if spec.repo is not None else None
        listed.append(
            DirectoryProvider(spec.namespace, spec.type, release.version, "", url, entry, release)
        )
    listed.sort(key=lambda p: p.entry.spec.key)
    return listed


def newest(releases: Sequence[_R]) -> _R | None:
    """The first (newest) release that is not a prerelease; the newest, when all are."""
    for release in releases:
        try:
            if parse_version(release.version).prerelease is None:
                return release
        except ValueError:
            continue
    return releases[0] if releases else None
