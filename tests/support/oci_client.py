"""A conformance client that makes OpenTofu's OCI checks step by step (from
../shared/protocols/opentofu-oci.md: internal/getmodules/oci_getter.go,
internal/getproviders/oci_registry_mirror_source.go and oras-go v2.6), so that the tests fail
where OpenTofu would refuse an answer."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

# oras-go's default Accept when resolving a tag or a digest (registry/remote/manifest.go:28-38).
ACCEPT = (
    "application/vnd.docker.distribution.manifest.v2+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.oci.image.index.v1+json, "
    "application/vnd.oci.artifact.manifest.v1+json"
)
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
INDEX = "application/vnd.oci.image.index.v1+json"


class Refused(Exception):
    """What OpenTofu would fail with."""


class NotInMirror(Exception):
    """The 404 OpenTofu's oci_mirror reads as "go on to the next installation method"."""


@dataclass
class Descriptor:
    media_type: str
    digest: str
    size: int


class TofuOci:
    """One registry host, as OpenTofu's OCI client meets it: `credentials` (username, password)
    are offered only after a 401, to the realm that challenge names, on the same host."""

    def __init__(self, client: httpx.Client, credentials: tuple[str, str] | None = None) -> None:
        self.client = client
        self.credentials = credentials
        self.token: str | None = None
        self.requests: list[tuple[str, str, int]] = []

    def ping(self) -> None:
        """Tofu 1.10-1.12: GET /v2/ must answer 200 (oci_distribution.go:109)."""
        if self._send("GET", "/v2/").status_code != 200:
            raise Refused("failed to contact OCI registry")

    def resolve(self, repository: str, reference: str, want: str) -> Descriptor:
        """HEAD a manifest with oras' Accept list: exact type, real length, no body, and the
        digest header on a HEAD by tag (repository.go:1592-1633)."""
        answer = self._send("HEAD", f"/v2/{repository}/manifests/{reference}", ACCEPT)
        if answer.status_code == 404:
            raise Refused(f"{repository}:{reference}: not found ({answer.status_code})")
        if answer.status_code != 200:
            raise Refused(f"HEAD {reference}: {answer.status_code}")
        kind = answer.headers.get("content-type", "").split(";")[0].strip()
        if kind != want:
            raise Refused(f"selected object is not {want}: {kind}")
        length = answer.headers.get("content-length")
        if length is None or not length.isdigit() or answer.content:
            raise Refused("unknown response Content-Length")
        digest = answer.headers.get("docker-content-digest")
        if reference.startswith("sha256:"):
            digest = reference
        elif digest is None:
            raise Refused("HEAD by tag without Docker-Content-Digest")
        return Descriptor(kind, digest, int(length))

    def fetch_manifest(self, repository: str, found: Descriptor) -> dict[str, Any]:
        """GET by digest with the one Accept type; type, length and digest checked, the digest
        recomputed over the body (repository.go:1112-1150; oci_getter.go:402-405)."""
        answer = self._send("GET", f"/v2/{repository}/manifests/{found.digest}", found.media_type)
        if answer.status_code != 200:
            raise Refused(f"GET manifest: {answer.status_code}")
        if answer.headers.get("content-type", "").split(";")[0] != found.media_type:
            raise Refused("Content-Type differs from the Accept type")
        sent = answer.headers.get("content-length")
        if sent is not None and int(sent) != found.size:
            raise Refused("Content-Length differs from the HEAD's")
        header = answer.headers.get("docker-content-digest")
        if header is not None and header != found.digest:
            raise Refused("Docker-Content-Digest differs from the digest asked")
        body = answer.content
        if len(body) != found.size or _digest(body) != found.digest:
            raise Refused("manifest digest mismatch")
        if len(body) > 4 << 20:
            raise Refused("manifest over 4 MiB")
        document: dict[str, Any] = json.loads(body)
        if document.get("mediaType") != found.media_type:
            raise Refused(f"mediaType {document.get('mediaType')!r}")
        return document

    def blob(self, repository: str, descriptor: Descriptor) -> bytes:
        answer = self._send("GET", f"/v2/{repository}/blobs/{descriptor.digest}", follow=True)
        if answer.status_code != 200:
            raise Refused(f"GET blob: {answer.status_code}")
        data = answer.content
        if len(data) != descriptor.size or _digest(data) != descriptor.digest:
            raise Refused("blob size or digest mismatch")
        return data

    def module(self, repository: str, reference: str = "latest") -> zipfile.ZipFile:
        """The module flow: ping, HEAD, GET, artifactType, the one archive/zip layer, the blob."""
        self.ping()
        found = self.resolve(repository, reference, MANIFEST)
        document = self.fetch_manifest(repository, found)
        if document.get("artifactType") != "application/vnd.opentofu.modulepkg":
            raise Refused(f"artifactType {document.get('artifactType')!r}")
        zips = [layer for layer in document["layers"] if layer["mediaType"] == "archive/zip"]
        if len(zips) != 1:
            raise Refused(f"{len(zips)} archive/zip layers")
        layer = Descriptor("archive/zip", zips[0]["digest"], zips[0]["size"])
        return zipfile.ZipFile(io.BytesIO(self.blob(repository, layer)))

    def provider_versions(self, repository: str) -> list[str]:
        """tags/list with no `n`, `Link` followed on the same origin; `_` read as `+`; a 404
        with NAME_UNKNOWN (or no body) is NotInMirror (oci_registry_mirror_source.go:177-273)."""
        self.ping()
        tags: list[str] = []
        path: str | None = f"/v2/{repository}/tags/list"
        while path is not None:
            answer = self._send("GET", path)
            if answer.status_code == 404:
                codes = (
                    [e.get("code") for e in answer.json().get("errors", [])]
                    if answer.content
                    else []
                )
                if not codes or set(codes) <= {"NAME_UNKNOWN", "NAME_INVALID"}:
                    raise NotInMirror(repository)
                raise Refused(f"tags/list: {codes}")
            if answer.status_code != 200:
                raise Refused(f"tags/list: {answer.status_code}")
            tags += answer.json()["tags"]
            path = _next_link(answer)
        return [tag.replace("_", "+") for tag in tags]

    def provider_zip(self, repository: str, version: str, os: str, arch: str) -> bytes:
        """The provider flow: HEAD the index by tag, GET it, pick the one platform manifest, GET
        it, its one archive/zip layer, the blob."""
        found = self.resolve(repository, version.replace("+", "_"), INDEX)
        index = self.fetch_manifest(repository, found)
        if index.get("artifactType") != "application/vnd.opentofu.provider":
            raise Refused(f"artifactType {index.get('artifactType')!r}")
        matches = [
            m
            for m in index["manifests"]
            if m.get("artifactType") == "application/vnd.opentofu.provider-target"
            and m["mediaType"] == MANIFEST
            and m["platform"] == {"os": os, "architecture": arch}
        ]
        if len(matches) != 1:
            raise Refused(f"{len(matches)} manifests for {os}/{arch}")
        target = Descriptor(MANIFEST, matches[0]["digest"], matches[0]["size"])
        manifest = self.fetch_manifest(repository, target)
        if manifest.get("artifactType") != "application/vnd.opentofu.provider-target":
            raise Refused(f"artifactType {manifest.get('artifactType')!r}")
        zips = [layer for layer in manifest["layers"] if layer["mediaType"] == "archive/zip"]
        if len(zips) != 1:
            raise Refused(f"{len(zips)} archive/zip layers")
        return self.blob(repository, Descriptor("archive/zip", zips[0]["digest"], zips[0]["size"]))

    def _send(
        self, method: str, path: str, accept: str | None = None, follow: bool = False
    ) -> httpx.Response:
        answer = self._once(method, path, accept, follow)
        if answer.status_code == 401 and self._authenticate(answer):
            answer = self._once(method, path, accept, follow)
        return answer

    def _once(self, method: str, path: str, accept: str | None, follow: bool) -> httpx.Response:
        headers = {"Accept": accept} if accept else {}
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        answer = self.client.request(method, path, headers=headers, follow_redirects=follow)
        self.requests.append((method, path, answer.status_code))
        return answer

    def _authenticate(self, answer: httpx.Response) -> bool:
        """A Bearer challenge: the realm must be on the registry's own origin (oras-go 2.6.1's
        rule for private addresses); the token fetched with Basic credentials."""
        header = answer.headers.get("www-authenticate", "")
        if not header.lower().startswith("bearer ") or self.credentials is None:
            return False
        params = dict(part.strip().split("=", 1) for part in header[7:].split(",") if "=" in part)
        realm = params["realm"].strip('"')
        base = self.client.base_url
        split = urlsplit(realm)
        if (split.scheme, split.hostname, split.port) != (base.scheme, base.host, base.port):
            raise Refused(f"realm {realm} is not on the registry's host")
        query = {"service": params.get("service", "").strip('"')}
        if "scope" in params:
            query["scope"] = params["scope"].strip('"')
        got = self.client.get(split.path, params=query, auth=self.credentials)
        if got.status_code != 200:
            raise Refused(f"token endpoint answered {got.status_code}")
        body = got.json()
        self.token = body.get("token") or body.get("access_token")
        return True


def _digest(data: bytes) -> str:
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


def _next_link(answer: httpx.Response) -> str | None:
    link: str = answer.headers.get("link", "")
    if not link:
        return None
    target = link.split(";")[0].strip().strip("<>")
    if "://" in target:
        raise Refused("Link to another origin")
    return target
