"""The module registry protocol (modules.v1) and the archives its downloads point at."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from gitreg.address import ModuleAddress
from gitreg.archive_cache import ArchiveCache
from gitreg.errors import ClientError, NotFound
from gitreg.index import ModuleEntry
from gitreg.locations import archive_key, download_location
from gitreg.registry import Registry
from gitreg.tags import parse_version
from gitreg.versions import Release

_ARCHIVE_FILE = re.compile(r"(?P<commit>[0-9a-f]{40}|[0-9a-f]{64})(?:-[0-9a-f]{16})?\.tar\.gz")
_IMMUTABLE = "public, max-age=31536000, immutable"


async def versions(request: Request) -> Response:
    entry = _entry(request)
    listed = [{"version": r.version} for r in entry.versions.releases]
    return JSONResponse({"modules": [{"versions": listed}]})


async def download(request: Request) -> Response:
    entry = _entry(request)
    location = download_location(entry, _release(entry, request.path_params["version"]))
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


def _release(entry: ModuleEntry, text: str) -> Release:
    release = entry.by_version.get(text)  # the common case: exactly as listed
    if release is not None:
        return release
    try:
        version = parse_version(text.removeprefix("v"))
    except ValueError as exc:
        raise ClientError(str(exc)) from exc
    release = entry.by_version.get(str(version))
    if release is None:
        newest = ", ".join(r.version for r in entry.versions.releases[:5]) or "none"
        raise NotFound(f"{entry.spec.address} has no version {version} (newest: {newest})")
    return release
