"""Request bodies read whole and bounded before the app answers: too large is a 413.

Reading first also keeps HTTP/2 connections whole: Hypercorn 0.18 drops a connection, every
stream on it, when DATA arrives for a stream already answered, as when a handler answers before
reading the body (`process/connections.py` now drops such DATA: the bodies of GET and HEAD, not
read here). A body whose Content-Length is FAR_OVER times the limit is refused at once, unread,
and its connection closed: reading gigabytes to refuse them would tie up the server. One a
little over is still read and dropped, so that its HTTP/2 connection survives. See
docs/reference/http-api.md."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 1 << 20
FAR_OVER = 8


class BufferedBodies:
    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        if _declared_length(scope) > FAR_OVER * self.max_bytes:
            await _too_large(send, self.max_bytes, close=True)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            size += len(message.get("body", b""))
            if size <= self.max_bytes:
                chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        if size > self.max_bytes:
            await _too_large(send, self.max_bytes)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        await self.app(scope, replay, send)


def _declared_length(scope: Scope) -> int:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else 0  # the server refuses a malformed one
    return 0


async def _too_large(send: Send, limit: int, close: bool = False) -> None:
    body = json.dumps({"errors": [f"request body over {limit} bytes"]}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
