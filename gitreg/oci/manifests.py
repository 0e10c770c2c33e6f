"""OCI documents as OpenTofu reads them, each serialised one way only.

They are a module version's image manifest, a provider platform's, and a provider version's
index: one way only, since a document's digest is the sha256 of its bytes. See
docs/opentofu-oci.md."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

IMAGE_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
IMAGE_INDEX = "application/vnd.oci.image.index.v1+json"
MODULE_PACKAGE = "application/vnd.opentofu.modulepkg"
PROVIDER = "application/vnd.opentofu.provider"
PROVIDER_TARGET = "application/vnd.opentofu.provider-target"
ZIP = "archive/zip"
EMPTY = "application/vnd.oci.empty.v1+json"
EMPTY_BLOB = b"{}"
TITLE = "org.opencontainers.image.title"
VERSION = "org.opencontainers.image.version"


def digest_of(data: bytes) -> str:
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


EMPTY_DIGEST = digest_of(EMPTY_BLOB)


@dataclass(frozen=True)
class Blob:
    """A layer's content as a descriptor names it: digest and size."""

    digest: str
    size: int


@dataclass(frozen=True)
class Document:
    """A manifest or an index: its exact bytes, their digest, and its media type."""

    body: bytes
    media_type: str
    digest: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "digest", digest_of(self.body))


def image_manifest(artifact_type: str, layer: Blob, title: str, version: str) -> Document:
    """One `archive/zip` layer, the empty config, as `oras push --artifact-type` writes them."""
    return _document(
        {
            "schemaVersion": 2,
            "mediaType": IMAGE_MANIFEST,
            "artifactType": artifact_type,
            "config": {"mediaType": EMPTY, "digest": EMPTY_DIGEST, "size": 2, "data": "e30="},
            "layers": [
                {
                    "mediaType": ZIP,
                    "digest": layer.digest,
                    "size": layer.size,
                    "annotations": {TITLE: title},
                }
            ],
            "annotations": {VERSION: version},
        },
        IMAGE_MANIFEST,
    )


def provider_index(version: str, platforms: list[tuple[str, str, Document]]) -> Document:
    """One provider-target manifest per (os, architecture)."""
    manifests = [
        {
            "mediaType": IMAGE_MANIFEST,
            "artifactType": PROVIDER_TARGET,
            "digest": manifest.digest,
            "size": len(manifest.body),
            "platform": {"os": os, "architecture": arch},
        }
        for os, arch, manifest in platforms
    ]
    return _document(
        {
            "schemaVersion": 2,
            "mediaType": IMAGE_INDEX,
            "artifactType": PROVIDER,
            "manifests": manifests,
            "annotations": {VERSION: version},
        },
        IMAGE_INDEX,
    )


def _document(value: object, media_type: str) -> Document:
    body = json.dumps(value, separators=(",", ":"), ensure_ascii=True).encode()
    return Document(body, media_type)
