"""Remote service discovery: `/.well-known/terraform.json`, with `login.v1` under auth.login.

`login.v1` names gitreg's own authorization and token endpoints for `terraform login`,
Terraform's client id and the ports its local listener may take."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gitreg.terraform_services import SERVICES, login_v1
from gitreg.web.access import gate_of
from gitreg.web.hot_routes import DISCOVERY, admit

LOGIN_V1 = login_v1()


async def terraform_json(request: Request) -> Response:
    admission = await admit(request, DISCOVERY, None)
    # Service URLs must end with "/": Terraform joins paths onto them.
    if gate_of(request).login is None:
        return admission.keep(request, JSONResponse(SERVICES), None)
    return admission.keep(request, JSONResponse({**SERVICES, "login.v1": LOGIN_V1}), None)
