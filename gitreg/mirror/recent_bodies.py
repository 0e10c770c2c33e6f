"""The network mirror's recent bodies: rendered JSON reused for a few seconds, and work shared by
everyone who asks for it at the same moment. Which cache serves what:
docs/how-it-works/internals.md."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

T = TypeVar("T")

BODY_TTL = 5.0  # seconds an index.json or VERSION.json body is reused


class RecentBodies:
    """Rendered JSON bodies, reused for a few seconds; and any work done once however many ask
    for it at the same moment. The sources behind the mirror read disks and origins, a busy
    mirror gets the same question many times a second, and a cold read-through download must
    hold one worker thread, not one per waiting client."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._known: dict[str, tuple[float, bytes]] = {}
        self._pending: dict[str, asyncio.Future[Any]] = {}

    def get(self, key: str) -> bytes | None:
        known = self._known.get(key)
        return known[1] if known and known[0] > self.clock() else None

    def put(self, key: str, body: bytes) -> None:
        if len(self._known) > 10_000:
            self._known.clear()
        self._known[key] = (self.clock() + BODY_TTL, body)

    async def shared(self, key: str, work: Callable[[], Awaitable[T]]) -> T:
        """`work()`'s result, or its error; callers that ask while it runs share it, and one that
        hangs up does not cancel it for the others."""
        future = self._pending.get(key)
        if future is None:
            future = asyncio.ensure_future(work())
            self._pending[key] = future
            future.add_done_callback(partial(self._done, key))
        result: T = await asyncio.shield(future)
        return result

    def _done(self, key: str, future: asyncio.Future[Any]) -> None:
        if self._pending.get(key) is future:
            del self._pending[key]
        if not future.cancelled():
            future.exception()  # retrieved: no "never retrieved" warning when all waiters left
