"""The provider dependents index: for each provider hosted here, who uses it.

Consumers' lock files and modules' `required_providers`, each with the version it uses today
and whether that one is deprecated. A `DependentsIndex` keyed by (namespace, type), built whole
as the module one is, so a reader sees it by the same rules: callers it may read named, the
others only counted."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Protocol

from gitreg.dependents import resolution
from gitreg.dependents.index import Dependent, DependentsIndex, Problem, Via
from gitreg.dependents.provider_uses import ProviderUse
from gitreg.docs.source_addresses import provider_address
from gitreg.pacing import breathe
from gitreg.providers.hosted import ProviderEntry


class HostedProviders(Protocol):
    """What the index asks of the hosted providers (providers/hosted.py `Providers`)."""

    def entries(self) -> list[ProviderEntry]: ...


def hosted_versions(providers: HostedProviders) -> tuple[tuple[object, ...], ...]:
    """What the index reads of the hosted providers: each one's versions and deprecations (a
    rescan replaces the entries even when nothing changed, so they are compared by value)."""
    return tuple(
        (e.spec.key, tuple((r.version, e.deprecation(r.version)) for r in e.releases))
        for e in providers.entries()
    )


def build_providers(
    providers: HostedProviders,
    hosts: Iterable[str],
    uses: Iterable[ProviderUse],
    problems: tuple[Problem, ...] = (),
    pending: int = 0,
    constraints: resolution.Constraints | None = None,
) -> DependentsIndex:
    """The index of `uses` of the providers hosted here: those whose source's host is one of
    `hosts` (paced work: a rest offered at each use)."""
    ours = frozenset(h.lower() for h in hosts)
    hosted = {e.spec.key: e for e in providers.entries()}
    constraints = constraints or resolution.Constraints()
    found: dict[tuple[str, ...], list[Dependent]] = {}
    for use in uses:
        breathe()
        address, problem = provider_address(use.name, use.source)
        host, _, rest = address.partition("/")
        namespace, _, provider_type = rest.partition("/")
        entry = hosted.get((namespace, provider_type))
        if problem or host not in ours or entry is None:
            continue
        found.setdefault(entry.spec.key, []).append(_dependent(use, entry, constraints))
    ordered = {
        key: tuple(sorted(deps, key=lambda d: (d.caller.kind, d.caller.name, d.caller.path)))
        for key, deps in found.items()
    }
    return DependentsIndex(ordered, problems, pending=pending, built=time.time())


def _dependent(
    use: ProviderUse, entry: ProviderEntry, constraints: resolution.Constraints
) -> Dependent:
    versions = [r.version for r in entry.releases]
    via: Via
    if use.locked:
        version = use.locked.removeprefix("v")
        why = "" if version in versions else f"version {version} is not published here (any more)"
        version, via = version if not why else "", ".terraform.lock.hcl"
    else:
        version, why = constraints.newest(versions, use.constraint)
        via = "constraint"
    return Dependent(
        caller=use.caller,
        block=use.name,
        source=use.source,
        constraint=use.constraint,
        via=via,
        resolved=version,
        unresolved=why,
        deprecated=(entry.deprecation(version) or "") if version else "",
    )
