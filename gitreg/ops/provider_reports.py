"""Hosted providers and the mirror's origins, for people: `/v1/status` serves it as JSON."""

from __future__ import annotations

from dataclasses import dataclass

from gitreg.catalog.specs import ProviderSpec
from gitreg.mirror.origin import HostHealth, OriginRegistry
from gitreg.providers.hosted import Providers


@dataclass(frozen=True)
class ReleaseReadsReport:
    """A provider's release list on its forge, and what this process's reads of it counted."""

    forge: str  # its kind, address and project: never its token
    read: bool  # whether a read ended since the start (before it, cache_dir serves)
    reads: int
    api_calls: int  # release lists' pages and release files' downloads, answered or not
    rate_limit_waits: int
    errors: int
    fetched: int  # releases fetched whole into cache_dir
    refused: int  # of those, refused by the check (a checksum, a signature, a file missing)


@dataclass(frozen=True)
class ProviderReport:
    provider: str
    versions: list[str]  # served, newest first
    refused: list[str]  # "VERSION: reason", for each release that is not served
    # Discovered, and its repository left its source: what was fetched still serves.
    removed: bool = False
    releases: ReleaseReadsReport | None = None  # with `releases:`, its forge's


def provider_reports(providers: Providers) -> list[ProviderReport]:
    return [
        ProviderReport(
            str(entry.spec),
            [r.version for r in entry.releases],
            [str(problem) for problem in entry.problems],
            entry.spec.removed,
            _reads(providers, entry.spec),
        )
        for entry in sorted(providers.entries(), key=lambda e: str(e.spec))
    ]


def _reads(providers: Providers, spec: ProviderSpec) -> ReleaseReadsReport | None:
    fetcher = providers.fetchers.get(spec.key)
    if fetcher is None or spec.releases is None:
        return None
    forge, counted = spec.releases, fetcher.stats
    return ReleaseReadsReport(
        f"{forge.kind} {forge.url} {forge.project}",
        fetcher.read,
        counted.reads,
        counted.api_calls,
        counted.rate_limit_waits,
        counted.errors,
        counted.fetched,
        counted.refused,
    )


def origin_reports(origin: OriginRegistry | None) -> list[HostHealth]:
    """Each host read-through asked so far; none without read-through."""
    return origin.health() if origin is not None else []
