"""The pages people open: the list of modules and providers with its search, a module's page,
a provider's page, and their stylesheet and script. Each shows only what the reader may read."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from urllib.parse import quote, urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from gitreg.address import ProviderAddress
from gitreg.auth.principal import Principal
from gitreg.docs.model import ModuleDocs
from gitreg.errors import ClientError, GitregError, NotFound, NotReadYet
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.pages.home import HomeQuery, home_page
from gitreg.pages.provider_view import provider_page, provider_url
from gitreg.pages.render import PAGES
from gitreg.pages.usage import latest_release
from gitreg.pages.views import ModuleSituation, module_page
from gitreg.providers.artifacts import ProviderRelease
from gitreg.providers.hosted import ProviderEntry
from gitreg.tags import parse_version
from gitreg.web import access
from gitreg.web.directory import directory_for
from gitreg.web.error_pages import PAGE_KEY
from gitreg.web.files import etag_matches
from gitreg.web.frame import SECURITY_HEADERS, html
from gitreg.web.modules import module_address, versions_known
from gitreg.web.retiring import page_report
from gitreg.web.state import state_of, world_of
from gitreg.web.usage import module_counts

log = logging.getLogger(__name__)

Handler = Callable[[Request], Awaitable[Response]]


def page(handler: Handler) -> Handler:
    """A page's handler: its errors become pages for a person (`web/error_pages.py`), never the
    API's JSON; a client's mistake is a 4xx page saying what, never a 500."""

    @functools.wraps(handler)
    async def marked(request: Request) -> Response:
        request.scope[PAGE_KEY] = True
        return await handler(request)

    return marked


@page
async def home(request: Request) -> Response:
    """The namespaces the reader may read, a namespace's modules and providers, or `?q=`'s
    matches, a page at a time (`?page=`; `gitreg/pages/home.py`). Search runs on the server: the
    page works without script, which only filters what is shown as one types."""
    ask = HomeQuery.parse(request.query_params.multi_items())
    view = home_page(await directory_for(request), ask)
    reader = await access.reader_of(request)
    retiring = None
    if view.namespace and not ask.query and ask.page == 1:
        retiring = await page_report(request, view.namespace, reader)
    return html(request, "home.html", page=view, reader=reader, query=ask.query, retiring=retiring)


@page
async def module(request: Request) -> Response:
    """A module at its latest version, or at `version`: README, inputs, outputs, ..."""
    address = module_address(request)
    state = state_of(request)
    git = access.module_git(request, address)
    admitted = await access.admit(request, "read", f"module {address}", address.namespace, git)
    snapshot = world_of(request).snapshot
    entry = snapshot.index.get(address.namespace, address.name, address.system)
    if entry is None:
        raise NotFound(f"no module {address} on this registry")
    chosen = request.query_params.get("version")
    if chosen and "version" not in request.path_params:
        # The version selector's form, sent without script: to that version's own page.
        where = f"{request.url.path.rstrip('/')}/{quote(chosen, safe='')}"
        return Response(status_code=303, headers={"Location": where, **SECURITY_HEADERS})
    versions_known(request, snapshot, entry)  # starting: a page that says so, not "no version"
    release = _release(entry, request.path_params.get("version"))
    docs: ModuleDocs | None = None
    times: Mapping[str, int] = {}
    problem = ""
    try:
        docs = await state.docs.module_docs(entry, release)
        times = await state.docs.commit_times(entry)
    except (GitregError, OSError) as exc:
        # The page still says what is known (versions, usage); the docs say why not.
        log.warning("docs of %s %s: %s", address, release.version, exc)
        problem = f"The documentation of this version could not be read: {exc}"
    # Off the event loop: a README of a repository's own making may take the sanitiser a
    # while (it lets go of the GIL), and no other request waits for it.
    reader = await access.reader_of(request)
    view = await asyncio.to_thread(
        module_page,
        snapshot.catalog.server.hostname,
        entry,
        release,
        docs,
        times,
        problem,
        _situation(request, entry, reader),
    )
    counted = world_of(request).catalog.downloads.enabled
    downloads = await module_counts(request, entry, admitted) if counted else None
    return html(request, "module.html", page=view, reader=reader, downloads=downloads)


def _situation(request: Request, entry: ModuleEntry, reader: Principal | None) -> ModuleSituation:
    world = world_of(request)
    readable = access.may_read(request, reader)
    namespace = entry.spec.address.namespace
    # The modules of the same repository, where the reader may read them: admitted to this
    # one, the reader reads its namespace.
    repository = tuple(
        spec
        for spec in world.snapshot.specs.get(entry.spec.repo, ())
        if spec.address.namespace == namespace or readable(spec.address.namespace)
    )
    used_by = state_of(request).dependents.current.seen_by(entry.spec.address.key, readable)
    return ModuleSituation(
        repository=repository,
        used_by=used_by,
        unreadable=state_of(request).modules.status[entry.spec.repo].last_error is not None,
        address=_opened_at(request),
        login=access.gate_of(request).login is not None,
        provenance=world.catalog.provenance is not None,
    )


def _opened_at(request: Request) -> str:
    """The address the browser reached the registry by: public_url's, or the request's Host."""
    public = world_of(request).catalog.server.public_url
    return urlsplit(public).netloc if public else request.headers.get("host", "")


def _release(entry: ModuleEntry, text: str | None) -> Release:
    if text is None:
        latest = latest_release(entry.versions.releases)
        if latest is None:
            raise NotFound(f"{entry.spec.address} serves no version yet")
        return latest
    found = entry.by_version.get(text)
    if found is None:
        try:
            normalised = str(parse_version(text.removeprefix("v")))
        except ValueError as exc:
            raise ClientError(str(exc)) from exc
        found = entry.by_version.get(normalised)
    if found is None:
        raise NotFound(f"{entry.spec.address} has no version {text}")
    return found


@page
async def provider(request: Request) -> Response:
    """A hosted provider at its newest version, or at `version`: the `required_providers` block
    for it, its platforms, every version. `?version=` (the version selector without script)
    goes to that version's page."""
    try:
        address = ProviderAddress.of(request.path_params["namespace"], request.path_params["type"])
    except ValueError as exc:
        raise ClientError(str(exc)) from exc
    await access.admit(request, "read", f"provider {address}", address.namespace)
    providers = world_of(request).side.providers
    entry = providers.get(address.namespace, address.type)
    if entry is None and not providers.scanned:
        raise NotReadYet(f"{address}: the release folders are being read (the server just started)")
    if entry is None:
        raise NotFound(f"no provider {address} on this registry")
    chosen = _chosen_version(request)
    if chosen is not None:
        found = _provider_release(entry, chosen)
        return RedirectResponse(provider_url(entry, found.version), status_code=303)
    text = request.path_params.get("version")
    release = _provider_release(entry, text) if text is not None else None
    hostname = world_of(request).catalog.server.hostname
    login = access.gate_of(request).login is not None
    view = provider_page(
        hostname, entry, providers.public_keys(), release, _opened_at(request), login
    )
    reader = await access.reader_of(request)
    readable = access.may_read(request, reader)
    used_by = state_of(request).dependents.providers.seen_by(entry.spec.key, readable)
    return html(request, "provider.html", page=view, used_by=used_by, reader=reader)


def _chosen_version(request: Request) -> str | None:
    """`?version=`, the only parameter a provider's page takes (and only without a version in
    its path)."""
    items = request.query_params.multi_items()
    if not items:
        return None
    names = [name for name, _ in items]
    if names != ["version"] or "version" in request.path_params:
        raise ClientError("a provider's page takes only ?version=, once")
    return items[0][1]


def _provider_release(entry: ProviderEntry, text: str) -> ProviderRelease:
    try:
        version = str(parse_version(text.removeprefix("v")))
    except ValueError as exc:
        raise ClientError(f"{text[:40]!r} is not a version: {exc}") from exc
    release = entry.release(version)
    if release is None:
        raise NotFound(f"{entry.spec} has no version {version}")
    return release


async def static(request: Request) -> Response:
    # Their URLs change with their content (`?v=`): cached for a year.
    return _static_file(request, request.path_params["file"], "public, max-age=31536000, immutable")


async def favicon(request: Request) -> Response:
    """`/favicon.ico`, which browsers ask for whatever the page links: its URL never changes,
    so it is kept a day, then asked again (a 304 while it is the same)."""
    return _static_file(request, "favicon.ico", "public, max-age=86400")


def _static_file(request: Request, name: str, caching: str) -> Response:
    found = PAGES.static.get(name)
    if found is None:
        raise NotFound(f"no such file: {request.url.path}")
    headers = {"ETag": found.etag, "Cache-Control": caching}
    if etag_matches(request.headers.get("if-none-match", ""), found.etag):
        return Response(status_code=304, headers=headers)
    return Response(found.body, media_type=found.media_type, headers=headers)
