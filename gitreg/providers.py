"""Hosted providers: their releases, read from artifact folders (and gated by tags when a
provider names a repository), in an immutable index swapped whole on each rescan."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from watchfiles import awatch

from gitreg.catalog import Catalog, ProviderSpec
from gitreg.provider_artifacts import ArtifactFolder, ProviderRelease, ReleaseProblem
from gitreg.registry import Registry
from gitreg.signing import Keyring, PublicKey
from gitreg.tags import parse_version

log = logging.getLogger(__name__)

_RESCAN_MS = 2000  # also rescan this often: tags of gating repositories change without file events


@dataclass(frozen=True)
class ProviderEntry:
    spec: ProviderSpec
    releases: tuple[ProviderRelease, ...]  # newest first
    problems: tuple[ReleaseProblem, ...]

    def release(self, version: str) -> ProviderRelease | None:
        return next((r for r in self.releases if r.version == version), None)


class Providers:
    def __init__(self, catalog: Catalog, registry: Registry) -> None:
        self.registry = registry
        self.keyring = Keyring.load(catalog.signing_keys, catalog.verify_keys)
        signatures = catalog.cache_dir / "signatures"
        self.folders = {
            spec.key: (spec, ArtifactFolder(spec.artifacts, spec.type, self.keyring, signatures))
            for spec in catalog.providers
        }
        self._index: Mapping[tuple[str, str], ProviderEntry] = MappingProxyType({})
        self._lock = threading.Lock()

    def get(self, namespace: str, provider_type: str) -> ProviderEntry | None:
        return self._index.get((namespace.lower(), provider_type.lower()))

    def entries(self) -> list[ProviderEntry]:
        return list(self._index.values())

    def public_keys(self) -> list[PublicKey]:
        return self.keyring.public_keys()

    def refresh(self) -> None:
        """Rescan every artifact folder (zip hashes are kept while files do not change)."""
        with self._lock:
            index = {}
            for key, (spec, folder) in self.folders.items():
                releases, problems = folder.scan()
                releases, problems = self._gate(spec, releases, problems)
                old = self._index.get(key)
                if old is None or old.problems != tuple(problems):
                    for problem in problems:
                        log.warning("provider %s %s", spec, problem)
                if old is None or [r.version for r in old.releases] != [
                    r.version for r in releases
                ]:
                    log.info(
                        "provider %s: versions %s",
                        spec,
                        ", ".join(r.version for r in releases) or "none",
                    )
                index[key] = ProviderEntry(spec, tuple(releases), tuple(problems))
            self._index = MappingProxyType(index)

    def _gate(
        self, spec: ProviderSpec, releases: list[ProviderRelease], problems: list[ReleaseProblem]
    ) -> tuple[list[ProviderRelease], list[ReleaseProblem]]:
        """With a repository, a version is published only while a matching tag exists."""
        if spec.repo is None:
            return releases, problems
        tagged = set()
        for tag in self.registry.repo_tags.get(spec.repo, ()):
            for template in spec.tags:
                text = template.version_text(tag.name)
                if text is not None and tag.commit is not None:
                    try:
                        tagged.add(str(parse_version(text)))
                    except ValueError:
                        continue
        return [r for r in releases if r.version in tagged], problems

    async def watch(self) -> None:
        """Rescan when a release lands in a folder, and every couple of seconds; until cancelled."""
        folders = [folder.folder for _, folder in self.folders.values() if folder.folder.is_dir()]
        if not folders:
            return
        async for _ in awatch(*folders, rust_timeout=_RESCAN_MS, yield_on_timeout=True, step=200):
            await asyncio.to_thread(self.refresh)
