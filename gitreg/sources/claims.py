"""Who serves an address: registry.yaml's `modules:` and `providers:` and what the sources'
surveys found, settled.

An explicit entry wins over a found module or provider of its address, which is then set
aside (and `gitreg list` says so). Two claims on one address by surveys, from two sources or
two repositories of one, are a conflict: neither is served until it is resolved, never a silent
pick, and `gitreg check` and the status say so."""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from gitreg.catalog.specs import ModuleSpec, ProviderSpec
from gitreg.sources.survey import FoundModule, FoundProvider, Survey


@dataclass(frozen=True)
class Conflict:
    address: str  # `local/vpc/aws`, `acme/widget`
    claims: tuple[str, ...]  # `sources[0] terraform-aws-vpc`, one a claim
    kind: str = "module"  # or "provider"

    def __str__(self) -> str:
        return (
            f"{self.kind} {self.address} is claimed by {' and by '.join(self.claims)}: neither"
            " is served until one of them stops claiming it"
        )


@dataclass(frozen=True)
class Settlement:
    """The found modules and providers to serve beside registry.yaml's, and what was not
    served."""

    served: tuple[FoundModule, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    shadowed: tuple[FoundModule, ...] = ()  # an explicit entry names their address
    providers: tuple[FoundProvider, ...] = ()
    shadowed_providers: tuple[FoundProvider, ...] = ()

    @property
    def specs(self) -> tuple[ModuleSpec, ...]:
        """What serves: a removed module's spec marked so, and hidden under on_removed: hide
        (its versions resolve all the same)."""
        return tuple(
            replace(m.spec, removed=True, hidden=m.hidden) if m.removed else m.spec
            for m in self.served
        )

    @property
    def provider_specs(self) -> tuple[ProviderSpec, ...]:
        """The providers that serve, a removed one's marked (its forge no longer read)."""
        return tuple(
            replace(p.spec, removed=True, hidden=p.hidden) if p.removed else p.spec
            for p in self.providers
        )

    def problems(self) -> list[str]:
        return [str(c) for c in self.conflicts]


_D = TypeVar("_D", FoundModule, FoundProvider)


def settle(
    explicit: Sequence[ModuleSpec],
    surveys: Sequence[Survey],
    explicit_providers: Sequence[ProviderSpec] = (),
) -> Settlement:
    modules = [m for d in surveys for m in d.modules]
    named = {spec.address.key for spec in explicit}
    served, conflicts, shadowed = _settled(modules, named, lambda m: m.spec.address.key, "module")
    providers = [p for d in surveys for p in d.providers]
    hosted = {spec.key for spec in explicit_providers}
    served_providers, provider_conflicts, shadowed_providers = _settled(
        providers, hosted, lambda p: p.spec.key, "provider"
    )
    return Settlement(
        tuple(served),
        tuple(conflicts + provider_conflicts),
        tuple(shadowed),
        tuple(served_providers),
        tuple(shadowed_providers),
    )


def _settled(
    candidates: Sequence[_D], named: Container[object], key: Callable[[_D], object], kind: str
) -> tuple[list[_D], list[Conflict], list[_D]]:
    """What serves of `candidates`, the conflicts, and what `named` (explicit entries) sets
    aside."""
    claims: dict[object, list[_D]] = {}
    shadowed = []
    for found in candidates:
        if key(found) in named:
            shadowed.append(found)
        else:
            claims.setdefault(key(found), []).append(found)
    served, conflicts = [], []
    for claimants in claims.values():
        if len(claimants) == 1:
            served.append(claimants[0])
            continue
        address = claimants[0].spec
        conflicts.append(
            Conflict(
                str(address.address if isinstance(address, ModuleSpec) else address),
                tuple(f"{m.source} {m.repository}" for m in claimants),
                kind,
            )
        )
    return served, conflicts, shadowed
