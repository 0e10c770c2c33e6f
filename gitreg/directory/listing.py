"""Every module and hosted provider a requester may read, with its newest version and a
description, grouped by namespace. The costly part (newest versions, web URLs, order) is worked
out once per module snapshot; a request only filters it and looks its descriptions up."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from gitreg.catalog.model import ModuleSpec, ProviderSpec
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
class ListedModule:
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
class ListedProvider:
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
    modules: tuple[ListedModule, ...]
    providers: tuple[ListedProvider, ...]


@dataclass(frozen=True)
class Listing:
    """Modules and providers, each sorted by namespace, then name (case-insensitively)."""

    modules: tuple[ListedModule, ...]
    providers: tuple[ListedProvider, ...]

    def namespaces(self) -> list[NamespaceGroup]:
        modules: dict[str, list[ListedModule]] = {}
        providers: dict[str, list[ListedProvider]] = {}
        spelled: dict[str, str] = {}
        for module in self.modules:
            key = module.namespace.lower()
            spelled.setdefault(key, module.namespace)
            modules.setdefault(key, []).append(module)
        for provider in self.providers:
            key = provider.namespace.lower()
            spelled.setdefault(key, provider.namespace)
            providers.setdefault(key, []).append(provider)
        return [
            NamespaceGroup(spelled[key], tuple(modules.get(key, ())), tuple(providers.get(key, ())))
            for key in sorted(spelled)
        ]

    def module(self, namespace: str, name: str, system: str) -> ListedModule | None:
        key = (namespace.lower(), name.lower(), system.lower())
        return next((m for m in self.modules if m.key == key), None)


def readable_listing(
    snapshot: RegistrySnapshot,
    providers: Providers,
    may_read: Callable[[str], bool],
    describe: Describe,
    opened: Opened | None = None,
) -> Listing:
    """What a reader may read: the modules and hosted providers in a namespace `may_read`
    (asked once per namespace), or that `opened` opens. Modules and providers that serve no
    version yet are left out: there is nothing to fetch."""
    answers: dict[str, bool] = {}

    def readable(namespace: str, spec: ModuleSpec | ProviderSpec) -> bool:
        key = namespace.lower()
        allowed = answers.get(key)
        if allowed is None:
            allowed = answers[key] = may_read(namespace)
        return allowed or (opened is not None and opened(spec))

    built = _built.of(snapshot.index, describe)
    modules = tuple(
        built.described(i, describe)
        for i, m in enumerate(built.modules)
        if readable(m.namespace, m.entry.spec)
    )
    listed = tuple(
        p for p in _providers_of(providers.entries()) if readable(p.namespace, p.entry.spec)
    )
    return Listing(modules, listed)


class _Built:
    """The modules of one index, listed, and those already described: a module version's
    description never changes once its docs are built (they are per commit), so it is asked
    for until there is one, then kept. Replaced when a sync swaps the index."""

    def __init__(self, index: VersionIndex | None, describe: Describe | None) -> None:
        self.index, self.describe = index, describe
        self.modules = _list_modules(index.entries()) if index is not None else ()
        self._described: dict[int, ListedModule] = {}

    def described(self, position: int, describe: Describe) -> ListedModule:
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


class _Last:
    """The listing built last; a request that lists under the same index reuses it."""

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
            fresh.index, fresh.modules = index, built.modules
        else:
            fresh = _Built(index, describe)
        with self._lock:
            self._built = fresh
        return fresh


_built = _Last()


def _list_modules(entries: Iterable[ModuleEntry]) -> tuple[ListedModule, ...]:
    listed = []
    urls: dict[object, str | None] = {}
    for entry in entries:
        release = newest(entry.versions.releases)
        if release is None:
            continue
        spec = entry.spec
        if spec.repo not in urls:
            urls[spec.repo] = web_url(spec.repo)
        address = spec.address
        listed.append(
            ListedModule(
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


def _providers_of(entries: Iterable[ProviderEntry]) -> list[ListedProvider]:
    listed = []
    for entry in entries:
        release = newest(entry.releases)
        if release is None:
            continue
        spec = entry.spec
        url = web_url(spec.repo) if spec.repo is not None else None
        listed.append(
            ListedProvider(spec.namespace, spec.type, release.version, "", url, entry, release)
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
