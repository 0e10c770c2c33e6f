"""The pages people open: the list of modules and providers with its search, a module's page,
a provider's page, and their stylesheet and script. Each shows only what the reader may read."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from gitreg.address import ModuleAddress, ProviderAddress
from gitreg.auth.principal import Principal
from gitreg.errors import ClientError, NotFound, Unauthorized
from gitreg.pages.render import PAGES
from gitreg.pages.views import provider_page
from gitreg.web import access
from gitreg.web.errors import client_status
from gitreg.web.state import state_of

log = logging.getLogger(__name__)

# No inline script or style, nothing from elsewhere but README images over https, no framing.
CSP = (
    "default-src 'self'; img-src 'self' https:; style-src 'self'; script-src 'self';"
    " object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}
_HEADINGS = {400: "Bad request", 401: "Sign in needed", 403: "Not yours to read", 404: "Not found"}

Handler = Callable[[Request], Awaitable[Response]]


def html(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    """A page, with what every page shows: the hostname and who reads it."""
    state = state_of(request)
    reader = values.pop("reader", None)
    body = PAGES.render(
        template,
        hostname=state.registry.snapshot.catalog.hostname,
        auth_on=access.gate_of(request) is not None,
        reader=reader.name if isinstance(reader, Principal) else reader,
        **values,
    )
    headers = {**SECURITY_HEADERS, "Cache-Control": "no-store"}
    return HTMLResponse(body, status_code=status, headers=headers)


def page(handler: Handler) -> Handler:
    """A page's errors as pages: a client's mistake is a 4xx page saying what, never a 500."""

    @functools.wraps(handler)
    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except ClientError as exc:
            status = client_status(exc)
            reader = await session_reader(request)
            return html(
                request,
                "error.html",
                status,
                heading=_HEADINGS.get(status, "Bad request"),
                message=str(exc),
                sign_in=isinstance(exc, Unauthorized) or (status == 403 and reader is None),
                reader=reader,
            )

    return wrapped


async def session_reader(request: Request) -> Principal | None:
    """Who reads a page: the signed-in browser's principal; None when anonymous (or when the
    registry is open to all)."""
    gate = access.gate_of(request)
    cookie = access.session_of(request)
    if gate is None or cookie is None:
        return None
    return gate.session_principal(cookie)


@page
async def provider(request: Request) -> Response:
    try:
        address = ProviderAddress.of(request.path_params["namespace"], request.path_params["type"])
    except ValueError as exc:
        raise ClientError(str(exc)) from exc
    await access.admit(request, "read", f"provider {address}", address.namespace)
    providers = state_of(request).live.side.providers
    entry = providers.get(address.namespace, address.type)
    if entry is None:
        raise NotFound(f"no provider {address} on this registry")
    hostname = state_of(request).registry.snapshot.catalog.hostname
    view = provider_page(hostname, entry, providers.public_keys())
    return html(request, "provider.html", page=view, reader=await session_reader(request))


async def static(request: Request) -> Response:
    found = PAGES.static.get(request.path_params["file"])
    if found is None:
        raise NotFound(f"no such file: {request.url.path}")
    headers = {"ETag": found.etag, "Cache-Control": "public, max-age=31536000, immutable"}
    if found.etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    return Response(found.body, media_type=found.media_type, headers=headers)


def module_address(request: Request) -> ModuleAddress:
    params = request.path_params
    try:
        return ModuleAddress.parse(params["namespace"], params["name"], params["system"].lower())
    except ValueError as exc:
        raise ClientError(str(exc)) from exc
