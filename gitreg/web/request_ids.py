"""The outermost middleware: a request id on every log line, and the access log.

Every request gets an id (the client's `X-Request-Id` when it is sane, else a new one), returned
in the response's `X-Request-Id` and carried by every log line the request causes; with the
access log on, one line per request is written here. Pure ASGI and cheap: without the access log
it costs a header scan, a contextvar set and one header added. The access log names the route
template and the path without its query string, so a signed URL's signature never reaches a
line; headers other than User-Agent are never read for it, so neither is a token."""

from __future__ import annotations

import itertools
import logging
import os
import re
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gitreg.errors import ClientGone
from gitreg.logs import REQUEST_ID
from gitreg.pacing import request_arrived

HEADER = b"x-request-id"
MAX_LENGTH = 128
# What proxies and tracers send (UUIDs, hex, `Root=1-5759e988-...`), and nothing that could
# break a line, a quote or a field separator.
_SANE = re.compile(rb"[A-Za-z0-9._:=+/@-]{1,%d}" % MAX_LENGTH)
_PATH_MOST = 1024  # characters of a path kept in a line
_AGENT_MOST = 256

access_log = logging.getLogger("gitreg.access")


def sane_request_id(value: bytes) -> str | None:
    """The client's request id when it is safe to log and echo: 1 to 128 ASCII letters, digits
    or `._:=+/@-`; None otherwise (a new one is made)."""
    return value.decode("ascii") if _SANE.fullmatch(value) else None


def new_request_id() -> str:
    """16 hex digits: this process's random prefix and a count (cheaper than 8 random bytes a
    request, and as unique: the prefix differs between processes, restarts and forks)."""
    return f"{_prefix}{next(_count) & 0xFFFFFFFF:08x}"


def _new_prefix() -> None:
    global _prefix, _count
    _prefix, _count = os.urandom(4).hex(), itertools.count()


_prefix, _count = "", itertools.count()
_new_prefix()
os.register_at_fork(after_in_child=_new_prefix)  # workers forked from one process differ too


class RequestIds:
    """An exception out of the app stops here: Starlette's ServerErrorMiddleware, inside this
    one, has answered 500 and our handler has logged the traceback with the request id;
    re-raised, it would only be logged again by Hypercorn, without the id."""

    def __init__(self, app: ASGIApp, access: bool = False) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_arrived()  # background work keeps to its CPU budget while requests arrive
        request_id = None
        for name, value in scope["headers"]:
            if name == HEADER:
                request_id = sane_request_id(value)
                break
        if request_id is None:
            request_id = new_request_id()
        # Not reset afterwards: under Hypercorn each request runs in a task of its own.
        REQUEST_ID.set(request_id)
        header = (HEADER, request_id.encode())
        if not self.access:

            async def send_with_id(message: Message) -> None:
                if message["type"] == "http.response.start":
                    message["headers"] = [*message.get("headers", ()), header]
                await _sent(send, message)

            try:  # noqa: SIM105 - cheaper than suppress(), on every request (bench.request_ids)
                await self.app(scope, receive, send_with_id)
            except Exception:
                pass
            return
        started = time.perf_counter()
        status = 0
        sent = 0

        async def send_counted(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), header]
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await _sent(send, message)

        try:
            await self.app(scope, receive, send_counted)
        except Exception:
            pass
        finally:  # a request cut short (the client left, shutdown's grace ran out) is logged too
            _log_access(scope, request_id, status, sent, time.perf_counter() - started)


async def _sent(send: Send, message: Message) -> None:
    """`message` sent; the client's connection failing meanwhile (it left, or sent a record that
    does not decrypt: an OSError from the transport) is ClientGone, which web/errors.py logs as
    the client's business, at DEBUG, not as a server error with its traceback."""
    try:
        await send(message)
    except OSError as exc:
        raise ClientGone(f"{type(exc).__name__}: {exc}") from None


def _log_access(scope: Scope, request_id: str, status: int, sent: int, seconds: float) -> None:
    route = scope.get("route")
    template = getattr(route, "path", None)  # None: no route matched (a 404)
    client = scope.get("client")
    agent = ""
    for name, value in scope["headers"]:
        if name == b"user-agent":
            agent = value.decode("latin-1")[:_AGENT_MOST]
            break
    method = scope["method"]
    path = scope["path"][:_PATH_MOST]
    address = client[0] if client else "-"
    duration_ms = round(seconds * 1000, 2)
    access_log.info(
        '%s "%s %s" %d %d %.1fms "%s"',
        address,
        method,
        path,
        status,
        sent,
        duration_ms,
        agent,
        extra={
            "method": method,
            "route": template,
            "path": path,
            "status": status,
            "bytes": sent,
            "duration_ms": duration_ms,
            "client": address,
            "user_agent": agent,
            "request_id": request_id,  # as the handler's filter would add it: any handler
        },
    )
