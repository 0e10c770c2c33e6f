"""The provider network mirror protocol: `:hostname/:namespace/:type/index.json`,
`:version.json`, and the archives, whose URLs are relative to the version's JSON."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from gitreg.address import ProviderAddress
from gitreg.auth.principal import Principal
from gitreg.errors import (
    ClientError,
    Forbidden,
    NotFound,
    OriginBusy,
    OriginError,
    Unauthorized,
)
from gitreg.mirror.sources import MirrorSource, NetworkMirror
from gitreg.providers.filenames import PackageFile
from gitreg.state.download_counts import Kind
from gitreg.tags import parse_version
from gitreg.web import access
from gitreg.web.files import zip_response
from gitreg.web.hot_routes import MIRROR, MIRROR_INDEX, MIRROR_VERSION, Admission, admit
from gitreg.web.revocations import refuse_revoked, withheld
from gitreg.web.state import state_of, world_of
from gitreg.web.usage import count_download

MIRROR_PREFIX = "/v1/mirror"


async def serve(request: Request) -> Response:
    """One mirror request, counted by kind and outcome for /metrics."""
    file: str = request.path_params["file"]
    kind = _kind(file)
    counts = state_of(request).mirror_counts
    try:
        response = await _serve(request, file)
    except Exception as exc:
        counts[(kind, _outcome(exc))] += 1
        raise
    counts[(kind, "ok")] += 1
    return response


def _kind(file: str) -> str:
    if file == "index.json":
        return "index"
    if file.endswith(".json"):
        return "version"
    return "archive" if file.endswith(".zip") else "other"


def _outcome(exc: Exception) -> str:
    if isinstance(exc, (Unauthorized, Forbidden)):
        return "refused"
    if isinstance(exc, NotFound):
        return "not_found"
    if isinstance(exc, ClientError):
        return "bad_request"
    if isinstance(exc, OriginError):
        return "origin_error"
    if isinstance(exc, OriginBusy):
        return "busy"
    return "error"


async def _serve(request: Request, file: str) -> Response:
    if file.endswith(".zip") and access.authorization_of(request) is None:
        # Terraform fetches the archives without a token: their URLs carry the permission.
        signer = await access.download_admitted(request, MIRROR)
        response = await _answer(request, file)
        _count_archive(request, file, signer)
        return response if signer is None else _private(response)
    params = request.path_params
    route = MIRROR_INDEX if file == "index.json" else MIRROR_VERSION  # and an archive's asks
    asked = (params["hostname"], params["namespace"], params["type"])
    admission = await admit(request, route, asked)
    hidden = await _withheld(request, file, admission.principal)
    response = await _answer(request, file)
    if hidden is not None and file == "index.json":  # each reader's answer is their own
        index = json.loads(bytes(response.body))
        index["versions"] = {v: a for v, a in index["versions"].items() if v not in hidden}
        return Response(_json(index), media_type="application/json")
    if file.endswith(".zip"):
        _count_archive(request, file, admission.principal)
        return response if admission.principal is None else _private(response)
    # Kept for as long as the mirror reuses the body it was made from (its recent bodies), but
    # for a provider with revoked versions: the ledger is asked for each reader.
    witness = (_asked(request, file), bytes(response.body))
    keep = admission.keep if hidden is None else _not_kept
    if admission.principal is None or route is MIRROR_INDEX:  # the answer is anyone's
        return keep(request, response, witness)
    folder = request.url.path.rsplit("/", 1)[0]
    return keep(request, _with_signed_urls(admission, witness[1], folder), witness)


def _not_kept(request: Request, response: Response, witness: object) -> Response:
    return response


async def _withheld(
    request: Request, file: str, principal: Principal | None
) -> frozenset[str] | None:
    """Of a hosted provider's revoked versions, those the reader never installed (a version's
    JSON of one of them refused, with its reason); None when it has none revoked. The mirror's
    other providers are other registries' releases: revoked there or nowhere."""
    address = _address(request)
    world = world_of(request)
    entry = None
    if address.hostname == world.catalog.server.hostname:
        entry = world.side.providers.get(address.namespace, address.type)
    revoked = entry.revoked() if entry is not None else frozenset()
    if entry is None or not revoked:
        return None
    counted = f"{address.namespace}/{address.type}"
    hidden = await withheld(request, "provider", counted, revoked, principal)
    if file != "index.json" and file.endswith(".json"):
        version = _version(file[:-5])
        if version in hidden:
            reason = entry.revocation(version)
            await refuse_revoked(request, "provider", counted, version, reason, principal)
    return hidden


def _count_archive(request: Request, file: str, principal: Principal | str | None) -> None:
    """An archive sent is an install (the mirror has no download answer): of the provider's
    address, without the hostname when it is this registry's own (as providers.v1 counts it)."""
    address = _address(request)
    package = PackageFile.find(file, address.type)
    if package is None:
        return
    own = address.hostname == world_of(request).catalog.server.hostname
    counted = f"{address.namespace}/{address.type}" if own else str(address)
    download: tuple[Kind, str, str] = ("provider", counted, package.version)
    count_download(state_of(request), request.scope, download, principal)


def _private(response: Response) -> Response:
    """A zip behind the gate: a shared cache would hand it on past its URL's expiry (a FileResponse
    has a Last-Modified, enough for a cache to keep it heuristically)."""
    response.headers["Cache-Control"] = access.PRIVATE_CACHING
    return response


def _with_signed_urls(
    admission: Admission[tuple[str, str, str], tuple[str, bytes]], body: bytes, folder: str
) -> Response:
    """A version's archives, each URL signed for the reader admitted (its recent bodies keep
    them unsigned: a signature is for one client, for a while)."""
    answer = json.loads(body)
    for archive in answer["archives"].values():
        archive["url"] = admission.sign(f"{folder}/{archive['url']}")
    return Response(_json(answer), media_type="application/json")


async def _answer(request: Request, file: str) -> Response:
    side = world_of(request).side
    bodies = side.recent_bodies
    asked = _asked(request, file)
    if file.endswith(".json") and (body := bodies.get(asked)) is not None:
        # The same request answered a moment ago: only bodies that passed every check are kept.
        return Response(body, media_type="application/json")
    address = _address(request)
    mirror = side.mirror
    key = f"{address}/{file}"
    name = str(address)
    if file.endswith(".zip"):

        def archive(source: MirrorSource) -> Path | None:
            return source.archive(address, file)

        path = await bodies.shared(key, partial(mirror.answer, address, archive, True))
        if path is None:
            raise NotFound(f"the mirror has no archive {file} of {name}{mirror.missing(address)}")
        return zip_response(path, f"the mirror no longer has {file} of {name}")
    if file == "index.json":
        render = partial(_index, mirror, address)
    elif file.endswith(".json"):
        render = partial(_version_json, mirror, address, _version(file[:-5]))
    else:
        raise NotFound(f"{file!r} is not index.json, VERSION.json or a provider zip")
    body = await bodies.shared(key, render)
    bodies.put(asked, body)
    return Response(body, media_type="application/json")


def _asked(request: Request, file: str) -> str:
    """The key of a request's body among the mirror's recent bodies."""
    params = request.path_params
    return f"{params['hostname']}/{params['namespace']}/{params['type']}/{file}"


async def _index(mirror: NetworkMirror, address: ProviderAddress) -> bytes:
    versions = await mirror.answer(address, lambda source: source.versions(address))
    if not versions:
        raise NotFound(f"the mirror has no provider {address}{mirror.missing(address)}")
    return _json({"versions": {v: {} for v in versions}})


async def _version_json(mirror: NetworkMirror, address: ProviderAddress, version: str) -> bytes:
    packages = await mirror.answer(address, lambda source: source.packages(address, version))
    if not packages:
        missing = mirror.missing(address)
        raise NotFound(f"the mirror has no version {version} of {address}{missing}")
    archives = {f"{p.os}_{p.arch}": {"url": p.filename, "hashes": list(p.hashes)} for p in packages}
    return _json({"archives": archives})


def _json(body: object) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def _address(request: Request) -> ProviderAddress:
    params = request.path_params
    try:
        return ProviderAddress.of(params["namespace"], params["type"], params["hostname"])
    except ValueError as exc:
        raise ClientError(str(exc)) from exc


def _version(text: str) -> str:
    try:
        return str(parse_version(text))
    except ValueError as exc:
        raise ClientError(str(exc)) from exc
