"""Answers prepared for the world served: the hot routes' bodies and headers, kept by path from
the first request that asks, answered before Starlette's routing, and dropped whole at a swap.
A HEAD of a kept path is answered from it too: the same headers, no body.

Only an answer that is the same for everyone the gate admits is kept (discovery, `versions`, an
open namespace's `download`, a provider's `versions`, the mirror's answers without signed URLs):
what was signed for one reader is made per request, as before. A kept answer still goes through
everything a request relies on: its request id and access line (`request_ids.py`), the headers
every answer carries (`answer_headers.py`), the gate with the very questions its handler asks,
the fresh read a `versions` request may be due, and the mirror's counts.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Sequence

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from gitreg.auth.gatekeeper import Gatekeeper
from gitreg.auth.principal import Principal
from gitreg.auth.target import Target
from gitreg.git.location import RepoLocation
from gitreg.providers.hosted import ProviderEntry
from gitreg.web import access
from gitreg.web.errors import HANDLERS
from gitreg.web.prepared_answers import CONTENT_LENGTH, PreparedAnswer, SignedUrls
from gitreg.web.state import STATE_KEY, RegistryState, state_of, world_of, world_read
from gitreg.world.world import World


def keep(
    request: Request,
    response: Response,
    *targets: Target,
    fresh: RepoLocation | None = None,
    provider: tuple[tuple[str, str], ProviderEntry] | None = None,
    counted: tuple[str, str] | None = None,
    cached: tuple[str, bytes] | None = None,
    signed: Sequence[tuple[str, str, str]] = (),
    archive: tuple[str, str] | None = None,
) -> Response:
    """`response`, kept for the next GET of this path in this world; returned as it is.
    `signed`: the URLs in it signed for this reader (path, suffix, and the URL as signed, in the
    order the body has them), which are signed again for each reader that the first of `targets`
    admits; the rest of the answer must be the same for all of them. `archive`: the answer is
    the module archive held in memory under this name, with this Cache-Control (what is kept
    is where to find it, not its bytes: the memory budget holds)."""
    if request.method != "GET" or response.status_code != 200:
        return response
    headers, body = tuple(response.raw_headers), bytes(response.body)
    if archive is not None:
        headers, body = (), b""
    urls = _signed_urls(headers, body, signed) if signed else None
    if signed and urls is None:
        return response
    state = state_of(request)
    route = request.scope.get("route")
    answer = PreparedAnswer(
        headers, body, route, targets, fresh, provider, counted, cached, urls, archive
    )
    state.prepared.keep(world_of(request), state.current.world, request.url.path, answer)
    return response


def _signed_urls(
    headers: tuple[tuple[bytes, bytes], ...], body: bytes, signed: Sequence[tuple[str, str, str]]
) -> SignedUrls | None:
    """The pieces of `body` around each signed URL; None when one is not found once, in order
    (then the answer is not kept)."""
    pieces: list[bytes] = []
    start = 0
    for _, _, url in signed:
        if not url.isascii():  # JSON and headers would write it otherwise than json.dumps
            return None
        encoded = json.dumps(url).encode()
        found = body.find(encoded, start)
        if found < 0 or body.count(encoded) != 1:
            return None
        pieces.append(body[start:found])
        start = found + len(encoded)
    pieces.append(body[start:])
    values = {url.encode("latin-1"): n for n, (_, _, url) in enumerate(signed)}
    made: list[tuple[bytes, bytes | int]] = []
    for name, value in headers:
        made.append(
            (name, CONTENT_LENGTH if name == b"content-length" else values.get(value, value))
        )
    urls = tuple((path, suffix) for path, suffix, _ in signed)
    return SignedUrls(tuple(pieces), urls, tuple(made))


def _made_for(
    signed: SignedUrls, gate: Gatekeeper, principal: Principal
) -> tuple[tuple[tuple[bytes, bytes], ...], bytes]:
    """The headers and body of an answer signed for `principal`."""
    return _assembled(signed, gate.signed_all(signed.urls, principal))


# The same URLs come back for a while (a signature is made once for EXPIRY_STEP seconds, the same
# for each request of one token in them): so does the answer made of them.
@functools.lru_cache(maxsize=1024)
def _assembled(
    signed: SignedUrls, urls: tuple[str, ...]
) -> tuple[tuple[tuple[bytes, bytes], ...], bytes]:
    """The answer's headers (a tuple: it is sent again and again) and body, with these URLs."""
    parts = [signed.pieces[0]]
    for url, piece in zip(urls, signed.pieces[1:], strict=True):
        parts += (json.dumps(url).encode(), piece)
    body = b"".join(parts)
    headers = []
    for name, value in signed.headers:
        if isinstance(value, int):
            value = (
                str(len(body)).encode()
                if value == CONTENT_LENGTH
                else urls[value].encode("latin-1")
            )
        headers.append((name, value))
    return tuple(headers), body


class PreparedRoutes:
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
        answer = state.prepared.get(world, scope["path"])
        if answer is None or not _current(answer, state, world):
            await self.app(scope, receive, send)
            return
        world_read(scope, world)  # the world the gate and, on a refusal, its page read
        scope["route"] = answer.route
        request = Request(scope, receive)
        try:
            made = await _made(request, answer, world, state)
        except Exception as exc:  # the gate's no (or a defect: a 500), as the handlers answer
            await _refused(request, exc, send)
            return
        if made is None:
            await self.app(scope, receive, send)
            return
        headers, body = made
        if answer.counted is not None:
            state.mirror_counts[answer.counted] += 1
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send(
            {"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body}
        )


async def _made(
    request: Request, answer: PreparedAnswer, world: World, state: RegistryState
) -> tuple[Sequence[tuple[bytes, bytes]], bytes] | None:
    """The kept answer for the reader of `request`, once the gate admits them (it raises its
    refusal); None when it must be made by its handler after all."""
    if answer.archive is not None:
        return _held_archive(request.scope, answer.archive, state)
    principal = None
    if world.gate.on and answer.targets:
        principal = await access.admit_all(request, answer.targets)
    if answer.signed is None:
        return answer.headers, answer.body
    if principal is None:  # never so: kept only where the gate names who asks
        return None
    return _made_for(answer.signed, world.gate, principal)


def _held_archive(
    scope: Scope, archive: tuple[str, str], state: RegistryState
) -> tuple[Sequence[tuple[bytes, bytes]], bytes] | None:
    """A held archive's answer, unless the request is conditional or ranged (its handler
    answers those: a 304, or the range) or the archive is no longer held."""
    for key, _ in scope["headers"]:
        if key == b"if-none-match" or key == b"range":
            return None
    return state.held_archives.held_parts(*archive)


def _current(answer: PreparedAnswer, state: RegistryState, world: World) -> bool:
    """Whether the answer still says what its handler would: a mirror answer while its answer
    cache reuses it, a provider's while its entry is served, `versions` while no fresh read is
    due."""
    if answer.cached is not None:
        asked, body = answer.cached
        if world.side.recent_bodies.get(asked) is not body:
            return False
    if answer.provider is not None:
        key, entry = answer.provider
        if world.side.providers.get(*key) is not entry:
            return False
    return answer.fresh is None or not state.fresh_reads.due(answer.fresh)


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
