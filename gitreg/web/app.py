"""The ASGI app: a route table over the registry, and a lifespan that keeps the index fresh."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from gitreg.archive_cache import ArchiveCache
from gitreg.locations import ARCHIVES_PREFIX
from gitreg.registry import Registry, refresh_forever
from gitreg.web import discovery, modules
from gitreg.web.bodies import BufferedBodies
from gitreg.web.errors import HANDLERS

_MODULE = "/v1/modules/{namespace}/{name}/{system}"


async def healthz(request: Request) -> JSONResponse:
    registry: Registry = request.app.state.registry
    return JSONResponse({"status": "ok", "modules": len(registry.index)})


def create_app(registry: Registry, archives: ArchiveCache, refresh: bool = True) -> Starlette:
    """The registry app; with `refresh`, the lifespan re-fetches every refresh_interval."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        task = asyncio.create_task(refresh_forever(registry)) if refresh else None
        yield
        if task:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    routes = [
        Route("/.well-known/terraform.json", discovery.terraform_json),
        Route(f"{_MODULE}/versions", modules.versions),
        Route(f"{_MODULE}/{{version}}/download", modules.download),
        Route(
            f"{ARCHIVES_PREFIX}/{{namespace}}/{{name}}/{{system}}/{{file}}",
            modules.archive,
            methods=["GET", "HEAD"],
        ),
        Route("/healthz", healthz),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers=HANDLERS,
        lifespan=lifespan,
        middleware=[Middleware(BufferedBodies)],
    )
    app.state.registry = registry
    app.state.archives = archives
    return app
