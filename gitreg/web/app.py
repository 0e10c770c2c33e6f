"""The ASGI app: a route table over the registry, and a lifespan that yields the typed state
handlers share, keeps the index fresh and applies registry.yaml live (`freshness/live.py`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from gitreg.freshness.poller import Poller
from gitreg.freshness.watching import watch_catalog, watch_repositories
from gitreg.modules.downloads import ARCHIVES_PREFIX
from gitreg.providers.hosted import watch_providers
from gitreg.web import discovery, modules, status, webhooks
from gitreg.web import mirror as mirror_routes
from gitreg.web import providers as provider_routes
from gitreg.web.bodies import BufferedBodies
from gitreg.web.errors import HANDLERS
from gitreg.web.mirror import MIRROR_PREFIX
from gitreg.web.providers import FILES_PREFIX
from gitreg.web.state import STATE_KEY, RegistryState, state_of

log = logging.getLogger(__name__)

_MODULE = "/v1/modules/{namespace}/{name}/{system}"
_PROVIDER = "/v1/providers/{namespace}/{type}"


async def healthz(request: Request) -> JSONResponse:
    """Liveness: the process serves. Never waits on Git."""
    modules = len(state_of(request).registry.snapshot.index)
    return JSONResponse({"status": "ok", "modules": modules})


async def readyz(request: Request) -> JSONResponse:
    """Readiness: every repository's versions are known (fetched once, or read from its clone);
    otherwise 503 with the reasons. Repositories served from their clone while their Git server
    fails are listed as stale, without making the server unready: it serves what they held.

    A shared state (PostgreSQL) that cannot be reached makes the replica `degraded`, still 200:
    it serves what the database confirmed and publishes nothing new, which is right for clients;
    a 503 would take every replica out of the load balancer at once for one database outage."""
    registry = state_of(request).registry
    snapshot = registry.snapshot
    waiting, stale = [], []
    for location in snapshot.clones:
        unknown = registry.unknown_versions(snapshot, location)
        if unknown is not None:
            waiting.append({"repository": str(location), "reason": unknown})
        elif (error := registry.status[location].last_error) is not None:
            stale.append({"repository": str(location), "last_error": error})
    problem = registry.shared.problem()
    body: dict[str, object] = {"ready": not waiting, "waiting": waiting, "stale": stale}
    body["degraded"] = problem is not None
    if problem is not None:
        body["state"] = f"{problem}: serving what it confirmed, publishing no new tag"
    return JSONResponse(body, status_code=503 if waiting else 200)


def _sync_from_peer(state: RegistryState, repository: str | None) -> None:
    for location in state.registry.snapshot.clones:
        if repository is None or location.url == repository:
            state.syncs.request(location, "peer")


def create_app(
    state: RegistryState, background: bool = True, fetch_at_start: bool = False
) -> Starlette:
    """The registry app; with `background`, its lifespan polls the repositories, watches the
    local ones and the provider folders, and reloads registry.yaml when it changes; with
    `fetch_at_start`, it fetches every repository once, in the background, as it starts."""
    registry, live = state.registry, state.live

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, RegistryState]]:
        tasks = []
        if background:
            tasks = [
                asyncio.create_task(Poller(registry).run()),
                asyncio.create_task(watch_repositories(registry, state.syncs)),
                asyncio.create_task(watch_providers(live.providers)),
            ]
            catalog = registry.snapshot.catalog
            if catalog.watch_catalog:
                tasks.append(asyncio.create_task(watch_catalog(catalog.source, live.reload)))
            loop = asyncio.get_running_loop()

            def changed(repository: str | None) -> None:
                # From the listener's thread: another replica changed a repository (None: every
                # one may have, while this replica was not listening).
                loop.call_soon_threadsafe(_sync_from_peer, state, repository)

            registry.shared.listen(changed)
        if fetch_at_start:
            # Served from the clones already; each repository is fetched now, in the background,
            # so a hung Git server delays nothing (its repository says so in /readyz).
            for location in registry.snapshot.clones:
                state.syncs.request(location, "startup")
        yield {STATE_KEY: state}
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await live.close()
        await asyncio.to_thread(registry.shared.close)
        state.fresh_reads.close()
        state.syncs.close()

    routes = [
        # First: a busy network mirror answers many requests a second from its answer cache, and
        # every route tried before the right one costs a regular expression match.
        Route(
            f"{MIRROR_PREFIX}/{{hostname}}/{{namespace}}/{{type}}/{{file}}",
            mirror_routes.serve,
            methods=["GET", "HEAD"],
        ),
        Route("/.well-known/terraform.json", discovery.terraform_json),
        Route(f"{_MODULE}/versions", modules.versions),
        Route(f"{_MODULE}/{{version}}/download", modules.download),
        Route(
            f"{ARCHIVES_PREFIX}/{{namespace}}/{{name}}/{{system}}/{{file}}",
            modules.archive,
            methods=["GET", "HEAD"],
        ),
        Route(f"{_PROVIDER}/versions", provider_routes.versions),
        Route(f"{_PROVIDER}/{{version}}/download/{{os}}/{{arch}}", provider_routes.download),
        Route(
            f"{FILES_PREFIX}/{{namespace}}/{{type}}/{{version}}/{{file}}",
            provider_routes.files,
            methods=["GET", "HEAD"],
        ),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/v1/status", status.status),
        Route("/metrics", status.metrics),
        Route("/v1/webhooks/{forge}", webhooks.receive, methods=["POST"]),
    ]
    return Starlette(
        routes=routes,
        exception_handlers=HANDLERS,
        lifespan=lifespan,
        middleware=[Middleware(BufferedBodies)],
    )
