"""Remote service discovery: `/.well-known/terraform.json`."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

SERVICES = {"modules.v1": "/v1/modules/", "providers.v1": "/v1/providers/"}


async def terraform_json(request: Request) -> JSONResponse:
    # Service URLs must end with "/": Terraform joins paths onto them.
    return JSONResponse(SERVICES)
