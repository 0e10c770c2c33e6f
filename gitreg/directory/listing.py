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

# The description of a module version (the README's first paragraph, once its docs are built).
Describe = Callable[[ModuleEntry, Release], str]
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
        return next((m for m in self.modules if m.entry.spec.address.key == key), None)


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

    modules = tuple(
        dataclasses.replace(m, description=describe(m.entry, m.release))
        for m in _modules_of(snapshot.index)
        if readable(m.namespace, m.entry.spec)
    )
    listed = tuple(
        p for p in _providers_of(providers.entries()) if readable(p.namespace, p.entry.spec)
    )
    return Listing(modules, listed)


class _Built:
    """The modules of the index served last, listed: rebuilt only when a sync swaps it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.index: VersionIndex | None = None
        self.modules: tuple[ListedModule, ...] = ()


_built = _Built()


def _modules_of(index: VersionIndex) -> tuple[ListedModule, ...]:
    with _built.lock:
        if _built.index is index:
            return _built.modules
    modules = _list_modules(index.entries())
    with _built.lock:
        _built.index, _built.modules = index, modules
    return modules


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
            )
        )
    listed.sort(key=lambda m: m.entry.spec.address.key)
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
