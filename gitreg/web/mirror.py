"""The provider network mirror protocol: `:hostname/:namespace/:type/index.json`,
`:version.json`, and the archives, whose URLs are relative to the version's JSON."""

from __future__ import annotations

import asyncio
import re

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from gitreg.address import provider_problem
from gitreg.errors import ClientError, NotFound
from gitreg.mirror import Address, NetworkMirror
from gitreg.tags import parse_version

MIRROR_PREFIX = "/v1/mirror"
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?")


async def serve(request: Request) -> Response:
    address = _address(request)
    mirror: NetworkMirror = request.app.state.mirror
    file = request.path_params["file"]
    name = "/".join(address)
    if file == "index.json":
        versions = await asyncio.to_thread(mirror.versions, address)
        if not versions:
            raise NotFound(f"the mirror has no provider {name}")
        return JSONResponse({"versions": {v: {} for v in versions}})
    if file.endswith(".json"):
        version = _version(file.removesuffix(".json"))
        packages = await asyncio.to_thread(mirror.packages, address, version)
        if not packages:
            raise NotFound(f"the mirror has no version {version} of {name}")
        archives = {
            f"{p.os}_{p.arch}": {"url": p.filename, "hashes": list(p.hashes)} for p in packages
        }
        return JSONResponse({"archives": archives})
    if file.endswith(".zip"):
        path = await asyncio.to_thread(mirror.archive, address, file)
        if path is None:
            raise NotFound(f"the mirror has no archive {file} of {name}")
        return FileResponse(path, media_type="application/zip")
    raise NotFound(f"{file!r} is not index.json, VERSION.json or a provider zip")


def _address(request: Request) -> Address:
    params = request.path_params
    host, namespace, kind = params["hostname"].lower(), params["namespace"], params["type"]
    if not _HOST.fullmatch(host):
        raise ClientError(f"{host!r} is not a provider's registry host name (without a port)")
    for value, what in ((namespace, "namespace"), (kind.lower(), "type")):
        problem = provider_problem(value, what)
        if problem:
            raise ClientError(problem)
    return (host, namespace.lower(), kind.lower())


def _version(text: str) -> str:
    try:
        return str(parse_version(text))
    except ValueError as exc:
        raise ClientError(str(exc)) from exc
