"""Reads of a provider's release list on its forge, asked by its interval and by webhooks (a
release event, a tag push): at most one running and one waiting per provider, whatever arrives,
as the survey queue bounds a source's surveys.

Nothing waits on these reads: a start serves what cache_dir holds of each provider's releases at
once, and the first reads run here, beside the requests. The one waiting matters, since a release
published while a read lists may come too late for that listing. Bookkeeping happens on the event
loop, so it needs no lock."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from gitreg.providers.hosted import Providers

log = logging.getLogger(__name__)

DUE_EVERY = 1.0  # seconds between two looks at which providers' intervals have passed

ProviderKey = tuple[str, str]


class ReleaseReads:
    def __init__(self, served: Callable[[], Providers]) -> None:
        self.served = served  # the providers served now: a reload replaces them
        self.coalesced = 0  # requests folded into a read already waiting
        self._running: dict[ProviderKey, asyncio.Task[None]] = {}
        self._waiting: dict[ProviderKey, asyncio.Future[None]] = {}
        self._closed = False

    def request(self, key: ProviderKey) -> asyncio.Future[None]:
        """A read of the provider `key` that starts after this call: the one waiting, if any, or
        a new one. Done when it ended (or, once closed, at once). Call on the event loop."""
        if self._closed:
            refused: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            refused.set_result(None)
            return refused
        if key not in self._running:
            return self._start(key)
        waiting = self._waiting.get(key)
        if waiting is not None:
            self.coalesced += 1
            return waiting
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[key] = future
        return future

    def busy(self) -> bool:
        return bool(self._running or self._waiting)

    async def run(self) -> None:
        """Ask a read of each provider whose interval has passed (at once, at a start: none was
        read yet), until cancelled."""
        while True:
            for key in self.served().due_forges():
                if key not in self._running:
                    self.request(key)
            await asyncio.sleep(DUE_EVERY)

    def close(self) -> None:
        """At a stop: no more reads; those under way are cancelled (their threads end with their
        download), the waiting ones are done."""
        self._closed = True
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_result(None)
        self._waiting.clear()
        for task in self._running.values():
            task.cancel()

    def _start(self, key: ProviderKey) -> asyncio.Task[None]:
        task = asyncio.create_task(self._read(key))
        self._running[key] = task
        task.add_done_callback(lambda done: self._finished(key))
        return task

    async def _read(self, key: ProviderKey) -> None:
        try:
            await asyncio.to_thread(self.served().read_forge, key)
        except Exception:  # a bug: said, and the release list read again at its interval
            log.exception("provider %s/%s: reading its forge's releases failed", *key)

    def _finished(self, key: ProviderKey) -> None:
        del self._running[key]
        waiting = self._waiting.pop(key, None)
        if waiting is None:
            return
        if self._closed:
            if not waiting.done():
                waiting.set_result(None)
            return

        def copy(ran: asyncio.Task[None]) -> None:
            if not waiting.done():
                waiting.set_result(None)

        self._start(key).add_done_callback(copy)
