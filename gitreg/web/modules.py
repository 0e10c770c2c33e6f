"""The module registry protocol (modules.v1) and the archives its downloads point at."""

from __future__ import annotations

import asyncio
import re

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from gitreg.address import ModuleAddress
from gitreg.archive_cache import ArchiveCache
from gitreg.errors import ClientError, NotFound
from gitreg.index import ModuleEntry
from gitreg.locations import archive_key
from gitreg.registry import Registry
from gitreg.tags import parse_version
from gitreg.versions import Release

_ARCHIVE_FILE = re.compile(r"(?P<commit>[0-9a-f]{40}|[0-9a-f]{64})(?:-[0-9a-f]{16})?\.tar\.gz")
_IMMUTABLE = "public, max-age=31536000, immutable"
ON_MISS_WAIT = 5.0  # seconds; Terraform gives up on a registry after 10


async def versions(request: Request) -> Response:
    entry = _entry(request)
    listed = [{"version": r.version} for r in entry.versions.releases]
    return JSONResponse({"modules": [{"versions": listed}]})


async def download(request: Request) -> Response:
    entry = _entry(request)
    text = request.path_params["version"]
    release = _release(entry, text)
    if release is None and await _refreshed_on_miss(request, entry):
        entry = _entry(request)
        release = _release(entry, text)
    if release is None:
        newest = ", ".join(r.version for r in entry.versions.releases[:5]) or "none"
        raise NotFound(
            f"{entry.spec.address} has no version {_normalised(text)} (newest: {newest})"
        )
    location = entry.locations[release.version]
    # Terraform reads the header, OpenTofu the JSON body: send both, with the same value.
    return JSONResponse({"location": location}, headers={"X-Terraform-Get": location})


async def archive(request: Request) -> Response:
    entry = _entry(request)
    file = request.path_params["file"]
    match = _ARCHIVE_FILE.fullmatch(file)
    if not match:
        raise ClientError(f"{file!r} is not an archive name (<commit>.tar.gz)")
    key = archive_key(entry.spec, match["commit"])
    if f"{key.name}.tar.gz" != file or key.commit not in entry.commits:
        raise NotFound(f"{entry.spec.address} has no archive {file}")
    etag = f'"{key.name}"'
    headers = {"ETag": etag, "Cache-Control": _IMMUTABLE}
    if etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    cache: ArchiveCache = request.app.state.archives
    path = await cache.get(entry.mirror_path, key)
    return FileResponse(path, media_type="application/gzip", headers=headers)


def _entry(request: Request) -> ModuleEntry:
    params = request.path_params
    try:
        address = ModuleAddress.parse(params["namespace"], params["name"], params["system"].lower())
    except ValueError as exc:
        raise ClientError(str(exc)) from exc
    registry: Registry = request.app.state.registry
    entry = registry.index.get(address.namespace, address.name, address.system)
    if entry is None:
        raise NotFound(f"no module {address} on this registry")
    return entry


def _release(entry: ModuleEntry, text: str) -> Release | None:
    release = entry.by_version.get(text)  # the common case: exactly as listed
    return release or entry.by_version.get(_normalised(text))


def _normalised(text: str) -> str:
    try:
        return str(parse_version(text.removeprefix("v")))
    except ValueError as exc:
        raise ClientError(str(exc)) from exc


async def _refreshed_on_miss(request: Request, entry: ModuleEntry) -> bool:
    """Replicas behind a load balancer can disagree for a moment: a version we lack may have
    just been tagged. Refresh its repository (rate-limited), waiting a bounded time."""
    registry: Registry = request.app.state.registry
    sync = asyncio.ensure_future(asyncio.to_thread(registry.refresh_on_miss, entry.spec.repo))
    try:
        return await asyncio.wait_for(asyncio.shield(sync), ON_MISS_WAIT)
    except TimeoutError:
        return False  # it goes on in the background; this client gets its 404 in time
