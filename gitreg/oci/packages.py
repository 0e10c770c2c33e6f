"""Module versions as OCI packages: each version's zip and the image manifest that names it.

The zip is the module's folder at its commit, built once by the zip cache. Both are looked up by
tag or by digest, within one repository only, so that a digest never opens another namespace's
content. Beside them, what the network mirror's versions made (`mirror_packages.py`)."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from gitreg.modules.archive_cache import ArchiveCache, ArchiveKey
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.oci.manifests import MODULE_PACKAGE, Blob, Document, image_manifest
from gitreg.oci.mirror_packages import MirroredDocuments
from gitreg.oci.names import version_tag
from gitreg.state.ledger import TagLedger
from gitreg.tags import parse_version

_READ = 1 << 20
LATEST = "latest"
_K = TypeVar("_K")
_V = TypeVar("_V")
_REMEMBERED = 50_000  # manifests and layers kept in memory; past it, forgotten and recomputed


@dataclass(frozen=True)
class Layer:
    """A zip layer, as its descriptor names it, and what it is built from."""

    clone_path: Path
    key: ArchiveKey
    blob: Blob
    ledger: TagLedger | None = None  # where the zip's digest is recorded, and compared


class ModulePackages:
    """Manifests made from the zip cache's files; what a process worked out is remembered by
    (repository, digest), as the file's digest by its path (the same path, the same bytes)."""

    def __init__(self, zips: ArchiveCache) -> None:
        self.zips = zips
        self._digests: dict[Path, Blob] = {}
        self._manifests: dict[tuple[str, str], Document] = {}
        self._layers: dict[tuple[str, str], Layer] = {}
        self._made: dict[tuple[str, Release, str, str], Document] = {}
        self.mirrored = MirroredDocuments()  # the network mirror's, made as they are asked

    async def manifest(
        self,
        repository: str,
        entry: ModuleEntry,
        release: Release,
        ledger: TagLedger | None = None,
    ) -> Document:
        """The manifest of `release`, its zip built first when it is not on disk yet (its digest
        recorded in `ledger`, or compared with the record: the same zip on every replica)."""
        made_of = _made_of(repository, entry, release)
        made = self._made.get(made_of)
        if made is not None:
            return made
        key = ArchiveKey(release.commit, entry.spec.path)
        path = await self.zips.get(entry.clone_path, key, ledger)
        blob = self._digests.get(path)
        if blob is None:
            blob = await asyncio.to_thread(_blob_of, path)
            self._remember(self._digests, path, blob)
        address = entry.spec.address
        title = f"{address.namespace}-{address.name}-{address.system}-{release.version}.zip"
        document = image_manifest(MODULE_PACKAGE, blob, title, release.version)
        self._remember(self._manifests, (repository, document.digest), document)
        layer = Layer(entry.clone_path, key, blob, ledger)
        self._remember(self._layers, (repository, blob.digest), layer)
        # A version's manifest again, as a HEAD by tag asks it: from memory, with no file read.
        self._remember(self._made, made_of, document)
        return document

    def made(self, repository: str, entry: ModuleEntry, release: Release) -> Document | None:
        """The manifest of `release` if this process has made it, with no zip built."""
        return self._made.get(_made_of(repository, entry, release))

    async def layer_file(self, layer: Layer) -> Path:
        """The zip's path, built again if the cache lost it since (its bytes are the same)."""
        return await self.zips.get(layer.clone_path, layer.key, layer.ledger)

    async def by_digest(
        self, repository: str, entry: ModuleEntry, digest: str, ledger: TagLedger | None = None
    ) -> Document | Layer | None:
        """The manifest or the layer of one of the module's versions whose digest is `digest`:
        remembered, else each version worked out, newest first (a replica that did not answer
        the tag; the zips, once built, are files to hash). A digest no version has costs each
        zip's build once, no more than a client asking modules.v1 for every archive."""
        found = self._find(repository, digest)
        if found is not None:
            return found
        for release in entry.versions.releases:
            await self.manifest(repository, entry, release, ledger)
            found = self._find(repository, digest)
            if found is not None:
                return found
        return None

    def _find(self, repository: str, digest: str) -> Document | Layer | None:
        return self._manifests.get((repository, digest)) or self._layers.get((repository, digest))

    @staticmethod
    def _remember(table: dict[_K, _V], key: _K, value: _V) -> None:
        if len(table) >= _REMEMBERED:
            table.clear()
        table[key] = value


def _made_of(
    repository: str, entry: ModuleEntry, release: Release
) -> tuple[str, Release, str, str]:
    """What a version's manifest is made of: another folder or address after a reload, another
    manifest."""
    return (repository, release, entry.spec.path, str(entry.spec.address))


def tags_of(entry: ModuleEntry) -> list[str]:
    """Every version written as a tag, newest first, then `latest` when there is a version that
    is no prerelease."""
    tags = [version_tag(r.version) for r in entry.versions.releases]
    return [*tags, LATEST] if _latest(entry) is not None else tags


def release_tagged(entry: ModuleEntry, tag: str) -> Release | None:
    """The release a tag names: `_` is no character of a version, so it reads back as `+`;
    `latest`, the newest version that is no prerelease (what `oci://HOST/REPO` asks for)."""
    if tag == LATEST:
        return _latest(entry)
    return entry.by_version.get(tag.replace("_", "+"))


def _latest(entry: ModuleEntry) -> Release | None:
    for release in entry.versions.releases:
        if not parse_version(release.version).prerelease:
            return release
    return None


def _blob_of(path: Path) -> Blob:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as file:
        while chunk := file.read(_READ):
            digest.update(chunk)
            size += len(chunk)
    return Blob(f"sha256:{digest.hexdigest()}", size)
