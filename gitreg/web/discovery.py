"""Remote service discovery: `/.well-known/terraform.json`."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

from gitreg.terraform_services import SERVICES


async def terraform_json(request: Request) -> JSONResponse:
    # Service URLs must end with "/": Terraform joins paths onto them.
    return JSONResponse(SERVICES)
