"""The registry API beyond what Terraform needs, shaped like the public registry's: lists and
search of the modules a requester may read, and a version's documentation from its code.

Lists are filtered, never refused (`web/directory.py`); a module's own routes go through the
gate as `versions` does, before anything is looked up."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from gitreg.address import name_problem, system_problem
from gitreg.auth.principal import Principal
from gitreg.directory.paging import window
from gitreg.directory.repository_url import web_url
from gitreg.directory.search import query_problem, search
from gitreg.directory.view import DirectoryModule, newest
from gitreg.docs.service import DocsService
from gitreg.errors import ClientError, NotFound
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.web import access
from gitreg.web.directory import directory_for
from gitreg.web.modules import admitted, normalised, release_of, versions_known
from gitreg.web.registry_json import (
    Json,
    details_json,
    module_json,
    page_meta,
    pending_json,
)
from gitreg.web.revocations import listed
from gitreg.web.sbom import CONTENT_TYPE, sbom_bytes
from gitreg.web.state import state_of, world_of
from gitreg.web.usage import module_counts, module_key, module_totals, summary_answer

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 15  # as the public registry
MAX_LIMIT = 100
MAX_OFFSET = 1_000_000
_DIGITS = re.compile(r"[0-9]{1,9}")


def _docs(request: Request) -> DocsService:
    return state_of(request).docs


async def list_modules(request: Request) -> Response:
    """GET /v1/modules and /v1/modules/:namespace (offset, limit, provider, verified)."""
    namespace = request.path_params.get("namespace")
    if namespace is not None:
        _check_name(namespace, "namespace")
    return await _modules_page(request, "", namespace)


async def search_modules(request: Request) -> Response:
    """GET /v1/modules/search?q= (offset, limit, namespace, provider, verified)."""
    query = request.query_params.get("q")
    if query is None or not query.strip():
        raise ClientError("search needs a query: ?q=words")
    problem = query_problem(query)
    if problem:
        raise ClientError(problem)
    return await _modules_page(request, query, None)


async def module_systems(request: Request) -> Response:
    """GET /v1/modules/:namespace/:name: the newest version of the module for each system."""
    namespace, name = request.path_params["namespace"], request.path_params["name"]
    _check_name(namespace, "namespace")
    _check_name(name, "name")
    return await _modules_page(request, "", namespace, name)


async def latest(request: Request) -> Response:
    """GET /v1/modules/:namespace/:name/:system: the newest version, with its docs."""
    entry, principal = await _module(request)
    release = newest(await listed(request, entry, principal))
    if release is None:
        raise NotFound(f"{entry.spec.address} has no version yet")
    return JSONResponse(await _details(request, entry, release, principal))


async def version(request: Request) -> Response:
    """GET /v1/modules/:namespace/:name/:system/:version, with its docs."""
    entry, principal = await _module(request)
    release = _release(entry, request.path_params["version"])
    return JSONResponse(await _details(request, entry, release, principal))


async def bill_of_materials(request: Request) -> Response:
    """GET and HEAD /v1/modules/:namespace/:name/:system/:version/sbom: the version's software
    bill of materials, as CycloneDX 1.6 JSON; through the gate as its docs are."""
    entry, principal = await _module(request)
    release = _release(entry, request.path_params["version"])
    body = await sbom_bytes(request, entry, release, principal)
    return Response(body, media_type=CONTENT_TYPE)


async def download_latest(request: Request) -> Response:
    """GET /v1/modules/:namespace/:name/:system/download: to the newest version's download."""
    entry, principal = await _module(request)
    release = newest(await listed(request, entry, principal))
    if release is None:
        raise NotFound(f"{entry.spec.address} has no version yet")
    return RedirectResponse(
        f"{request.url.path.removesuffix('/download')}/{release.version}/download", 302
    )


async def _modules_page(
    request: Request, query: str, namespace: str | None, name: str | None = None
) -> Response:
    params = request.query_params
    limit = _int(params, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    offset = _int(params, "offset", 0, 0, MAX_OFFSET)
    kept: dict[str, str] = {"q": query} if query else {}
    if namespace is None and (namespace := params.get("namespace")) is not None:
        _check_name(namespace, "namespace")
        kept["namespace"] = namespace
    system = params.get("provider")
    if system is not None:
        system = system.lower()
        if len(system) > 64:
            raise ClientError(f"provider is {len(system)} characters long; at most 64 are allowed")
        if problem := system_problem(system):
            raise ClientError(f"provider: {problem}")
        kept["provider"] = system
    verified = params.get("verified")
    if verified is not None:
        if verified not in ("true", "false"):
            raise ClientError(f"verified must be true or false, not {verified[:40]!r}")
        kept["verified"] = verified
    view = await directory_for(request)
    key = (
        namespace.lower() if namespace is not None else None,
        name.lower() if name is not None else None,
        system,
    )
    page: list[DirectoryModule]
    if verified == "true":  # nothing here is verified
        page, total = [], 0
    elif query:  # a search ranks every readable module
        found = [m for m in search(view, query) if _matches(m, *key)]
        page, total = found[offset : offset + limit], len(found)
    else:  # a list is cut from the namespaces' runs: only the page is described
        positions, total = window(view.module_runs(*key), offset, limit)
        page = view.described(positions)
    times = await _commit_times_of(_docs(request), page)
    downloads = await module_totals(request, [m.entry for m in page])
    body = {
        "meta": page_meta(request.url.path, kept, limit, offset, total),
        "modules": [
            module_json(
                m.entry,
                m.release,
                m.description,
                m.repository_url,
                published,
                downloads.get(module_key(m.entry.spec.address), 0),
            )
            for m, published in zip(page, times, strict=True)
        ],
    }
    return JSONResponse(body)


async def _commit_times_of(docs: DocsService, page: list[DirectoryModule]) -> list[int | None]:
    """The listed releases' commit times: from memory where known (once the docs are warmed,
    all of them), the others read at once."""
    times = [docs.known_commit_time(m.entry, m.release) for m in page]
    missing = [i for i, known in enumerate(times) if known is None]
    read = await asyncio.gather(
        *(_commit_time(docs, page[i].entry, page[i].release) for i in missing)
    )
    for i, found in zip(missing, read, strict=True):
        times[i] = found
    return times


async def _commit_time(docs: DocsService, entry: ModuleEntry, release: Release) -> int | None:
    """A list does not fail for one module whose clone cannot be read now: it shows no time.
    Only the listed release's time is read (from memory once the docs are warmed)."""
    try:
        return await docs.commit_time(entry, release)
    except Exception as exc:
        log.warning("%s: cannot read its commit time: %s", entry.spec.address, exc)
        return None


async def _commit_times(docs: DocsService, entry: ModuleEntry) -> Mapping[str, int]:
    """A list does not fail for one module whose clone cannot be read now: it shows no time."""
    try:
        return await docs.commit_times(entry)
    except Exception as exc:
        log.warning("%s: cannot read its commit times: %s", entry.spec.address, exc)
        return {}


async def downloads_summary(request: Request) -> Response:
    """GET /v1/modules/:namespace/:name/:system/downloads/summary, as the public registry's."""
    _, entry, _ = await admitted(request)
    return await summary_answer(request, entry)


async def _module(request: Request) -> tuple[ModuleEntry, Principal | None]:
    """The module of the path, once the gate admits the request to its namespace; its versions
    must be known (503 while its repository was never fetched, as `versions`)."""
    snapshot, entry, principal = await admitted(request)
    versions_known(request, snapshot, entry)
    return entry, principal


async def _details(
    request: Request, entry: ModuleEntry, release: Release, principal: Principal | None
) -> Json:
    docs_source = _docs(request)
    docs, times = await asyncio.gather(
        docs_source.module_docs(entry, release), _commit_times(docs_source, entry)
    )
    counts = await module_counts(request, entry, principal)
    summary = module_json(
        entry,
        release,
        docs.root.description,
        web_url(entry.spec.repo),
        times.get(release.commit),
        counts.summary.total,
    )
    versions = [r.version for r in await listed(request, entry, principal)]
    systems = _systems(request, entry, principal)
    return details_json(summary, docs, systems, versions, counts) | pending_json(entry)


def _release(entry: ModuleEntry, text: str) -> Release:
    release = release_of(entry, text)
    if release is None:
        raise NotFound(f"{entry.spec.address} has no version {normalised(text)}")
    return release


def _systems(request: Request, entry: ModuleEntry, principal: Principal | None) -> list[str]:
    """The systems the module has in its namespace; only its own when the reader was let in by
    its repository's Git server rather than the namespace (the others may be elsewhere)."""
    address = entry.spec.address
    if not access.may_read(request, principal)(address.namespace):
        return [address.system]
    index = world_of(request).snapshot.index
    key = (address.namespace.lower(), address.name.lower())
    systems = {e.spec.address.system for e in index.entries() if e.spec.address.key[:2] == key}
    return sorted(systems | {address.system})


def _matches(
    module: DirectoryModule, namespace: str | None, name: str | None, system: str | None
) -> bool:
    ns, n, sys = module.key
    return (
        (namespace is None or ns == namespace)
        and (name is None or n == name)
        and (system is None or sys == system)
    )


def _int(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    text = params.get(name)
    if text is None:
        return default
    if not _DIGITS.fullmatch(text) or not low <= int(text) <= high:
        raise ClientError(f"{name} must be a whole number from {low} to {high}, not {text[:40]!r}")
    return int(text)


def _check_name(value: str, what: str) -> None:
    if len(value) > 64:
        raise ClientError(f"{what} is {len(value)} characters long; at most 64 are allowed")
    if problem := name_problem(value, what):
        raise ClientError(problem)
