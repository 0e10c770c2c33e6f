"""Answers prepared for the world served: the hot routes' bodies and headers, kept by path from
the first request that asks, answered before Starlette's routing, and dropped whole at a swap.

Only an answer that is the same for everyone the gate admits is kept (discovery, `versions`, an
open namespace's `download`, a provider's `versions`, the mirror's answers without signed URLs):
what was signed for one reader is made per request, as before. A kept answer still goes through
everything a request relies on: its request id and access line (`request_ids.py`), the headers
every answer carries (`answer_headers.py`), the gate with the very questions its handler asks,
the fresh read a `versions` request may be due, and the mirror's counts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from gitreg.auth.target import Target
from gitreg.git.location import RepoLocation
from gitreg.providers.hosted import ProviderEntry
from gitreg.web import access
from gitreg.web.errors import HANDLERS
from gitreg.web.prepared_answers import PreparedAnswer
from gitreg.web.state import STATE_KEY, RegistryState, state_of, world_of, world_read
from gitreg.world.world import World


def keep(
    request: Request,
    response: Response,
    *targets: Target,
    fresh: RepoLocation | None = None,
    provider: tuple[tuple[str, str], ProviderEntry] | None = None,
    counted: tuple[str, str] | None = None,
    cached: str | None = None,
) -> Response:
    """`response`, kept for the next GET of this path in this world; returned as it is."""
    if request.method != "GET" or response.status_code != 200:
        return response
    state = state_of(request)
    answer = PreparedAnswer(
        tuple(response.raw_headers),
        bytes(response.body),
        request.scope.get("route"),
        targets,
        fresh,
        provider,
        counted,
        cached,
    )
    state.prepared.keep(world_of(request), state.current.world, request.url.path, answer)
    return response


class PreparedRoutes:
    """Pure ASGI, before the router: a GET whose answer is kept is answered here."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
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
        if world.gate.on and answer.targets:
            request = Request(scope, receive)
            try:
                for target in answer.targets:
                    await access.admit(
                        request, target.access, target.what, target.namespace, target.git
                    )
            except Exception as exc:
                await _refused(request, exc, send)
                return
        if answer.counted is not None:
            state.mirror_counts[answer.counted] += 1
        await send({"type": "http.response.start", "status": 200, "headers": answer.headers})
        await send({"type": "http.response.body", "body": answer.body})


def _current(answer: PreparedAnswer, state: RegistryState, world: World) -> bool:
    """Whether the answer still says what its handler would: a mirror answer while its answer
    cache reuses it, a provider's while its entry is served, `versions` while no fresh read is
    due."""
    if answer.cached is not None and world.side.answers.get(answer.cached) is not answer.body:
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
