"""The immutable version index that request handlers read; a refresh replaces it whole."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from gitreg.catalog.model import ModuleSpec
from gitreg.modules.downloads import download_location
from gitreg.modules.resolve import ModuleVersions, Release
from gitreg.modules.tag_policy import TagChange


@dataclass(frozen=True, slots=True)
class ModuleEntry:
    spec: ModuleSpec
    clone_path: Path
    versions: ModuleVersions
    changes: tuple[TagChange, ...] = ()  # published tags that moved or were deleted
    by_version: Mapping[str, Release] = field(init=False)

    def __post_init__(self) -> None:
        # Worked out once per refresh, in the background, so a request only looks it up. The
        # download location and the set of commits are not kept: with 10,000 modules they cost
        # more memory than the releases themselves, and a request works them out in microseconds.
        releases = self.versions.releases
        object.__setattr__(self, "by_version", MappingProxyType({r.version: r for r in releases}))

    def location(self, release: Release) -> str:
        """Where clients download `release` from."""
        return download_location(self.spec, release)

    def serves_commit(self, commit: str) -> bool:
        return any(r.commit == commit for r in self.versions.releases)


class VersionIndex:
    """Module address key → entry. Never mutated after construction."""

    def __init__(self, entries: Mapping[tuple[str, str, str], ModuleEntry]) -> None:
        self._entries = MappingProxyType(dict(entries))

    def get(self, namespace: str, name: str, system: str) -> ModuleEntry | None:
        return self._entries.get((namespace.lower(), name.lower(), system.lower()))

    def entries(self) -> list[ModuleEntry]:
        return list(self._entries.values())

    def items(self) -> list[tuple[tuple[str, str, str], ModuleEntry]]:
        return list(self._entries.items())

    def __len__(self) -> int:
        return len(self._entries)
