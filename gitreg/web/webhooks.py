"""Webhook endpoints: verify the forge's signature, answer 202 at once, refresh in the background
only the repositories the payload names."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gitreg.errors import NotFound
from gitreg.registry import Registry
from gitreg.webhooks import (
    PARSERS,
    Unauthorized,
    authorised,
    matching_repositories,
    parse_body,
    verifier,
)

log = logging.getLogger(__name__)


async def receive(request: Request) -> Response:
    forge = request.path_params["forge"]
    parse = PARSERS.get(forge)
    if parse is None:
        raise NotFound(f"no webhook for {forge!r}; known: {', '.join(PARSERS)}")
    body = await request.body()  # bounded by BufferedBodies
    headers = {k.lower(): v for k, v in request.headers.items()}
    push = parse(headers, parse_body(body))
    registry: Registry = request.app.state.registry
    candidates = matching_repositories(registry.catalog, push.urls)
    verified, known = authorised(registry.catalog, candidates, verifier(forge, headers, body))
    counts: Counter[tuple[str, str]] = request.app.state.webhook_counts
    counts[(forge, "accepted" if known else "unauthorized")] += 1
    if not known:
        raise Unauthorized(f"the {forge} webhook's signature does not match a configured secret")
    if not push.triggers:
        return JSONResponse({"refreshing": [], "ignored": f"event {push.event!r}"}, 202)
    tasks: set[asyncio.Task[bool]] = request.app.state.webhook_tasks
    for location in verified:
        task = asyncio.create_task(asyncio.to_thread(registry.sync_repo, location, "webhook"))
        tasks.add(task)  # held until done: the event loop keeps only weak references
        task.add_done_callback(tasks.discard)
    log.info(
        "%s webhook (%s): refreshing %s",
        forge,
        push.event,
        ", ".join(map(str, verified)) or "nothing",
    )
    return JSONResponse({"refreshing": [str(loc) for loc in verified]}, 202)
