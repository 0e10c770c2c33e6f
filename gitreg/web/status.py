"""`/v1/status`: per repository, the last sync, the last error, what last updated it, and the
published tags that moved or were deleted."""

from __future__ import annotations

from dataclasses import asdict

from starlette.requests import Request
from starlette.responses import JSONResponse

from gitreg.registry import Registry
from gitreg.report import repository_reports


async def status(request: Request) -> JSONResponse:
    registry: Registry = request.app.state.registry
    return JSONResponse({"repositories": [asdict(r) for r in repository_reports(registry)]})
