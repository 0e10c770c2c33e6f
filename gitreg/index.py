"""The immutable version index that request handlers read; a refresh replaces it whole."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from gitreg.catalog import ModuleSpec
from gitreg.locations import download_location
from gitreg.tag_policy import TagChange
from gitreg.versions import ModuleVersions, Release


@dataclass(frozen=True)
class ModuleEntry:
    spec: ModuleSpec
    mirror_path: Path
    versions: ModuleVersions
    changes: tuple[TagChange, ...] = ()  # published tags that moved or were deleted
    by_version: Mapping[str, Release] = field(init=False)
    commits: frozenset[str] = field(init=False)
    locations: Mapping[str, str] = field(init=False)  # version → where clients download it

    def __post_init__(self) -> None:
        # Worked out once per refresh, in the background, so a request only looks them up.
        releases = self.versions.releases
        object.__setattr__(self, "by_version", MappingProxyType({r.version: r for r in releases}))
        object.__setattr__(self, "commits", frozenset(r.commit for r in releases))
        locations = {r.version: download_location(self.spec, r) for r in releases}
        object.__setattr__(self, "locations", MappingProxyType(locations))


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
