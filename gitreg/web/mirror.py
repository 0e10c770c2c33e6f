"""The provider network mirror protocol: `:hostname/:namespace/:type/index.json`,
`:version.json`, and the archives, whose URLs are relative to the version's JSON."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response

from gitreg.address import provider_problem
from gitreg.errors import ClientError, NotFound, OriginError
from gitreg.mirror import Address, NetworkMirror
from gitreg.tags import parse_version
from gitreg.web.files import zip_response

MIRROR_PREFIX = "/v1/mirror"
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?")
T = TypeVar("T")


ANSWER_TTL = 5.0  # seconds an index.json or VERSION.json answer is reused


class Answers:
    """Rendered JSON answers, reused for a few seconds; and any work done once however many ask
    for it at the same moment. The sources behind the mirror read disks and origins, a busy
    mirror gets the same question many times a second, and a cold read-through download must
    hold one worker thread, not one per waiting client."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._known: dict[str, tuple[float, bytes]] = {}
        self._pending: dict[str, asyncio.Future[Any]] = {}

    def get(self, key: str) -> bytes | None:
        known = self._known.get(key)
        return known[1] if known and known[0] > self.clock() else None

    def put(self, key: str, body: bytes) -> None:
        if len(self._known) > 10_000:
            self._known.clear()
        self._known[key] = (self.clock() + ANSWER_TTL, body)

    async def shared(self, key: str, work: Callable[[], Awaitable[T]]) -> T:
        """`work()`'s result, or its error; callers that ask while it runs share it, and one that
        hangs up does not cancel it for the others."""
        future = self._pending.get(key)
        if future is None:
            future = asyncio.ensure_future(work())
            self._pending[key] = future
            future.add_done_callback(partial(self._done, key))
        result: T = await asyncio.shield(future)
        return result

    def _done(self, key: str, future: asyncio.Future[Any]) -> None:
        if self._pending.get(key) is future:
            del self._pending[key]
        if not future.cancelled():
            future.exception()  # retrieved: no "never retrieved" warning when all waiters left


async def serve(request: Request) -> Response:
    """One mirror request, counted by kind and outcome for /metrics."""
    file: str = request.path_params["file"]
    kind = _kind(file)
    counts: Counter[tuple[str, str]] = request.app.state.mirror_counts
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
    if isinstance(exc, NotFound):
        return "not_found"
    if isinstance(exc, ClientError):
        return "bad_request"
    if isinstance(exc, OriginError):
        return "origin_error"
    return "error"


async def _serve(request: Request, file: str) -> Response:
    answers: Answers = request.app.state.mirror_answers
    params = request.path_params
    asked = f"{params['hostname']}/{params['namespace']}/{params['type']}/{file}"
    if file.endswith(".json") and (body := answers.get(asked)) is not None:
        # The same request answered a moment ago: only answers that passed every check are kept.
        return Response(body, media_type="application/json")
    address = _address(request)
    mirror: NetworkMirror = request.app.state.mirror
    key = "/".join((*address, file))
    name = "/".join(address)
    if file.endswith(".zip"):
        path = await answers.shared(key, partial(asyncio.to_thread, mirror.archive, address, file))
        if path is None:
            raise NotFound(f"the mirror has no archive {file} of {name}")
        return zip_response(path, f"the mirror no longer has {file} of {name}")
    if file == "index.json":
        render = partial(asyncio.to_thread, _index, mirror, address)
    elif file.endswith(".json"):
        render = partial(asyncio.to_thread, _version_json, mirror, address, _version(file[:-5]))
    else:
        raise NotFound(f"{file!r} is not index.json, VERSION.json or a provider zip")
    body = await answers.shared(key, render)
    answers.put(asked, body)
    return Response(body, media_type="application/json")


def _index(mirror: NetworkMirror, address: Address) -> bytes:
    versions = mirror.versions(address)
    if not versions:
        raise NotFound(f"the mirror has no provider {'/'.join(address)}")
    return _json({"versions": {v: {} for v in versions}})


def _version_json(mirror: NetworkMirror, address: Address, version: str) -> bytes:
    packages = mirror.packages(address, version)
    if not packages:
        raise NotFound(f"the mirror has no version {version} of {'/'.join(address)}")
    archives = {f"{p.os}_{p.arch}": {"url": p.filename, "hashes": list(p.hashes)} for p in packages}
    return _json({"archives": archives})


def _json(body: object) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


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
