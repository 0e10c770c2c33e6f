"""Kept answers sent before routing: a GET or HEAD of a path whose answer is kept for the world
served is answered here, once its route says it is still current and the gate admits the reader.
A kept answer still goes through everything a request relies on: its request id and access line
(`request_ids.py`), the headers every answer carries (`answer_headers.py`), the gate with the
questions its handler asked, the mirror's counts, and the install a download answer counts. A
HEAD gets the same headers, no body. Which cache serves what: docs/how-it-works/internals.md."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from gitreg.web import access
from gitreg.web.errors import HANDLERS
from gitreg.web.state import STATE_KEY, RegistryState, world_read
from gitreg.web.usage import count_download


class KeptRoutes:
    """Pure ASGI, before the router: a GET or HEAD whose answer is kept is answered here."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        state: RegistryState | None = scope.get("state", {}).get(STATE_KEY)
        if state is None:  # an app without the registry's lifespan (tests of the middleware)
            await self.app(scope, receive, send)
            return
        world = state.current.world
        answer = state.kept.get(world, scope["path"])
        if answer is None or not answer.route.current(answer, state, world):
            await self.app(scope, receive, send)
            return
        world_read(scope, world)  # the world the gate and, on a refusal, its page read
        scope["route"] = answer.matched
        request = Request(scope, receive)
        try:
            principal = None
            if world.gate.on and answer.targets:
                principal = await access.admit_all(request, answer.targets)
            made = answer.route.made(answer, scope, state, world.gate, principal)
        except Exception as exc:  # the gate's no (or a defect: a 500), as the handlers answer
            await _refused(request, exc, send)
            return
        if made is None:
            await self.app(scope, receive, send)
            return
        headers, body = made
        counted = answer.route.counted
        if counted is not None:
            state.mirror_counts[counted] += 1
        if answer.download is not None:
            count_download(state, scope, answer.download, principal)
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send(
            {"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body}
        )


async def _refused(request: Request, exc: Exception, send: Send) -> None:
    """The gate's no, answered as the app's exception handlers answer it (`web/errors.py`)."""
    handler: Callable[[Request, Exception], Awaitable[Response]] | None = None
    for cls in type(exc).__mro__:
        if cls in HANDLERS:
            handler = HANDLERS[cls]
            break
    assert handler is not None  # Exception is there
    response = await handler(request, exc)
    await response(request.scope, request.receive, send)
