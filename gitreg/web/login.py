"""Signing in with the OpenID provider (auth.login) over HTTP.

Terraform's authorization and token endpoints (login.v1), the sign-in page's "Sign in with
<provider>", and the callback the provider sends the person back to. A sign-in starts only from
this registry's pages or from `terraform login`, never from another site's page. A refusal is a
page, but one of `terraform login`'s after the provider goes to Terraform's listener, as a code
whose exchange is refused with the reason (Terraform waits on after an error without a code).
The token endpoint answers RFC 6749's JSON errors. The cookie of a sign-in under way is
`SameSite=Lax`: the provider's redirect back is a cross-site navigation."""

from __future__ import annotations

import logging
from html import escape
from urllib.parse import parse_qs, urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from gitreg.auth.login import CALLBACK, COOKIE, PENDING_TTL, CliRequest, Login
from gitreg.auth.sessions import COOKIE as SESSION_COOKIE
from gitreg.auth.sessions import SESSION_TTL
from gitreg.errors import AuthUnavailable, Forbidden, LoginRefused, NotFound
from gitreg.web import access
from gitreg.web.frame import SECURITY_HEADERS
from gitreg.web.pages import page
from gitreg.web.return_path import return_path

log = logging.getLogger(__name__)
MAX_FORM = 8192  # bytes: Terraform's token request is a few hundred
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def _login(request: Request) -> Login:
    login = access.gate_of(request).login
    if login is None:
        raise NotFound("this registry has no sign-in with an OpenID provider (auth.login)")
    return login


@page
async def authorize(request: Request) -> Response:
    """Terraform's authorization request, in the person's browser: checked, then on to the
    OpenID provider."""
    login = _login(request)
    _not_from_another_site(request)
    cli = CliRequest.parse(request.query_params)
    url, pending = await login.start(access.client_of(request), cli, "/")
    return _to_provider(url, pending)


@page
async def sign_in_with_provider(request: Request) -> Response:
    """The sign-in page's "Sign in with <provider>": the same sign-in, ending in a session."""
    login = _login(request)
    _not_from_another_site(request)
    back_to = return_path(request.query_params.get("next"))
    url, pending = await login.start(access.client_of(request), None, back_to)
    return _to_provider(url, pending)


@page
async def callback(request: Request) -> Response:
    """The person back from the provider: Terraform's listener gets its code; a browser that
    signed in for the pages gets its session and goes back to where it was."""
    gate = access.gate_of(request)
    login = _login(request)
    cookie = request.cookies.get(COOKIE)
    try:
        signed = await login.finish(cookie, request.query_params)
    except (LoginRefused, AuthUnavailable) as exc:
        cli = login.ended(cookie, request.query_params)
        if cli is None:  # a person at the pages: the refusal is their page
            raise
        # Terraform waits on its listener: the refusal goes there, or it would wait for ever.
        log.info("sign-in for terraform login refused: %s", exc)
        return _ended(login.refusal_redirect(cli, str(exc)))
    if signed.cli is not None:
        response: Response = RedirectResponse(
            login.code_redirect(signed), status_code=302, headers={**SECURITY_HEADERS, **_NO_STORE}
        )
    else:
        value = await gate.login_session(signed.principal, signed.identity)
        response = _continue_to(_done(signed.back_to))
        response.set_cookie(
            SESSION_COOKIE,
            value,
            max_age=SESSION_TTL,
            path="/",
            secure=True,
            httponly=True,
            samesite="strict",
        )
    response.delete_cookie(COOKIE, path=CALLBACK, secure=True, httponly=True, samesite="lax")
    return response


async def token(request: Request) -> Response:
    """Terraform's code exchanged for a token (RFC 6749 4.1.3; no client secret: Terraform is a
    public client, and PKCE binds the code to it)."""
    login = _login(request)
    body = await request.body()
    try:
        value, lifetime = await login.exchange(_form(body), access.client_of(request))
    except LoginRefused as exc:
        answer = {"error": exc.error, "error_description": str(exc)}
        return JSONResponse(answer, status_code=400, headers=_NO_STORE)
    issued = {"access_token": value, "token_type": "bearer", "expires_in": lifetime}
    return JSONResponse(issued, headers=_NO_STORE)


def _not_from_another_site(request: Request) -> None:
    """Refuse a sign-in another site's page started (a link, an image, a frame): it would spend
    the sign-ins a minute of everyone behind the person's address. Browsers say where a request
    comes from in Sec-Fetch-Site: `none` when `terraform login` opens the address, `same-origin`
    from these pages. A client that sends none is no browser a page can steer."""
    if request.headers.get("sec-fetch-site") in ("cross-site", "same-site"):
        raise Forbidden(
            "a sign-in starts from this registry's own pages or from `terraform login`, not from"
            " a link on another site: open this registry and choose Sign in"
        )


def _ended(listener: str) -> Response:
    """The browser sent on to Terraform's listener with a refused sign-in's code; the sign-in
    under way is over."""
    response = RedirectResponse(
        listener, status_code=302, headers={**SECURITY_HEADERS, **_NO_STORE}
    )
    response.delete_cookie(COOKIE, path=CALLBACK, secure=True, httponly=True, samesite="lax")
    return response


def _to_provider(url: str, pending: str) -> Response:
    response = RedirectResponse(url, status_code=302, headers={**SECURITY_HEADERS, **_NO_STORE})
    response.set_cookie(
        COOKIE,
        pending,
        max_age=PENDING_TTL,
        path=CALLBACK,
        secure=True,
        httponly=True,
        samesite="lax",  # sent on the provider's redirect back, a cross-site navigation
    )
    return response


def _done(back_to: str) -> str:
    return "/signin?" + urlencode({"done": "1", **({"next": back_to} if back_to != "/" else {})})


def _continue_to(path: str) -> Response:
    """A page that moves on to `path` at once. Not a redirect: a redirect would carry on the
    provider's cross-site navigation, on which the browser withholds the SameSite=Strict session
    cookie just set; a refresh of a page of this registry's own is a same-site navigation."""
    target = escape(path, quote=True)
    body = (
        '<!doctype html><html><head><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="0;url={target}"><title>Signed in</title></head>'
        f'<body><p>Signed in. <a href="{target}">Continue</a></p></body></html>'
    )
    return HTMLResponse(body, headers={**SECURITY_HEADERS, **_NO_STORE})


def _form(body: bytes) -> dict[str, str]:
    if len(body) > MAX_FORM:
        raise LoginRefused("the token request is far longer than one")
    try:
        fields = parse_qs(body.decode("ascii"), max_num_fields=16, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        raise LoginRefused("the token request must be sent urlencoded") from None
    return {key: values[0] for key, values in fields.items() if len(values) == 1}
