"""`/v1/status` (per repository: the last sync, the last error, what last updated it, and the
published tags that moved or were deleted; per hosted provider: its versions and the releases
refused, and why; the hosts read-through asked and how they did) and `/metrics` (the same, and
the network mirror's requests, for Prometheus)."""

from __future__ import annotations

from dataclasses import asdict

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gitreg.metrics import ProviderCollector, exposition
from gitreg.provider_report import origin_reports, provider_reports
from gitreg.registry import Registry
from gitreg.report import repository_reports
from gitreg.web.live import ProviderSide


async def status(request: Request) -> JSONResponse:
    registry: Registry = request.app.state.registry
    side: ProviderSide = request.app.state.live.side
    origin = side.read_through.origin if side.read_through else None
    return JSONResponse(
        {
            "repositories": [asdict(r) for r in repository_reports(registry)],
            "providers": [asdict(r) for r in provider_reports(side.providers)],
            "mirror_origins": [asdict(h) for h in origin_reports(origin)],
        }
    )


async def metrics(request: Request) -> Response:
    registry: Registry = request.app.state.registry
    side: ProviderSide = request.app.state.live.side
    origin = side.read_through.origin if side.read_through else None
    providers = ProviderCollector(side.providers, origin, request.app.state.mirror_counts)
    body = exposition(registry, request.app.state.webhook_counts, providers)
    return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")
