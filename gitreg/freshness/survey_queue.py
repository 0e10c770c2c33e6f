"""Surveys asked for by the interval and by webhooks: at most one running and one waiting per
source, whatever arrives, as the sync queue bounds a repository's syncs.

A flood of repository events for one organization costs one survey under way and one after
it; the one after matters, since an event that arrives during a listing may name a repository
that listing began too early to see. A survey that changes the modules served swaps the next
world in when a request for it asks (`apply`): the interval's rounds apply theirs once, at the
end of a round. Bookkeeping happens on the event loop, so it needs no lock."""

from __future__ import annotations

import asyncio
import logging
from typing import NamedTuple

from gitreg.catalog.specs import SourceSpec
from gitreg.freshness.live import LiveCatalog
from gitreg.sources import persisted

log = logging.getLogger(__name__)


class _Waiting(NamedTuple):
    future: asyncio.Future[bool]
    spec: SourceSpec
    apply: bool


class SurveyQueue:
    def __init__(self, live: LiveCatalog) -> None:
        self.live = live
        self.coalesced = 0  # requests folded into a survey already waiting
        self._running: dict[str, asyncio.Task[bool]] = {}
        self._waiting: dict[str, _Waiting] = {}
        self._closed = False

    def request(self, spec: SourceSpec, apply: bool = True) -> asyncio.Future[bool]:
        """A survey of `spec` that starts after this call: the one waiting, if any, or a new
        one. Its result says whether the modules the source serves changed; with `apply`, such a
        change is served before the result is set. Once closed, the result is False. Call on the
        event loop."""
        if self._closed:
            refused: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            refused.set_result(False)
            return refused
        key = persisted.identity(spec)
        if key not in self._running:
            return self._start(key, spec, apply)
        waiting = self._waiting.get(key)
        if waiting is not None:
            self.coalesced += 1
            # The latest spec (a reload may have changed its filters), applied if any asks.
            self._waiting[key] = _Waiting(waiting.future, spec, waiting.apply or apply)
            return waiting.future
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting[key] = _Waiting(future, spec, apply)
        return future

    def busy(self) -> bool:
        return bool(self._running or self._waiting)

    def close(self) -> None:
        """At a stop: no more surveys; those under way are cancelled (their threads end
        with their listing), the waiting ones get False."""
        self._closed = True
        for waiting in self._waiting.values():
            if not waiting.future.done():
                waiting.future.set_result(False)
        self._waiting.clear()
        for task in self._running.values():
            task.cancel()

    def _start(self, key: str, spec: SourceSpec, apply: bool) -> asyncio.Task[bool]:
        task = asyncio.create_task(self._survey(spec, apply))
        self._running[key] = task
        task.add_done_callback(lambda done: self._finished(key, done))
        return task

    async def _survey(self, spec: SourceSpec, apply: bool) -> bool:
        try:
            changed = await asyncio.to_thread(self.live.current.sources.survey, spec)
        except Exception:  # a bug: said, and the source surveyed again at its interval
            log.exception("%s: discovery failed", spec)
            return False
        if changed and apply:
            await self.live.surveyed()
        return changed

    def _finished(self, key: str, done: asyncio.Task[bool]) -> None:
        del self._running[key]
        waiting = self._waiting.pop(key, None)
        if waiting is None:
            return
        if self._closed:
            if not waiting.future.done():
                waiting.future.set_result(False)
            return
        started = self._start(key, waiting.spec, waiting.apply)

        def copy(ran: asyncio.Task[bool]) -> None:
            if waiting.future.done():
                return
            if ran.cancelled():
                waiting.future.set_result(False)
            else:
                waiting.future.set_result(ran.result())

        started.add_done_callback(copy)
