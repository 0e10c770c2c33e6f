"""Hosted provider versions as OCI indexes: one provider-target manifest per platform, whose one
`archive/zip` layer is the release zip itself, byte for byte (so that OpenTofu's `zh:` hash is
the SHA256SUMS line); nothing is built, every document is made from what the release lists."""

from __future__ import annotations

from dataclasses import dataclass

from gitreg.oci.manifests import PROVIDER_TARGET, Blob, Document, image_manifest, provider_index
from gitreg.providers.artifacts import ProviderPackage, ProviderRelease
from gitreg.providers.hosted import ProviderEntry


@dataclass(frozen=True)
class ReleaseDocuments:
    """A provider version's index, and its manifests by digest with their packages."""

    index: Document
    manifests: dict[str, Document]
    layers: dict[str, ProviderPackage]


def documents(release: ProviderRelease) -> ReleaseDocuments:
    platforms = []
    manifests: dict[str, Document] = {}
    layers: dict[str, ProviderPackage] = {}
    for package in release.packages:
        blob = Blob(f"sha256:{package.shasum}", package.path.stat().st_size)
        manifest = image_manifest(PROVIDER_TARGET, blob, package.filename, release.version)
        platforms.append((package.os, package.arch, manifest))
        manifests[manifest.digest] = manifest
        layers[blob.digest] = package
    return ReleaseDocuments(provider_index(release.version, platforms), manifests, layers)


def release_tagged(entry: ProviderEntry, tag: str) -> ProviderRelease | None:
    """The release a tag names (`_` reads back as `+`, as OpenTofu writes it)."""
    return entry.release(tag.replace("_", "+"))


def by_digest(entry: ProviderEntry, digest: str) -> Document | ProviderPackage | None:
    """An index, a manifest or a zip of one of the provider's versions, by its digest."""
    for release in entry.releases:
        found = documents(release)
        if found.index.digest == digest:
            return found.index
        if digest in found.manifests:
            return found.manifests[digest]
        if digest in found.layers:
            return found.layers[digest]
    return None
