"""The provider registry protocol (providers.v1), and the release files it points at."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gitreg.address import ProviderAddress
from gitreg.errors import ClientError, NotFound, NotReadYet
from gitreg.providers.artifacts import ProviderRelease
from gitreg.providers.filenames import platform_problem
from gitreg.providers.hosted import ProviderEntry
from gitreg.tags import parse_version
from gitreg.web import access
from gitreg.web.files import zip_response
from gitreg.web.hot_routes import PROVIDER_DOWNLOAD, PROVIDER_VERSIONS, admit
from gitreg.web.kept import Made
from gitreg.web.revocations import by_installs, refuse_revoked, withheld
from gitreg.web.state import world_of

FILES_PREFIX = "/v1/provider-files"
_IMMUTABLE = "public, max-age=31536000, immutable"


async def versions(request: Request) -> Response:
    address = provider_address_of(request)
    admission = await admit(request, PROVIDER_VERSIONS, address)
    entry = hosted_entry(request, address)
    revoked = entry.revoked()
    if not revoked:
        return admission.keep(request, _versions(entry), (address, entry))
    counted = f"{address.namespace}/{address.type}"
    hidden = await withheld(request, "provider", counted, revoked, admission.principal)

    def made(withheld: frozenset[str]) -> Made:
        return PROVIDER_VERSIONS.kept_parts(_versions(entry, withheld))

    # Kept, and made again for each reader from what they installed.
    response = _versions(entry, hidden)
    sent = (hidden, PROVIDER_VERSIONS.kept_parts(response))
    readers = by_installs(request, "provider", counted, revoked, made, sent)
    return admission.keep(request, response, (address, entry), readers)


def _versions(entry: ProviderEntry, withheld: frozenset[str] = frozenset()) -> Response:
    """The `versions` answer, without the `withheld` versions (revoked ones the reader never
    installed)."""
    listed = [
        {
            "version": r.version,
            "protocols": list(r.protocols),
            "platforms": [{"os": p.os, "arch": p.arch} for p in r.packages],
        }
        for r in entry.releases
        if r.version not in withheld
    ]
    versions = [r.version for r in entry.releases]
    warnings = deprecation_warnings(entry.deprecation, versions)
    # A revoked version is said to every reader: to one it is left out for, it says why.
    warnings += deprecation_warnings(entry.revocation, versions, "revoked")
    # Terraform and OpenTofu print `warnings` at init, whichever version they pick: each says
    # which versions it is about.
    return JSONResponse({"versions": listed, **({"warnings": warnings} if warnings else {})})


def deprecation_warnings(
    deprecation: Callable[[str], str | None], versions: list[str], said: str = "deprecated"
) -> list[str]:
    """One line per reason, naming the versions it deprecates, in the order they are listed;
    `deprecation`: why a version is (ProviderEntry.deprecation), or is `said` (revoked)."""
    by_reason: dict[str, list[str]] = {}
    for version in versions:
        reason = deprecation(version)
        if reason is not None:
            by_reason.setdefault(reason, []).append(version)
    return [
        f"{_versions_text(found)} {'is' if len(found) == 1 else 'are'} {said}: {reason}"
        for reason, found in by_reason.items()
    ]


def _versions_text(versions: list[str]) -> str:
    more = f" and {len(versions) - 5} more" if len(versions) > 5 else ""
    shown = ", ".join(versions[:5]) + more
    return f"Version{'s' if len(versions) > 1 else ''} {shown}"


async def download(request: Request) -> Response:
    address = provider_address_of(request)
    admission = await admit(request, PROVIDER_DOWNLOAD, address)
    entry = hosted_entry(request, address)
    release = _release(entry, request.path_params["version"])
    os_name, arch = request.path_params["os"], request.path_params["arch"]
    problem = platform_problem(os_name, arch)
    if problem:
        raise ClientError(problem)
    package = release.package(os_name, arch)
    if package is None:
        platforms = ", ".join(f"{p.os}_{p.arch}" for p in release.packages)
        raise NotFound(
            f"{entry.spec} {release.version} has no package for {os_name}_{arch} (has {platforms})"
        )
    base = _files_url(entry, release)
    private = access.is_private(request, entry.spec.namespace)
    counted = f"{address.namespace}/{address.type}"
    revoked = entry.revocation(release.version)
    await refuse_revoked(
        request, "provider", counted, release.version, revoked, admission.principal
    )
    admission.downloaded(request, "provider", counted, release.version)

    def url(name: str) -> str:
        path = f"{base}/{quote(name, safe='')}"
        # Terraform fetches these three without a token: a private one's URL carries its
        # permission.
        return admission.sign(path) if private else path

    providers = world_of(request).side.providers
    keys = [
        {
            "key_id": k.key_id,
            "ascii_armor": k.ascii_armor,
            "trust_signature": "",
            "source": "gitreg",
            "source_url": None,
        }
        for k in providers.public_keys()
    ]
    response = JSONResponse(
        {
            "protocols": list(release.protocols),
            "os": package.os,
            "arch": package.arch,
            "filename": package.filename,
            "download_url": url(package.filename),
            "shasums_url": url(release.shasums_name),
            "shasums_signature_url": url(f"{release.shasums_name}.sig"),
            "shasum": package.shasum,
            "signing_keys": {"gpg_public_keys": keys},
            "packages": packages_of(release),
        }
    )
    if revoked is not None and world_of(request).gate.on:  # each reader's answer is their own
        return response
    return admission.keep(request, response, (address, entry))


def packages_of(release: ProviderRelease) -> dict[str, dict[str, object]]:
    """Every platform's size and hashes, as OpenTofu 1.12 reads `packages`: it checks the
    requested platform's size and `zh:` against the zip it downloads, and fails the whole
    answer on a key or hash it cannot parse (tests/web/test_tofu_packages.py)."""
    return {
        f"{p.os}_{p.arch}": {
            "hashes": [f"zh:{p.shasum}", *((p.h1,) if p.h1 is not None else ())],
            "package_size": p.size,
        }
        for p in release.packages
    }


async def files(request: Request) -> Response:
    """A release's zip, SHA256SUMS or SHA256SUMS.sig, with Content-Length, ETag and HEAD."""
    address = provider_address_of(request)
    private = await access.admit_download(request, f"provider {address}", address.namespace)
    entry = hosted_entry(request, address)
    release = _release(entry, request.path_params["version"])
    name = request.path_params["file"]
    caching = access.PRIVATE_CACHING if private else _IMMUTABLE
    if name == release.shasums_name:
        return _bytes(request, release.shasums, "text/plain; charset=utf-8", caching)
    if name == f"{release.shasums_name}.sig":
        return _bytes(request, release.signature, "application/octet-stream", caching)
    package = next((p for p in release.packages if p.filename == name), None)
    if package is None:
        raise NotFound(f"{entry.spec} {release.version} has no file {name}")
    etag = f'"{package.shasum}"'
    if etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers={"ETag": etag})
    headers = {"ETag": etag, "Cache-Control": caching}
    gone = f"{entry.spec} {release.version}: {name} is no longer in the release folder"
    return zip_response(package.path, gone, headers)


def _bytes(request: Request, body: bytes, media_type: str, caching: str) -> Response:
    etag = f'"{hashlib.sha256(body).hexdigest()}"'
    headers = {"ETag": etag, "Cache-Control": caching}
    if etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    response = Response(body, media_type=media_type, headers=headers)
    if request.method == "HEAD":
        response.body = b""  # Content-Length stays that of the body
    return response


def _files_url(entry: ProviderEntry, release: ProviderRelease) -> str:
    parts = (entry.spec.namespace, entry.spec.type, release.version)
    return f"{FILES_PREFIX}/" + "/".join(quote(p, safe="") for p in parts)


def provider_address_of(request: Request) -> ProviderAddress:
    try:
        return ProviderAddress.of(request.path_params["namespace"], request.path_params["type"])
    except ValueError as exc:
        raise ClientError(str(exc)) from exc


def hosted_entry(request: Request, address: ProviderAddress) -> ProviderEntry:
    """The provider's entry, once the request is admitted to its namespace (before the lookup:
    a client outside it learns nothing of what it holds)."""
    providers = world_of(request).side.providers
    entry = providers.get(address.namespace, address.type)
    if entry is None and not providers.scanned:
        raise NotReadYet(f"{address}: the release folders are being read (the server just started)")
    if entry is None:
        raise NotFound(f"no provider {address} on this registry")
    if entry.pending:
        raise NotReadYet(f"{address}: its releases are being read from its forge")
    return entry


def _release(entry: ProviderEntry, text: str) -> ProviderRelease:
    try:
        version = str(parse_version(text))
    except ValueError as exc:
        raise ClientError(str(exc)) from exc
    release = entry.release(version)
    if release is None:
        newest = ", ".join(r.version for r in entry.releases[:5]) or "none"
        raise NotFound(f"provider {entry.spec} has no version {version} (newest: {newest})")
    return release
