"""A client that makes oras-go's checks for `oras discover` and `oras pull` step by step, from
oras-go's registry/remote/repository.go and referrers.go and oras' cmd/oras/root/discover.go
(the oras CLI itself cannot be installed here), so that a test fails where oras would refuse or
fall back to the referrers tag schema."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import httpx

INDEX = "application/vnd.oci.image.index.v1+json"
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
ACCEPT = f"{MANIFEST}, {INDEX}"


class Unsupported(Exception):
    """oras-go's errdef.ErrUnsupported: it would fall back to `sha256-<hex>` tags."""


class Failed(Exception):
    """What oras would exit non-zero with."""


@dataclass
class Discovered:
    """One referrer `oras discover` found, and the digest it refers to."""

    subject: str
    descriptor: dict[str, Any]


@dataclass
class Oras:
    """One registry host as oras meets it; the requests it sent, as (method, path, status)."""

    client: httpx.Client
    headers: dict[str, str] = field(default_factory=dict)
    requests: list[tuple[str, str, int]] = field(default_factory=list)

    def resolve(self, repository: str, reference: str) -> str:
        """The digest a tag names: a HEAD whose Docker-Content-Digest is required by tag."""
        answer = self._send("HEAD", f"/v2/{repository}/manifests/{reference}", ACCEPT)
        if answer.status_code != 200:
            raise Failed(f"{repository}:{reference}: {answer.status_code}")
        digest = answer.headers.get("docker-content-digest", "")
        if not digest and not reference.startswith("sha256:"):
            raise Failed("HEAD request missing required header Docker-Content-Digest")
        return digest or reference

    def referrers(self, repository: str, digest: str, artifact_type: str = "") -> list[Any]:
        """One call of `referrersPageByAPI`: 200 with exactly the index type, else unsupported
        (a 404 but NAME_UNKNOWN); filtered on the client unless the server says it did."""
        params = {"artifactType": artifact_type} if artifact_type else None
        path = f"/v2/{repository}/referrers/{digest}"
        answer = self._send("GET", path, params=params)
        if answer.status_code == 404:
            codes = [e.get("code") for e in answer.json().get("errors", [])]
            if "NAME_UNKNOWN" in codes:
                raise Failed(f"{repository}: repository name not known to registry")
            raise Unsupported("failed to query referrers API")
        if answer.status_code != 200:
            raise Failed(f"referrers: {answer.status_code} {answer.text[:200]}")
        if answer.headers.get("content-type") != INDEX:  # compared whole, as `ct != ...` does
            raise Unsupported(f"unknown content returned ({answer.headers.get('content-type')})")
        if "link" in answer.headers:
            raise Failed("a next page: oras would follow it")
        referrers: list[Any] = answer.json()["manifests"]
        applied = answer.headers.get("oci-filters-applied", "").split(",")
        if artifact_type and "artifactType" not in applied:
            referrers = [r for r in referrers if r.get("artifactType") == artifact_type]
        return referrers

    def discover(
        self, repository: str, reference: str, artifact_type: str = ""
    ) -> list[Discovered]:
        """`oras discover`: the tag resolved, then every referrer's referrers, depth first,
        each digest asked once (`fetchAllReferrers`)."""
        found: list[Discovered] = []
        visited: set[str] = set()

        def walk(digest: str) -> None:
            if digest in visited:
                return
            visited.add(digest)
            for descriptor in self.referrers(repository, digest, artifact_type):
                found.append(Discovered(digest, descriptor))
                walk(descriptor["digest"])

        walk(self.resolve(repository, reference))
        return found

    def pull(self, repository: str, digest: str) -> dict[str, bytes]:
        """`oras pull REPOSITORY@DIGEST`: the manifest (`generateDescriptor`: a media type,
        a length, the digest header equal to the one asked, the bytes verified), then each
        layer with a title, verified against its descriptor; file name → bytes."""
        answer = self._send("GET", f"/v2/{repository}/manifests/{digest}", ACCEPT)
        if answer.status_code != 200:
            raise Failed(f"{repository}@{digest}: {answer.status_code}")
        media_type = answer.headers.get("content-type", "").split(";")[0].strip()
        if media_type != MANIFEST or "content-length" not in answer.headers:
            raise Failed(f"not an image manifest with a length: {media_type}")
        if answer.headers.get("docker-content-digest", digest) != digest:
            raise Failed("digest mismatch in Docker-Content-Digest")
        _verify(answer.content, digest, len(answer.content))
        manifest = json.loads(answer.content)
        files: dict[str, bytes] = {}
        for layer in manifest["layers"]:
            title = layer.get("annotations", {}).get("org.opencontainers.image.title")
            if title is None:
                continue  # oras pull skips a layer without a name
            blob = self._send("GET", f"/v2/{repository}/blobs/{layer['digest']}")
            if blob.status_code != 200:
                raise Failed(f"blob {layer['digest']}: {blob.status_code}")
            _verify(blob.content, layer["digest"], layer["size"])
            files[title] = blob.content
        return files

    def _send(
        self,
        method: str,
        path: str,
        accept: str | None = None,
        params: dict[str, str] | None = None,
    ) -> httpx.Response:
        headers = dict(self.headers)
        if accept is not None:
            headers["Accept"] = accept
        answer = self.client.request(method, path, headers=headers, params=params)
        self.requests.append((method, path, answer.status_code))
        return answer


def _verify(data: bytes, digest: str, size: int) -> None:
    """content.NewVerifyReader: the size, then the sha256, as the descriptor names them."""
    if len(data) != size:
        raise Failed(f"size {len(data)}, expected {size}")
    if f"sha256:{hashlib.sha256(data).hexdigest()}" != digest:
        raise Failed(f"digest mismatch: expected {digest}")
