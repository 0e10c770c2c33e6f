"""The provider network mirror protocol: `:hostname/:namespace/:type/index.json`,
`:version.json`, and the archives, whose URLs are relative to the version's JSON."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from gitreg.address import provider_problem
from gitreg.errors import ClientError, NotFound
from gitreg.mirror import Address, NetworkMirror
from gitreg.tags import parse_version

MIRROR_PREFIX = "/v1/mirror"
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?")


ANSWER_TTL = 5.0  # seconds an index.json or VERSION.json answer is reused


class Answers:
    """Rendered JSON answers, reused for a few seconds: the sources behind them read disks and
    origins, and a busy mirror gets the same question many times a second."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._known: dict[str, tuple[float, bytes]] = {}

    def get(self, key: str) -> bytes | None:
        known = self._known.get(key)
        return known[1] if known and known[0] > self.clock() else None

    def put(self, key: str, body: bytes) -> None:
        if len(self._known) > 10_000:
            self._known.clear()
        self._known[key] = (self.clock() + ANSWER_TTL, body)


async def serve(request: Request) -> Response:
    address = _address(request)
    file = request.path_params["file"]
    answers: Answers = request.app.state.mirror_answers
    key = "/".join((*address, file))
    if file.endswith(".json") and (body := answers.get(key)) is not None:
        return Response(body, media_type="application/json")
    response = await _answer(request, address, file)
    if file.endswith(".json"):
        answers.put(key, bytes(response.body))
    return response


async def _answer(request: Request, address: Address, file: str) -> Response:
    mirror: NetworkMirror = request.app.state.mirror
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
