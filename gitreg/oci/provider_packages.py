"""Provider versions as OCI indexes, made from the zips a version has: nothing is built.

One provider-target manifest per platform, whose one `archive/zip` layer is the release zip
itself, byte for byte, so that OpenTofu's `zh:` hash is the SHA256SUMS line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitreg.oci.manifests import PROVIDER_TARGET, Blob, Document, image_manifest, provider_index
from gitreg.providers.artifacts import ProviderRelease
from gitreg.providers.hosted import ProviderEntry


@dataclass(frozen=True)
class PlatformZip:
    """One platform's release zip, on disk, with its sha256 (hex)."""

    os: str
    arch: str
    filename: str
    path: Path
    sha256: str


@dataclass(frozen=True)
class ReleaseDocuments:
    """A provider version's index, and its manifests and zips by digest."""

    index: Document
    manifests: dict[str, Document]
    layers: dict[str, Path]

    def find(self, digest: str) -> Document | Path | None:
        if self.index.digest == digest:
            return self.index
        return self.manifests.get(digest) or self.layers.get(digest)


def documents(version: str, zips: list[PlatformZip]) -> ReleaseDocuments:
    """The index of `version` over its platforms' zips (a zip gone from disk: OSError)."""
    platforms = []
    manifests: dict[str, Document] = {}
    layers: dict[str, Path] = {}
    for package in zips:
        blob = Blob(f"sha256:{package.sha256}", package.path.stat().st_size)
        manifest = image_manifest(PROVIDER_TARGET, blob, package.filename, version)
        platforms.append((package.os, package.arch, manifest))
        manifests[manifest.digest] = manifest
        layers[blob.digest] = package.path
    return ReleaseDocuments(provider_index(version, platforms), manifests, layers)


def hosted_zips(release: ProviderRelease) -> list[PlatformZip]:
    return [PlatformZip(p.os, p.arch, p.filename, p.path, p.shasum) for p in release.packages]


def release_tagged(entry: ProviderEntry, tag: str) -> ProviderRelease | None:
    """The release a tag names (`_` reads back as `+`, as OpenTofu writes it)."""
    return entry.release(tag.replace("_", "+"))


def by_digest(entry: ProviderEntry, digest: str) -> Document | Path | None:
    """An index, a manifest or a zip of one of a hosted provider's versions, by its digest."""
    for release in entry.releases:
        found = documents(release.version, hosted_zips(release)).find(digest)
        if found is not None:
            return found
    return None
