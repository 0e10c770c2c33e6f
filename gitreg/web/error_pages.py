"""An error as a person sees it: a page that says what happened and what to do (sign in and
come back, search, try again in a few seconds), in a person's words rather than an API's. A
page's own errors always; any other address only when a browser asked for a page there
(`Accept: text/html`) and no route took it. The API keeps its JSON: Terraform, OpenTofu and
curl never ask for text/html."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from gitreg.auth.principal import Principal
from gitreg.auth.sessions import COOKIE
from gitreg.errors import AuthUnavailable, ClientError
from gitreg.web.frame import here, html, session_reader

PAGE_KEY = "gitreg.page"  # set in a request's scope by the pages' handlers (`web/pages.py`)
_SIGN_IN_STEPS = ("/oauth/", "/signin/provider")  # auth.login's steps a person meets


@dataclass(frozen=True)
class ErrorText:
    heading: str
    what: str  # what happened
    todo: str = ""  # what to do about it


def for_person(request: Request, exc: Exception) -> bool:
    """Whether an error is a page's, or a browser's at an address with no route."""
    if request.scope.get(PAGE_KEY):
        return True
    return isinstance(exc, HTTPException) and "text/html" in request.headers.get("accept", "")


def _sentence(message: str) -> str:
    # Its first letter is made a capital by the stylesheet (`.lead::first-letter`): the text
    # stays the one the API and the log say.
    text = message.strip()
    return text if not text or text.endswith((".", "?", "!")) else text + "."


def _signing_in(request: Request) -> bool:
    """A step of a sign-in through the OpenID provider (auth.login), which a refresh would not
    mend: the person starts again."""
    return request.url.path.startswith(_SIGN_IN_STEPS)


def _text(
    request: Request, status: int, message: str, reader: str | None, checking: bool
) -> ErrorText:
    if _signing_in(request) and status in (400, 503):
        return ErrorText(
            "Sign-in failed" if status == 400 else "Cannot sign in now",
            _sentence(message),
            "Start again: sign in from the page you were on, or run terraform login again.",
        )
    if _signing_in(request) and status == 403:  # a sign-in another site's page started
        return ErrorText(
            "Not started from this registry",
            _sentence(message),
            "Open this registry and choose Sign in, or run terraform login again.",
        )
    if status == 401:
        if request.cookies.get(COOKIE):
            return ErrorText(
                "Sign in again",
                "Your session has ended: you signed out, or it expired.",
                "Sign in again, and you will come back to this page.",
            )
        return ErrorText(
            "Sign in needed",
            "This page is in a private part of this registry.",
            "Sign in with a token that may read it, and you will come back to this page.",
        )
    if status == 403 and request.method == "POST":  # a form another site's page sent
        return ErrorText(
            "Not sent from this registry",
            _sentence(message),
            "Open this registry's own page at that address, and send the form from there.",
        )
    if status == 403:
        if reader is None:
            return ErrorText(
                "Sign in needed",
                "This page is not public.",
                "Sign in with a token that may read it, and you will come back to this page.",
            )
        return ErrorText(
            "Not yours to read",
            f"You are signed in as {reader}, and that token may not read this page.",
            "Sign in with another token, or ask the people who run this registry for access.",
        )
    if status == 404:
        if message.startswith("no such endpoint"):
            return ErrorText("Not found", "There is no page at this address.", _SEARCH)
        return ErrorText("Not found", _sentence(message), _SEARCH)
    if status == 429:
        return ErrorText("Too many tries", _sentence(message), "Wait a minute, then try again.")
    if status == 503 and checking:
        return ErrorText(
            "Cannot check your sign-in now",
            "This registry cannot tell right now whether you may read this page: what it checks"
            " tokens with does not answer.",
            "This page tries again by itself in a few seconds.",
        )
    if status == 503:
        return ErrorText(
            "Not ready yet",
            "This registry is still reading its repositories: it has just started, or a Git"
            " server it reads from does not answer.",
            "This page tries again by itself in a few seconds.",
        )
    if status >= 500:
        return ErrorText(
            "Something went wrong",
            "The registry could not make this page.",
            "Try again; if it happens again, the people who run this registry will find the"
            " details in its log.",
        )
    if status == 405:
        return ErrorText("Not found", "There is no page at this address.", _SEARCH)
    return ErrorText("This address is not right", _sentence(message), _SEARCH)


async def _reader(request: Request) -> Principal | None:
    """Who reads the page, for its header; no one when that cannot be told (the error being
    answered may be that very question)."""
    try:
        return await session_reader(request)
    except (ClientError, AuthUnavailable):
        return None


_SEARCH = "Search for what you are looking for, or see everything this registry serves."


async def error_page(
    request: Request,
    status: int,
    message: str,
    headers: Mapping[str, str] | None = None,
    checking: bool = False,
) -> Response:
    """`checking`: a 503 because who the person is cannot be told now (AuthUnavailable)."""
    reader = None if checking else await _reader(request)
    name = reader.name if reader is not None else None
    text = _text(request, status, message, name, checking)
    # A person is not asked for a Bearer token: the page says how to sign in instead.
    kept = {k: v for k, v in (headers or {}).items() if k.lower() != "www-authenticate"}
    retry = kept.get("Retry-After", "") if status == 503 and not _signing_in(request) else ""
    response = html(
        request,
        "error.html",
        status,
        error=text,
        sign_in=status == 401 or (status == 403 and reader is None),
        refresh=retry,
        back_to=here(request),
        reader=reader,
    )
    response.headers.update(kept)
    return response
