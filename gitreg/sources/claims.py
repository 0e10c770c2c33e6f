"""Who serves an address: registry.yaml's `modules:` and what the sources discovered, settled.

An explicit entry wins over a discovered module of its address, which is then set aside (and
`gitreg list` says so). Two claims on one address by discovery, from two sources or two
repositories of one, are a conflict: neither is served until it is resolved, never a silent
pick, and `gitreg check` and the status say so."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gitreg.address import ModuleAddress
from gitreg.catalog.model import ModuleSpec
from gitreg.sources.discovery import DiscoveredModule, Discovery


@dataclass(frozen=True)
class Conflict:
    address: ModuleAddress
    claims: tuple[str, ...]  # `sources[0] terraform-aws-vpc`, one a claim

    def __str__(self) -> str:
        return (
            f"module {self.address} is claimed by {' and by '.join(self.claims)}: neither is"
            " served until one of them stops claiming it"
        )


@dataclass(frozen=True)
class Settlement:
    """The discovered modules to serve beside registry.yaml's, and what was not served."""

    served: tuple[DiscoveredModule, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    shadowed: tuple[DiscoveredModule, ...] = ()  # an explicit entry names their address

    @property
    def specs(self) -> tuple[ModuleSpec, ...]:
        """What serves: a removed module's spec marked, a hidden one's unlisted too (its
        versions resolve all the same)."""
        return tuple(
            replace(m.spec, removed=True, listed=not m.hidden) if m.removed else m.spec
            for m in self.served
        )

    def problems(self) -> list[str]:
        return [str(c) for c in self.conflicts]


def settle(explicit: Sequence[ModuleSpec], discoveries: Sequence[Discovery]) -> Settlement:
    named = {spec.address.key for spec in explicit}
    claims: dict[tuple[str, str, str], list[DiscoveredModule]] = {}
    shadowed = []
    for discovery in discoveries:
        for module in discovery.modules:
            if module.spec.address.key in named:
                shadowed.append(module)
            else:
                claims.setdefault(module.spec.address.key, []).append(module)
    served, conflicts = [], []
    for claimants in claims.values():
        if len(claimants) == 1:
            served.append(claimants[0])
            continue
        conflicts.append(
            Conflict(
                claimants[0].spec.address,
                tuple(f"{m.source} {m.repository}" for m in claimants),
            )
        )
    return Settlement(tuple(served), tuple(conflicts), tuple(shadowed))
