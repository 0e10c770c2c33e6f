"""The one redirect the router makes by itself: a path that names a route once its trailing
slash is removed (or one added) is sent there. Starlette's own (`redirect_slashes`) writes an
absolute URL built from the request's Host header, which the client chose; this one writes the
path alone (a relative Location, RFC 9110), so an answer never names a host gitreg did not."""

from __future__ import annotations

from urllib.parse import quote

from starlette.responses import RedirectResponse
from starlette.routing import Match, Router
from starlette.types import Receive, Scope, Send


class TrailingSlashes:
    """The router's `default`: what no route matched. Set `router.redirect_slashes` False."""

    def __init__(self, router: Router) -> None:
        self.router = router

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        location = _location(scope) if scope["type"] == "http" else None
        if location is not None:
            other = {**scope, "path": _toggled(scope["path"])}
            if any(route.matches(other)[0] != Match.NONE for route in self.router.routes):
                await RedirectResponse(location)(scope, receive, send)
                return
        await self.router.not_found(scope, receive, send)


def _toggled(path: str) -> str:
    return path.rstrip("/") if path.endswith("/") else path + "/"


def _location(scope: Scope) -> str | None:
    """The request's own path (as sent, still escaped) with its trailing slash toggled, and its
    query; None for `/`, and for what would read as another host (`//name`)."""
    raw = scope.get("raw_path")
    path = raw.decode("latin-1") if raw else quote(scope["path"])
    path = path.split("?", 1)[0]
    if path == "/" or not path.startswith("/"):
        return None
    toggled = _toggled(path)
    if not toggled.startswith("/") or toggled.startswith("//"):
        return None
    query = scope.get("query_string", b"").decode("latin-1")
    return f"{toggled}?{query}" if query else toggled
