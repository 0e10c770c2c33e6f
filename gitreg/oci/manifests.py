"""OCI documents as OpenTofu reads them, each serialised one way only.

They are a module version's image manifest, a provider platform's, a provider version's index,
and what refers to a module version (a referrer manifest per attached document, and the index
listing them): one way only, since a document's digest is the sha256 of its bytes. See
docs/opentofu-oci.md."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
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
CREATED = "org.opencontainers.image.created"


def digest_of(data: bytes) -> str:
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


EMPTY_DIGEST = digest_of(EMPTY_BLOB)
_EMPTY_CONFIG = {"mediaType": EMPTY, "digest": EMPTY_DIGEST, "size": 2, "data": "e30="}


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
            "config": _EMPTY_CONFIG,
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


def referrer_manifest(
    artifact_type: str, media_type: str, layer: Blob, title: str, subject: Document, created: str
) -> Document:
    """A document attached to `subject` as `oras attach` writes one: the empty config, the
    document its one layer, `created` (RFC 3339; "" leaves it out) what `oras discover` shows."""
    value: dict[str, object] = {
        "schemaVersion": 2,
        "mediaType": IMAGE_MANIFEST,
        "artifactType": artifact_type,
        "config": _EMPTY_CONFIG,
        "layers": [
            {
                "mediaType": media_type,
                "digest": layer.digest,
                "size": layer.size,
                "annotations": {TITLE: title},
            }
        ],
        "subject": {
            "mediaType": subject.media_type,
            "digest": subject.digest,
            "size": len(subject.body),
        },
    }
    if created:
        value["annotations"] = {CREATED: created}
    return _document(value, IMAGE_MANIFEST)


def referrers_index(referrers: Sequence[Document], artifact_type: str = "") -> Document:
    """The referrers API's answer: one descriptor per referrer manifest (of `artifact_type`
    alone, when given), its artifact type and annotations copied from it, as the spec asks."""
    manifests = []
    for referrer in referrers:
        value = json.loads(referrer.body)
        if artifact_type and value["artifactType"] != artifact_type:
            continue
        descriptor = {
            "mediaType": referrer.media_type,
            "digest": referrer.digest,
            "size": len(referrer.body),
            "artifactType": value["artifactType"],
        }
        if "annotations" in value:
            descriptor["annotations"] = value["annotations"]
        manifests.append(descriptor)
    return _document(
        {"schemaVersion": 2, "mediaType": IMAGE_INDEX, "manifests": manifests}, IMAGE_INDEX
    )


def _document(value: object, media_type: str) -> Document:
    body = json.dumps(value, separators=(",", ":"), ensure_ascii=True).encode()
    return Document(body, media_type)
