"""`/v1/status` (per repository: the last sync, the last error, what last updated it, and the
published tags that moved or were deleted) and `/metrics` (the same, for Prometheus)."""

from __future__ import annotations

from dataclasses import asdict

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gitreg.metrics import exposition
from gitreg.registry import Registry
from gitreg.report import repository_reports


async def status(request: Request) -> JSONResponse:
    registry: Registry = request.app.state.registry
    return JSONResponse({"repositories": [asdict(r) for r in repository_reports(registry)]})


async def metrics(request: Request) -> Response:
    registry: Registry = request.app.state.registry
    body = exposition(registry, request.app.state.webhook_counts)
    return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")
