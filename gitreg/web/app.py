"""The ASGI app: a route table over the registry, and a lifespan that keeps the index fresh and
applies registry.yaml live (`live.py`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from gitreg.archive_cache import ArchiveCache
from gitreg.locations import ARCHIVES_PREFIX
from gitreg.poller import Poller
from gitreg.providers import Providers, watch_providers
from gitreg.registry import Registry
from gitreg.watching import watch_catalog, watch_repositories
from gitreg.web import discovery, modules, status, webhooks
from gitreg.web import mirror as mirror_routes
from gitreg.web import providers as provider_routes
from gitreg.web.bodies import BufferedBodies
from gitreg.web.errors import HANDLERS
from gitreg.web.live import LiveCatalog, ProviderSide
from gitreg.web.mirror import MIRROR_PREFIX
from gitreg.web.providers import FILES_PREFIX

log = logging.getLogger(__name__)

_MODULE = "/v1/modules/{namespace}/{name}/{system}"
_PROVIDER = "/v1/providers/{namespace}/{type}"


async def healthz(request: Request) -> JSONResponse:
    registry: Registry = request.app.state.registry
    return JSONResponse({"status": "ok", "modules": len(registry.index)})


def create_app(
    registry: Registry,
    archives: ArchiveCache,
    providers: Providers | None = None,
    background: bool = True,
) -> Starlette:
    """The registry app; with `background`, its lifespan polls the repositories, watches the
    local ones and the provider folders, and reloads registry.yaml when it changes."""
    providers = providers or Providers(registry.catalog, registry)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        tasks = []
        if background:
            tasks = [
                asyncio.create_task(Poller(registry).run()),
                asyncio.create_task(watch_repositories(registry)),
                asyncio.create_task(watch_providers(live.providers)),
            ]
            if registry.catalog.watch_catalog:
                source = registry.catalog.source
                tasks.append(asyncio.create_task(watch_catalog(source, live.reload)))
        yield
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await live.close()

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
        Route("/v1/status", status.status),
        Route("/metrics", status.metrics),
        Route("/v1/webhooks/{forge}", webhooks.receive, methods=["POST"]),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers=HANDLERS,
        lifespan=lifespan,
        middleware=[Middleware(BufferedBodies)],
    )
    app.state.registry = registry
    app.state.archives = archives
    live = LiveCatalog(app, ProviderSide.build(registry.catalog, providers))
    app.state.live = live  # and, through it, providers, mirror and mirror_answers
    app.state.webhook_tasks = set()
    app.state.webhook_counts = Counter()
    app.state.mirror_counts = Counter()  # (kind, result): kept across catalog reloads
    return app
