"""The app's exception handlers: gitreg's exceptions as JSON errors, or a page for a person.

Clients get JSON `{"errors": [...]}`, never a traceback; a person (a page's error, or a browser
that asked for an address with no page) gets a page that says what happened and what to do
(`web/error_pages.py`). Some routes answer their own errors, the OCI API, the token endpoint and
MCP among them: ARCHITECTURE.md lists them."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gitreg.errors import (
    ArchiveError,
    ArchiveTooLarge,
    AuthUnavailable,
    ClientError,
    ClientGone,
    Forbidden,
    KeyUnavailable,
    NotFound,
    NotReadYet,
    OriginBusy,
    OriginError,
    Revoked,
    SourceError,
    TooManyRequests,
    Unauthorized,
)
from gitreg.mirror.origin_work import RETRY_BUSY
from gitreg.repeated_causes import RepeatedCauses
from gitreg.web.error_pages import error_page, for_person

log = logging.getLogger(__name__)
# A 503 repeats for every client until its cause goes: one line a minute for each, with a count.
unavailable = RepeatedCauses(log)


def error_response(
    status: int, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse({"errors": [message]}, status_code=status, headers=headers)


def client_status(exc: ClientError) -> int:
    if isinstance(exc, Revoked):
        return 410
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, Unauthorized):
        return 401
    if isinstance(exc, Forbidden):
        return 403
    if isinstance(exc, TooManyRequests):
        return 429
    return 400


async def _answer(
    request: Request,
    exc: Exception,
    status: int,
    message: str,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """JSON for a client; a page for a person, saying the same in a person's words."""
    if for_person(request, exc):
        checking = isinstance(exc, AuthUnavailable)
        return await error_page(request, status, message, headers, checking)
    return error_response(status, message, headers)


async def client_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ClientError)
    status = client_status(exc)
    # A client without credentials is told how to send them (RFC 6750); a webhook is not.
    asks_token = status == 401 and not request.url.path.startswith("/v1/webhooks/")
    headers = {"WWW-Authenticate": 'Bearer realm="gitreg"'} if asks_token else None
    if isinstance(exc, TooManyRequests):
        headers = {"Retry-After": str(exc.retry_after)}
    return await _answer(request, exc, status, str(exc), headers)


async def auth_unavailable(request: Request, exc: Exception) -> Response:
    # Who the client is cannot be told now: neither a yes nor a final no.
    log.warning("%s %s: %s", request.method, request.url.path, exc)
    assert isinstance(exc, AuthUnavailable)
    retry = {"Retry-After": str(exc.retry_after)}
    return await _answer(request, exc, 503, f"cannot check credentials now: {exc}", retry)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = exc.detail if exc.status_code != 404 else f"no such endpoint: {request.url.path}"
    return await _answer(request, exc, exc.status_code, message, exc.headers)


async def upstream_error(request: Request, exc: Exception) -> Response:
    # The client asked for something real that we cannot produce right now: not its fault. A
    # repository not read yet is the registry starting (or its Git server down, said by the
    # fetch), not a fault of this request.
    level = logging.WARNING if isinstance(exc, NotReadYet) else logging.ERROR
    unavailable.log(level, str(exc), "%s %s: %s", request.method, request.url.path, exc)
    return await _answer(
        request, exc, 503, f"temporarily unavailable: {exc}", {"Retry-After": "10"}
    )


async def archive_refused(request: Request, exc: Exception) -> Response:
    # Over a limit the operator set: permanent, so no Retry-After; the message names the limit.
    log.warning("%s %s: %s", request.method, request.url.path, exc)
    return error_response(413, f"the registry refuses to serve this archive: {exc}")


async def origin_error(request: Request, exc: Exception) -> Response:
    # A read-through miss that the provider's origin registry could not fill: a bad gateway.
    log.warning("%s %s: %s", request.method, request.url.path, exc)
    return error_response(502, f"the origin registry failed: {exc}", {"Retry-After": "30"})


async def origin_busy(request: Request, exc: Exception) -> Response:
    # Read-through's threads are taken (a slow or stalled origin): refused now, never queued.
    log.warning("%s %s: %s", request.method, request.url.path, exc)
    return error_response(503, str(exc), {"Retry-After": str(RETRY_BUSY)})


async def internal_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, ClientGone):  # no answer reaches it: nothing for the server log but a line
        log.debug(
            "%s %s: the client's connection failed: %s", request.method, request.url.path, exc
        )
        return error_response(500, "the client's connection failed")
    log.exception("%s %s failed", request.method, request.url.path)
    return await _answer(request, exc, 500, "internal error; the server log has the details")


HANDLERS = {
    ClientError: client_error,
    HTTPException: http_error,
    SourceError: upstream_error,
    AuthUnavailable: auth_unavailable,
    ArchiveTooLarge: archive_refused,
    ArchiveError: upstream_error,
    KeyUnavailable: upstream_error,
    OriginError: origin_error,
    OriginBusy: origin_busy,
    Exception: internal_error,
}
