"""The baseline: a bare Starlette app under the same Hypercorn, answering a fixed versions body."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

_BODY = {"modules": [{"versions": [{"version": f"1.{i}.0"} for i in range(20, 0, -1)]}]}


async def versions(request: Request) -> JSONResponse:
    return JSONResponse(_BODY)


async def download(request: Request) -> JSONResponse:
    location = "/v1/archives/bench/mod/generic/" + "0" * 40 + ".tar.gz"
    return JSONResponse({"location": location}, headers={"X-Terraform-Get": location})


app = Starlette(
    routes=[
        Route("/v1/modules/{namespace}/{name}/{system}/versions", versions),
        Route("/v1/modules/{namespace}/{name}/{system}/{version}/download", download),
    ]
)
