"""Syncs asked for by events: at most one running and one waiting per repository.

The events are webhooks, watched repositories, clients asking for a version we lack and the
start-up fetch; the syncs run on threads of their own. Coalescing bounds what a flood costs: 400
copies of one webhook cause one fetch under way and one after it, not 400. The one after it
matters: an event that arrives during a fetch may name a tag that fetch started too early to see.
A slow or hung Git server holds only Git's threads: archive builds and every other repository's
sync go on. All bookkeeping happens on the event loop, so it needs no lock. See
docs/how-it-works/internals.md."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import NamedTuple, Protocol

from gitreg.freshness.under_way import UnderWay
from gitreg.git.location import RepoLocation
from gitreg.modules.status import Mechanism
from gitreg.pacing import UNPACED, Budget, background_thread

log = logging.getLogger(__name__)

WORKERS = 16  # repositories synced at the same time; a hung one holds one thread, not a slot each


class RepositorySync(Protocol):
    """What the queue runs: one repository synced (`ModuleSync.sync_repo`)."""

    def sync_repo(
        self,
        location: RepoLocation,
        mechanism: Mechanism,
        fetch: bool = True,
        expect: Mapping[str, str] | None = None,
    ) -> bool: ...


class _Waiting(NamedTuple):
    """The sync after the running one, and whether a request for it wants a fetch."""

    future: asyncio.Future[bool]
    mechanism: Mechanism
    context: contextvars.Context
    fetch: bool


class SyncQueue:
    def __init__(
        self, sync: RepositorySync, workers: int = WORKERS, budget: Budget = UNPACED
    ) -> None:
        self.sync = sync
        self.budget = budget  # each sync a slice of it
        self.coalesced: Counter[str] = Counter()  # by mechanism: requests folded into another
        self._pool = ThreadPoolExecutor(
            workers, thread_name_prefix="gitreg-git", initializer=background_thread
        )
        self.under_way = UnderWay()  # the syncs running, which `close` does not wait for
        self._running: dict[RepoLocation, asyncio.Future[bool]] = {}
        self._waiting: dict[RepoLocation, _Waiting] = {}
        self._closed = False

    def request(
        self, location: RepoLocation, mechanism: Mechanism, fetch: bool = True
    ) -> asyncio.Future[bool]:
        """A sync of the repository that starts after this call: the one waiting, if any, or a
        new one. Its result says whether it succeeded; once closed (the server is stopping), a
        request gets no sync and its result is False. Without `fetch`, it reads the clone only
        (another worker fetched into it); a waiting sync fetches if any request for it does.
        Call on the event loop."""
        if self._closed:
            refused: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            refused.set_result(False)
            return refused
        if location not in self._running:
            return self._start(location, mechanism, contextvars.copy_context(), fetch)
        waiting = self._waiting.get(location)
        if waiting is not None:
            self.coalesced[mechanism] += 1
            if fetch and not waiting.fetch:
                self._waiting[location] = waiting._replace(fetch=True)
            return waiting.future
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting[location] = _Waiting(future, mechanism, contextvars.copy_context(), fetch)
        return future

    def busy(self) -> bool:
        return bool(self._running or self._waiting)

    def close(self) -> None:
        # A shutdown must not wait for a hung Git server: fetches are killed by their timeout.
        self._closed = True
        for waiting in self._waiting.values():
            _no_sync(waiting.future)
        self._waiting.clear()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _start(
        self,
        location: RepoLocation,
        mechanism: Mechanism,
        context: contextvars.Context,
        fetch: bool,
    ) -> asyncio.Future[bool]:
        # In the context of the request that asked for it: its log lines carry its request id.
        # Its own CPU counts in the background's budget: at 10,000 modules, 16 syncs at once held
        # the interpreter from the requests, a start-up's fetch long.
        one = partial(self.budget.sliced, partial(self.sync.sync_repo, location, mechanism, fetch))
        running = self.under_way.submit(self._pool, context.run, one)
        self._running[location] = running
        running.add_done_callback(lambda done: self._finished(location, done))
        return running

    def _finished(self, location: RepoLocation, done: asyncio.Future[bool]) -> None:
        del self._running[location]
        if not done.cancelled() and done.exception() is not None:
            log.error("syncing %s failed", location, exc_info=done.exception())
        waiting = self._waiting.pop(location, None)
        if waiting is None:
            return
        if self._closed:  # shutting down: the waiters get no sync
            _no_sync(waiting.future)
            return
        started = self._start(location, waiting.mechanism, waiting.context, waiting.fetch)
        _chain(started, waiting.future)


def _no_sync(future: asyncio.Future[bool]) -> None:
    # Not cancelled: a request awaiting it would be cancelled with it, mid-answer.
    if not future.done():
        future.set_result(False)


def _chain(source: asyncio.Future[bool], target: asyncio.Future[bool]) -> None:
    def copy(done: asyncio.Future[bool]) -> None:
        if target.done():
            return
        if done.cancelled():
            target.cancel()
        elif (error := done.exception()) is not None:
            target.set_exception(error)
        else:
            target.set_result(done.result())

    source.add_done_callback(copy)
