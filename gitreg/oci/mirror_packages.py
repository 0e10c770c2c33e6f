"""Providers of the network mirror as OCI indexes, at `mirror/HOSTNAME/NAMESPACE/TYPE`.

They are what its sources hold (hosted providers, `mirror.folders`) and, with read-through, what
origin registries give, each zip verified and kept by read-through before it is named in an
index (its size and digest are those of the bytes served). See docs/opentofu-oci.md."""

from __future__ import annotations

from pathlib import Path

from gitreg.address import ProviderAddress
from gitreg.mirror.packages import MirrorPackage
from gitreg.mirror.sources import MirrorSource, NetworkMirror
from gitreg.oci.manifests import Document
from gitreg.oci.provider_packages import PlatformZip, ReleaseDocuments, documents

MIRROR = "mirror"  # the first component of every mirrored provider's repository


async def versions(mirror: NetworkMirror, address: ProviderAddress) -> list[str] | None:
    def ask(source: MirrorSource) -> list[str] | None:
        return source.versions(address)

    return await mirror.answer(address, ask)


async def zips(
    mirror: NetworkMirror, address: ProviderAddress, version: str, fetch: bool = True
) -> list[PlatformZip] | None:
    """Every platform's zip of `version`; a zip only an origin has is fetched first (with
    `fetch`: else the version is None, for a lookup by digest that must not download)."""

    def ask(source: MirrorSource) -> list[MirrorPackage] | None:
        return source.packages(address, version)

    packages = await mirror.answer(address, ask)
    if not packages:
        return None
    found = []
    for package in packages:
        path = package.path
        if path is None:
            if not fetch:
                return None
            path = await _fetched(mirror, address, package.filename)
            if path is None:
                return None
        sha256 = next((h[3:] for h in package.hashes if h.startswith("zh:")), None)
        if sha256 is None:  # every source gives it; a source that did not is no source
            return None
        found.append(PlatformZip(package.os, package.arch, package.filename, path, sha256))
    return found


async def _fetched(mirror: NetworkMirror, address: ProviderAddress, filename: str) -> Path | None:
    def ask(source: MirrorSource) -> Path | None:
        return source.archive(address, filename)

    return await mirror.answer(address, ask, download=True)


class MirroredDocuments:
    """The indexes, manifests and zips of the mirror's versions a process made, by (repository,
    digest): a lookup by digest answers from here, else from what the sources hold on disk."""

    _MOST = 50_000

    def __init__(self) -> None:
        self._found: dict[tuple[str, str], Document | Path] = {}

    def remember(self, repository: str, made: ReleaseDocuments) -> None:
        if len(self._found) >= self._MOST:
            self._found.clear()
        self._found[(repository, made.index.digest)] = made.index
        for digest, manifest in made.manifests.items():
            self._found[(repository, digest)] = manifest
        for digest, path in made.layers.items():
            self._found[(repository, digest)] = path

    async def by_digest(
        self, mirror: NetworkMirror, repository: str, address: ProviderAddress, digest: str
    ) -> Document | Path | None:
        found = self._found.get((repository, digest))
        if found is not None:
            return found
        for version in await versions(mirror, address) or []:
            held = await zips(mirror, address, version, fetch=False)
            if held is None:
                continue
            made = documents(version, held)
            self.remember(repository, made)
            if (found := made.find(digest)) is not None:
                return found
        return None
