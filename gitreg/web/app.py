"""The ASGI app: a route table over the registry, and a lifespan that yields the typed state
handlers share and starts the background work that keeps it fresh (`freshness/background.py`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from gitreg.attestations.keys import PUBLIC_KEY_PATH
from gitreg.catalog.model import Catalog
from gitreg.docs.warming import keep_warm
from gitreg.modules.downloads import ARCHIVES_PREFIX
from gitreg.ops.readiness import readiness
from gitreg.web import (
    dependents,
    discovery,
    login,
    modules,
    oci,
    pages,
    provenance,
    registry_api,
    retiring,
    signin,
    status,
    webhooks,
)
from gitreg.web import mirror as mirror_routes
from gitreg.web import providers as provider_routes
from gitreg.web.answer_headers import AnswerHeaders
from gitreg.web.bodies import BufferedBodies
from gitreg.web.errors import HANDLERS
from gitreg.web.kept_routes import KeptRoutes
from gitreg.web.mirror import MIRROR_PREFIX
from gitreg.web.providers import FILES_PREFIX
from gitreg.web.request_ids import RequestIds
from gitreg.web.slashes import TrailingSlashes
from gitreg.web.state import STATE_KEY, RegistryState, state_of, world_of

log = logging.getLogger(__name__)

_MODULE = "/v1/modules/{namespace}/{name}/{system}"
_PROVIDER = "/v1/providers/{namespace}/{type}"


def _assistants(
    catalog: Catalog,
) -> tuple[Callable[[], contextlib.AbstractAsyncContextManager[None]], Route] | None:
    """The MCP app's lifespan and its route, when registry.yaml turns MCP on: only then is the
    `mcp` package imported (1.5 to 1.8 s of every start, and of every process that imports the
    app, a test's included)."""
    if not catalog.mcp.enabled:
        return None
    from gitreg.web import mcp

    run, app = mcp.http_app(catalog)
    # POST alone: a stateless server has no stream to GET and no session to DELETE (405).
    return run, Route(mcp.PATH, app, methods=["POST"])


async def healthz(request: Request) -> JSONResponse:
    """Liveness: the process serves. Never waits on Git. With auth:, no module count (it would
    count the private ones for anyone)."""
    world = world_of(request)
    if world.gate.on:
        return JSONResponse({"status": "ok"})
    return JSONResponse({"status": "ok", "modules": len(world.snapshot.index)})


async def readyz(request: Request) -> JSONResponse:
    """Readiness: every repository's versions are known (fetched once, or read from its clone)
    and, with readiness.max_staleness, none was last synced longer ago; otherwise 503 with the
    reasons. Repositories served from their clone while their Git server fails are listed as
    stale, without making the server unready (but for that bound): it serves what they held.
    With auth:, counts and reason codes only (the details: /v1/status)."""
    state = state_of(request)
    providers = world_of(request).side.providers
    pending = [str(entry.spec) for entry in providers.entries() if entry.pending]
    answer = readiness(state.modules, time.time(), state.started, providers.scanned, pending)
    body = answer.public_body() if world_of(request).gate.on else answer.body()
    return JSONResponse(body, status_code=200 if answer.ready else 503)


def _catalog_of(state: RegistryState) -> Callable[[], Catalog]:
    """The catalog served now: what the consumers' reading reads, after any reload."""
    return lambda: state.modules.snapshot.catalog


class RegistryApp(Starlette):
    """Starlette, with request ids (and the access log) and the headers every answer carries
    outside its error middleware: the 500 it answers, and the traceback it logs, carry the
    request's id too. `hsts`: the Strict-Transport-Security value for answers over TLS."""

    def __init__(
        self, *args: Any, access_log: bool = False, hsts: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.access_log = access_log
        self.hsts = hsts
        self.router.redirect_slashes = False  # Starlette's would name the request's Host
        self.router.default = TrailingSlashes(self.router)

    def build_middleware_stack(self) -> ASGIApp:
        kept = KeptRoutes(super().build_middleware_stack())
        answers = AnswerHeaders(kept, self.hsts)
        return RequestIds(answers, access=self.access_log)


def create_app(
    state: RegistryState,
    background: bool = True,
    start: bool = False,
    settled: Callable[[], None] | None = None,
    access_log: bool = False,
) -> Starlette:
    """The registry app; with `background`, its lifespan polls the repositories, watches the
    local ones and the provider folders, and reloads registry.yaml when it changes; with
    `start`, it reads the clones and the release folders, then fetches every repository, in
    the background, while it answers (`settled`: called once the clones are read); with
    `access_log`, it logs a line per request (`gitreg.access`)."""

    catalog = state.current.world.catalog  # what is mounted is read once, at start, as tls is
    assistants = _assistants(catalog)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, RegistryState]]:
        state.downloads.start()
        if background:
            state.background.start()
        if start:
            state.background.start_up(settled)
        warming = [
            asyncio.create_task(
                keep_warm(state.docs, state.modules, budget=state.background.budget)
            ),
            # Who calls what: rebuilt after swaps and warmings, consumers read at their interval.
            asyncio.create_task(state.dependents.keep(state.modules)),
            asyncio.create_task(
                state.dependents.consumers.keep(lambda: state.modules.snapshot.catalog)
            ),
        ]
        async with contextlib.AsyncExitStack() as stack:
            if assistants is not None:  # a mounted app's own lifespan never runs
                await stack.enter_async_context(assistants[0]())
            yield {STATE_KEY: state}
        for task in warming:
            task.cancel()
        await asyncio.gather(*warming, return_exceptions=True)
        state.docs.close()
        await state.background.close()  # stopped at once, if a stop signal did not already
        await state.live.close()
        state.fresh_reads.close()
        # The last counts, written within the grace a stop allows (each write is bounded too).
        grace = state.current.world.catalog.server.shutdown_grace or None
        await asyncio.to_thread(state.downloads.close, grace)

    routes = [
        # First: a busy network mirror answers many requests a second from its recent bodies, and
        # every route tried before the right one costs a regular expression match.
        Route(
            f"{MIRROR_PREFIX}/{{hostname}}/{{namespace}}/{{type}}/{{file}}",
            mirror_routes.serve,
            methods=["GET", "HEAD"],
        ),
        Route("/.well-known/terraform.json", discovery.terraform_json),
        Route(f"{_MODULE}/versions", modules.versions),
        Route(f"{_MODULE}/{{version}}/download", modules.download),
        # Then the archive a download points at: a `terraform init` asks these four in turn.
        Route(
            f"{ARCHIVES_PREFIX}/{{namespace}}/{{name}}/{{system}}/{{file}}",
            modules.archive,
            methods=["GET", "HEAD"],
        ),
        # The registry API, after the two routes Terraform uses: `versions` and a version's
        # `download` must never be read as a version, and `search` never as a namespace.
        Route("/v1/modules", registry_api.list_modules),
        Route("/v1/modules/search", registry_api.search_modules),
        Route("/v1/modules/{namespace}", registry_api.list_modules),
        Route("/v1/modules/{namespace}/{name}", registry_api.module_systems),
        Route(_MODULE, registry_api.latest),
        Route(f"{_MODULE}/download", registry_api.download_latest),
        Route(f"{_MODULE}/downloads/summary", registry_api.downloads_summary),
        Route(f"{_MODULE}/dependents", dependents.answer),
        Route("/v1/namespaces/{namespace}/retiring", retiring.namespace_report),
        Route("/v1/retiring", retiring.readable_report),
        Route(f"{_MODULE}/{{version}}", registry_api.version),
        Route(f"{_MODULE}/{{version}}/sbom", registry_api.bill_of_materials),
        Route(f"{_MODULE}/{{version}}/provenance", provenance.provenance),
        Route(PUBLIC_KEY_PATH, provenance.public_key),
        Route(f"{_PROVIDER}/versions", provider_routes.versions),
        Route(f"{_PROVIDER}/dependents", dependents.provider_answer),
        Route(f"{_PROVIDER}/{{version}}/download/{{os}}/{{arch}}", provider_routes.download),
        Route(
            f"{FILES_PREFIX}/{{namespace}}/{{type}}/{{version}}/{{file}}",
            provider_routes.files,
            methods=["GET", "HEAD"],
        ),
        # OCI Distribution (oci: enabled): read-only, at the root as the spec requires.
        Route("/v2/", oci.base, methods=["GET", "HEAD"]),
        Route("/v2/token", oci.token, methods=["GET", "HEAD"]),
        Route("/v2/{name:path}/tags/list", oci.tags_list, methods=oci.READ_AND_WRITE),
        Route("/v2/{name:path}/manifests/{reference}", oci.manifest, methods=oci.READ_AND_WRITE),
        Route("/v2/{name:path}/blobs/{digest}", oci.blob, methods=oci.READ_AND_WRITE),
        Route("/v2/{name:path}/referrers/{digest}", oci.referrers, methods=oci.READ_AND_WRITE),
        Route("/v2/{rest:path}", oci.refused_write, methods=["POST", "PUT", "PATCH", "DELETE"]),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/v1/status", status.status),
        Route("/metrics", status.metrics),
        Route("/v1/webhooks/{forge}", webhooks.receive, methods=["POST"]),
        # The pages, for people (after the protocols, which tools ask far more often).
        Route("/", pages.home, methods=["GET", "HEAD"]),
        Route("/modules/{namespace}/{name}/{system}", pages.module, methods=["GET", "HEAD"]),
        Route(
            "/modules/{namespace}/{name}/{system}/{version}",
            pages.module,
            methods=["GET", "HEAD"],
        ),
        Route("/providers/{namespace}/{type}", pages.provider, methods=["GET", "HEAD"]),
        Route("/providers/{namespace}/{type}/{version}", pages.provider, methods=["GET", "HEAD"]),
        Route("/static/{file}", pages.static, methods=["GET", "HEAD"]),
        Route("/favicon.ico", pages.favicon, methods=["GET", "HEAD"]),
        Route("/signin", signin.sign_in_page, methods=["GET", "HEAD"]),
        Route("/signin", signin.sign_in, methods=["POST"]),
        Route("/signout", signin.sign_out, methods=["POST"]),
        # auth.login: `terraform login` (login.v1) and "Sign in with <provider>"
        Route("/oauth/authorize", login.authorize, methods=["GET"]),
        Route("/oauth/token", login.token, methods=["POST"]),
        Route("/oauth/callback", login.callback, methods=["GET"]),
        Route("/signin/provider", login.sign_in_with_provider, methods=["GET"]),
    ]
    if assistants is not None:
        routes.append(assistants[1])
    hsts = catalog.server.hsts  # as tls: read once, at start
    return RegistryApp(
        routes=routes,
        exception_handlers=HANDLERS,
        lifespan=lifespan,
        middleware=[Middleware(BufferedBodies)],
        access_log=access_log,
        hsts=hsts.header() if hsts else None,
    )
