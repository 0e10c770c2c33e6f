"""Hosted providers and the mirror's origins, for people: `/v1/status` serves it as JSON."""

from __future__ import annotations

from dataclasses import dataclass

from gitreg.mirror.origin import HostHealth, OriginRegistry
from gitreg.providers.hosted import Providers


@dataclass(frozen=True)
class ProviderReport:
    provider: str
    versions: list[str]  # served, newest first
    refused: list[str]  # "VERSION: reason", for each release that is not served
    # Discovered, and its repository left its source: what was fetched still serves.
    removed: bool = False


def provider_reports(providers: Providers) -> list[ProviderReport]:
    return [
        ProviderReport(
            str(entry.spec),
            [r.version for r in entry.releases],
            [str(problem) for problem in entry.problems],
            entry.spec.removed,
        )
        for entry in sorted(providers.entries(), key=lambda e: str(e.spec))
    ]


def origin_reports(origin: OriginRegistry | None) -> list[HostHealth]:
    """Each host read-through asked so far; none without read-through."""
    return origin.health() if origin is not None else []
