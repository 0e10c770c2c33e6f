"""Signing a browser in with a pasted client token, and out again.

The cookie is `HttpOnly`, `SameSite=Strict`, `Path=/` and always `Secure`: browsers keep a Secure
cookie from http://localhost and http://127.0.0.1 (trustworthy origins), so tests and `gitreg
demo` work over plain HTTP, while over plain HTTP to any other host the browser drops it, as it
should (a session sent in clear text could be taken), and the sign-in page says why. Both POSTs
must come from this registry's own origin (`auth/own_origin.py`: hostname or public_url, never
the Host header). A person lands back on the page that needed the sign-in (`?next=`,
`web/return_path.py`) through `/signin?done=1`, which tells a browser that did not keep the
cookie why. See docs/private.md."""

from __future__ import annotations

import datetime
from urllib.parse import parse_qs, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from gitreg.auth.own_origin import is_own, own_origin, reached_loopback
from gitreg.auth.sessions import COOKIE, SESSION_TTL, expires_of
from gitreg.errors import ClientError, Forbidden
from gitreg.web import access
from gitreg.web.frame import SECURITY_HEADERS, html, session_reader
from gitreg.web.pages import page
from gitreg.web.return_path import MAX_LENGTH, return_path
from gitreg.web.state import world_of

MAX_TOKEN = 4096  # characters: a pasted token, never a document


@page
async def sign_in_page(request: Request) -> Response:
    reader = await session_reader(request)
    back_to = return_path(request.query_params.get("next"))
    gate_on = access.gate_of(request).on
    done = bool(request.query_params.get("done"))
    if done and (reader is not None or not gate_on):
        return _back_to(back_to)  # signed in: back where the person was
    problem = ""
    if done:
        problem = (
            "Your browser did not keep the session cookie. It is marked Secure: open this"
            " registry over HTTPS (or as http://localhost) to sign in."
        )
    ends = ""
    expires = expires_of(request.cookies.get(COOKIE, "")) if reader is not None else None
    if expires is not None:
        ends = datetime.datetime.fromtimestamp(expires, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return html(
        request,
        "signin.html",
        reader=reader,
        problem=problem,
        ends=ends,
        hours=SESSION_TTL // 3600,
        back_to=back_to,
    )


@page
async def sign_in(request: Request) -> Response:
    _same_origin(request)
    gate = access.gate_of(request)
    token, back_to = _form(await request.body())
    if not gate.on:  # no one to sign in as
        return _back_to(back_to)
    if not token:
        raise ClientError("paste a token to sign in")
    signed = await gate.sign_in(token, access.client_of(request))
    if signed is None:
        return html(
            request,
            "signin.html",
            status=401,
            reader=None,
            problem=(
                "This token is not one of this registry's client tokens (auth.tokens). CI"
                " identity tokens and tokens only a Git server knows cannot open a browser"
                " session."
            ),
            ends="",
            hours=SESSION_TTL // 3600,
            back_to=back_to,
        )
    _, value = signed
    done = "/signin?done=1"
    response = _back_to(done if back_to == "/" else done + "&" + urlencode({"next": back_to}))
    response.set_cookie(
        COOKIE,
        value,
        max_age=SESSION_TTL,
        path="/",
        secure=True,
        httponly=True,
        samesite="strict",
    )
    return response


@page
async def sign_out(request: Request) -> Response:
    _same_origin(request)
    value = request.cookies.get(COOKIE)
    if value is not None:
        # The session itself ends (a copy of the cookie opens nothing after), not only the
        # browser's cookie.
        await access.gate_of(request).sign_out(value)
    response = _back_to("/")
    response.delete_cookie(COOKIE, path="/", secure=True, httponly=True, samesite="strict")
    return response


def _form(body: bytes) -> tuple[str, str]:
    """The `token` and `next` fields of a urlencoded form (no multipart parser: a token needs
    none); `next` made a path of this registry."""
    if len(body) > 2 * MAX_TOKEN + 3 * MAX_LENGTH:  # either, urlencoded
        raise ClientError("paste a token to sign in (this is far longer than one)")
    try:
        fields = parse_qs(body.decode("ascii"), max_num_fields=4, strict_parsing=False)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ClientError("the sign-in form must be sent urlencoded") from exc
    token = (fields.get("token") or [""])[0].strip()
    return token, return_path((fields.get("next") or [""])[0])


def _back_to(path: str) -> RedirectResponse:
    # 303: the browser follows with a GET, so a reload does not post the token again.
    return RedirectResponse(path, status_code=303, headers=SECURITY_HEADERS)


def _same_origin(request: Request) -> None:
    """Refuse a POST another site's page made (login CSRF, forced sign-out). Browsers send
    Origin with every POST; it must be the registry's own (`auth/own_origin.py`), scheme and
    port included, and never what the Host header claims. A client that sends neither Origin
    nor Sec-Fetch-Site is refused too."""
    origin = request.headers.get("origin")
    if origin is None:
        if request.headers.get("sec-fetch-site") == "same-origin":
            return
        raise Forbidden("this form must be sent from this registry's own sign-in page")
    catalog = world_of(request).catalog
    own = own_origin(catalog.server.hostname, catalog.server.public_url)
    reached = reached_loopback(request.scope.get("scheme", ""), request.scope.get("server"))
    if not is_own(origin, own, reached):
        raise Forbidden(
            f"this form must be sent from this registry's own sign-in page, at {own}"
            " (public_url in registry.yaml, when people open it at another address)"
        )
