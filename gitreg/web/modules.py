"""The module registry protocol (modules.v1) and the archives its downloads point at."""

from __future__ import annotations

import asyncio
import re

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from gitreg.address import ModuleAddress
from gitreg.auth.principal import Principal
from gitreg.errors import ClientError, NotFound, NotReadYet
from gitreg.modules.downloads import archive_digest, archive_key, checksum_query
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.tags import parse_version
from gitreg.web import access, oci
from gitreg.web.files import etag_matches
from gitreg.web.hot_routes import (
    MODULE_ARCHIVE,
    MODULE_DOWNLOAD,
    MODULE_VERSIONS,
    Admission,
    admit,
    module_target,
)
from gitreg.web.kept import Made
from gitreg.web.revocations import by_installs, refuse_revoked, withheld
from gitreg.web.state import state_of, world_of, world_synced
from gitreg.web.usage import module_key

_ARCHIVE_FILE = re.compile(r"(?P<commit>[0-9a-f]{40}|[0-9a-f]{64})(?:-[0-9a-f]{16})?\.tar\.gz")
_IMMUTABLE = "public, max-age=31536000, immutable"
ON_MISS_WAIT = 5.0  # seconds; Terraform gives up on a registry after 10


async def versions(request: Request) -> Response:
    address = module_address(request)
    admission = await admit(request, MODULE_VERSIONS, address)
    snapshot, entry = _read(request, address)
    fresh = state_of(request).fresh_reads
    if fresh.due(entry.spec.repo):  # a tag pushed a moment ago is listed without a webhook
        await fresh.check(entry.spec.repo)
        snapshot, entry = _read(request, address, synced=True)
    if entry.pending and _preview(admission.principal):  # never kept: others see fewer
        return JsonBytesResponse(entry.preview_json(), (b"cache-control", b"private"))
    versions_known(request, snapshot, entry)
    if entry.revoked:  # left out for a reader who never installed them
        key = module_key(entry.spec.address)
        hidden = await withheld(request, "module", key, entry.revoked, admission.principal)
        response = JsonBytesResponse(entry.versions_json(hidden))

        def made(withheld: frozenset[str]) -> Made:
            return MODULE_VERSIONS.kept_parts(JsonBytesResponse(entry.versions_json(withheld)))

        # Kept, and made again for each reader from what they installed.
        sent = (hidden, MODULE_VERSIONS.kept_parts(response))
        readers = by_installs(request, "module", key, entry.revoked, made, sent)
        return admission.keep(request, response, entry.spec.repo, readers)
    response = JsonBytesResponse(entry.versions_json())
    if not entry.versions.releases:  # whether none is known may change without a swap
        return response
    return admission.keep(request, response, entry.spec.repo)


async def download(request: Request) -> Response:
    address = module_address(request)
    admission = await admit(request, MODULE_DOWNLOAD, address)
    snapshot, entry = _read(request, address)
    text = request.path_params["version"]
    release = release_of(entry, text)
    if release is None and _preview(admission.principal):
        release = entry.pending_release(normalised(text))
    if release is None and await _refreshed_on_miss(request, entry):
        snapshot, entry = _read(request, address, synced=True)
        release = release_of(entry, text)
    if release is None:
        versions_known(request, snapshot, entry)
        newest = ", ".join(r.version for r in entry.versions.releases[:5]) or "none"
        raise NotFound(f"{entry.spec.address} has no version {normalised(text)} (newest: {newest})")
    key = module_key(entry.spec.address)
    revoked = entry.revocation(release)
    await refuse_revoked(request, "module", key, release.version, revoked, admission.principal)
    admission.downloaded(request, "module", key, release.version)
    if (oci_location := await oci.module_location(request, entry, release)) is not None:
        return JSONResponse({"location": oci_location}, headers={"X-Terraform-Get": oci_location})
    # Terraform reads the header, OpenTofu the JSON body: send both, with the same value.
    ledger = snapshot.ledgers[entry.spec.repo]
    archives = state_of(request).archives
    digest = await archive_digest(archives, entry.spec, entry.clone_path, release.commit, ledger)
    if not access.is_private(request, entry.spec.address.namespace):
        body, header = entry.download_json(release, digest)
        response = JsonBytesResponse(body, (b"x-terraform-get", header))
        settings = world_of(request).catalog.oci
        if settings.enabled and settings.module_locations:
            return response  # OpenTofu 1.10+ is pointed elsewhere, by its User-Agent
        return _kept(request, admission, response, revoked)
    location = entry.location(release)
    if not location.startswith("/"):
        return JSONResponse({"location": location}, headers={"X-Terraform-Get": location})
    # Clients fetch the archive without a token: the URL carries its permission. No
    # `use_registry_credentials`: with it, OpenTofu 1.12+ would fetch the URL verbatim, verifying
    # no checksum and asking for `//folder` as a path (docs/verifying.md).
    # Signed after the checksum: a URL's check reads the parameters it signed by name, in any
    # order (go-getter sorts them) and whatever else the query holds.
    archive, suffix, folder = location.partition(".tar.gz")
    location = admission.sign(archive + suffix, f"{folder}?{checksum_query(digest)}")
    made = JSONResponse({"location": location}, headers={"X-Terraform-Get": location})
    return _kept(request, admission, made, revoked)


def _kept(
    request: Request, admission: Admission[ModuleAddress, None], response: Response, revoked: object
) -> Response:
    """A download answer, kept unless it is of a revoked version and readers are told apart."""
    if revoked is not None and world_of(request).gate.on:
        return response
    return admission.keep(request, response, None)


class JsonBytesResponse(Response):
    """A JSON answer whose body was made before the request (ModuleEntry keeps them): only its
    headers are put together, with none of Response's rendering and header parsing."""

    media_type = "application/json"

    def __init__(self, body: bytes, *headers: tuple[bytes, bytes]) -> None:
        self.status_code = 200
        self.background = None
        self.body = body
        self.raw_headers = [
            *headers,
            (b"content-length", str(len(body)).encode()),
            (b"content-type", b"application/json"),
        ]


async def archive(request: Request) -> Response:
    address = module_address(request)
    private = await access.admit_download(request, f"module {address}", address.namespace)
    snapshot, entry = _read(request, address)
    if entry.spec.download != "archive":
        # Its clients clone with their own Git credentials; an archive built with gitreg's
        # would show them what the repository holds besides, other namespaces' code too.
        raise NotFound(f"{entry.spec.address} is downloaded with git: it has no archive")
    file = request.path_params["file"]
    match = _ARCHIVE_FILE.fullmatch(file)
    if not match:
        raise ClientError(f"{file!r} is not an archive name (<commit>.tar.gz)")
    key = archive_key(entry.spec, match["commit"])
    # A signed URL or a token (`private`) may name a version held back: a preview token's.
    if f"{key.name}.tar.gz" != file or not entry.serves_commit(key.commit, private):
        raise NotFound(f"{entry.spec.address} has no archive {file}")
    name = key.name
    etag = f'"{name}"'
    caching = access.PRIVATE_CACHING if private else _IMMUTABLE
    if_none_match, ranged = _conditions(request)
    if if_none_match is not None and etag_matches(if_none_match, etag):
        return Response(status_code=304, headers={"ETag": etag, "Cache-Control": caching})
    state = state_of(request)
    ledger = snapshot.ledgers[entry.spec.repo]
    if ranged:  # which neither Terraform nor OpenTofu sends: answered as Starlette does
        path = await state.archives.get(entry.clone_path, key, ledger)
        headers = {"ETag": etag, "Cache-Control": caching}
        return FileResponse(path, media_type="application/gzip", headers=headers)
    # A held archive is answered without a look at the disk: equal names mean equal bytes.
    held = state.held_archives.held(name, caching)
    if held is not None:
        if world_of(request).gate.on:  # signed URLs and tokens: the gate's download check
            return held
        admission = await admit(request, MODULE_ARCHIVE, None)
        return admission.keep(request, held, (name, caching))
    path = await state.archives.get(entry.clone_path, key, ledger)
    return await state.held_archives.of_file(path, name, etag, caching)


def _conditions(request: Request) -> tuple[str | None, bool]:
    """The request's If-None-Match (its first), and whether it asks for a Range: one pass over
    the headers as the server gave them (lowercase names), with no `Headers` built."""
    if_none_match, ranged = None, False
    for key, value in request.scope["headers"]:
        if key == b"if-none-match" and if_none_match is None:
            if_none_match = value.decode("latin-1")
        elif key == b"range":
            ranged = True
    return if_none_match, ranged


async def admitted(
    request: Request,
) -> tuple[RegistrySnapshot, ModuleEntry, Principal | None]:
    """`_read`, once the request is admitted to the module's namespace: before anything is
    looked up, so a client outside it learns nothing of what it holds."""
    address = module_address(request)
    principal = await access.admit_all(request, (module_target(request, address),))
    return (*_read(request, address), principal)


def _preview(principal: Principal | None) -> bool:
    return principal is not None and principal.preview


def module_address(request: Request) -> ModuleAddress:
    """The module a request's path names; a malformed one is the client's mistake (400)."""
    params = request.path_params
    try:
        return ModuleAddress.parse(params["namespace"], params["name"], params["system"].lower())
    except ValueError as exc:
        raise ClientError(str(exc)) from exc


def _read(
    request: Request, address: ModuleAddress, synced: bool = False
) -> tuple[RegistrySnapshot, ModuleEntry]:
    """The request's snapshot, and the module's entry in it; `synced`: with what the syncs it
    waited for swapped in."""
    snapshot = (world_synced(request) if synced else world_of(request)).snapshot
    entry = snapshot.index.get(address.namespace, address.name, address.system)
    if entry is None:
        raise NotFound(f"no module {address} on this registry")
    return snapshot, entry


def versions_known(request: Request, snapshot: RegistrySnapshot, entry: ModuleEntry) -> None:
    """No versions must mean "none", never "we could not reach Git": a client told so (503,
    Retry-After) tries again rather than concluding the module has no version."""
    if entry.versions.releases:
        return
    reason = state_of(request).modules.unknown_versions(snapshot, entry.spec.repo)
    if reason is not None:
        raise NotReadYet(f"{entry.spec.address}: its versions are not known yet: {reason}")


def release_of(entry: ModuleEntry, text: str) -> Release | None:
    release = entry.by_version.get(text)  # the common case: exactly as listed
    return release or entry.by_version.get(normalised(text))


def normalised(text: str) -> str:
    try:
        return str(parse_version(text.removeprefix("v")))
    except ValueError as exc:
        raise ClientError(str(exc)) from exc


async def _refreshed_on_miss(request: Request, entry: ModuleEntry) -> bool:
    """Replicas behind a load balancer can disagree for a moment: a version we lack may have
    just been tagged. Refresh its repository (rate-limited), waiting a bounded time."""
    state = state_of(request)
    if not state.modules.on_demand.due(entry.spec.repo):
        return False
    sync = state.syncs.request(entry.spec.repo, "on-demand")
    try:
        return await asyncio.wait_for(asyncio.shield(sync), ON_MISS_WAIT)
    except TimeoutError:
        return False  # it goes on in the background; this client gets its 404 in time
