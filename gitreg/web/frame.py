"""What every page is rendered with: the frame around its own content.

The frame holds the registry's hostname, who reads it, the address of the sign-in page that
brings the person back here, and the headers every page carries; and the page an error becomes
for a person."""

from __future__ import annotations

import datetime
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse

from gitreg.auth.principal import Principal
from gitreg.auth.sessions import COOKIE, expires_of
from gitreg.pages.render import PAGES
from gitreg.web import access
from gitreg.web.return_path import return_path, sign_in_url
from gitreg.web.state import world_of

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


def here(request: Request) -> str:
    """Where the person is: this request's path and query, as the browser sent them (on the
    sign-in page, where it will send them back to)."""
    if request.url.path == "/signin":
        return return_path(request.query_params.get("next"))
    path = request.scope.get("raw_path") or request.url.path.encode()
    query = request.scope.get("query_string", b"")
    text = path.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")
    return return_path(text)


def html(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    """A page, with what every page shows: the hostname, who reads it, the search box (`query`:
    what it holds) and a sign-in link that comes back here."""
    reader = values.pop("reader", None)
    values.setdefault("query", "")
    login = access.gate_of(request).login
    back_to = here(request)
    body = PAGES.render(
        template,
        hostname=world_of(request).catalog.server.hostname,
        auth_on=access.gate_of(request).on,
        reader=reader.name if isinstance(reader, Principal) else reader,
        sign_in_url=sign_in_url(here(request)),
        signing_in=request.url.path == "/signin",
        signed_in_until=_until(request) if reader is not None else "",
        provider=login.settings.name if login is not None else "",
        provider_url="/signin/provider"
        + ("?" + urlencode({"next": back_to}) if back_to != "/" else ""),
        **values,
    )
    headers = {**SECURITY_HEADERS, "Cache-Control": "no-store"}
    return HTMLResponse(body, status_code=status, headers=headers)


def _provider_url(back_to: str) -> str:
    """ "Sign in with <provider>", coming back to `back_to`."""
    return "/signin/provider" + ("?" + urlencode({"next": back_to}) if back_to != "/" else "")


def _until(request: Request) -> str:
    """When the browser's session ends, as its cookie says (for showing; the gate checks it)."""
    expires = expires_of(request.cookies.get(COOKIE, ""))
    if expires is None:
        return ""
    return datetime.datetime.fromtimestamp(expires, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


async def session_reader(request: Request) -> Principal | None:
    """Who reads a page: the signed-in browser's principal; None when anonymous (or when the
    registry is open to all)."""
    return await access.gate_of(request).reader(None, access.session_of(request))
