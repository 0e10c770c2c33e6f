"""Polling: every repository's tags are listed (no fetch) once an interval, with jitter,
several at a time, and a repository that fails is retried later and later (backoff)."""

from __future__ import annotations

import asyncio
import heapq
import logging
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Protocol

from gitreg.errors import FetchStopped, SourceError
from gitreg.freshness.under_way import UnderWay
from gitreg.git.location import RepoLocation
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.modules.status import Mechanism
from gitreg.pacing import UNPACED, Budget, background_thread

log = logging.getLogger(__name__)

JITTER = 0.1  # each wait is the interval ± 10%, so a thousand repositories never poll in step


class PollingSync(Protocol):
    """What a poll asks of the module sync: the repositories served, and one's remote
    polled (`ModuleSync.poll_repo`); fresh reads ask the same."""

    @property
    def snapshot(self) -> RegistrySnapshot: ...

    def poll_repo(self, location: RepoLocation, mechanism: Mechanism = "poll") -> bool: ...


class Poller:
    def __init__(
        self,
        sync: PollingSync,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        budget: Budget = UNPACED,
    ) -> None:
        self.sync = sync
        self.budget = budget  # each poll a slice of it
        self.clock = clock
        self.rng = rng or random.Random()
        self.due: dict[RepoLocation, float] = {}
        self.failures: dict[RepoLocation, int] = {}
        self.rounds = 0  # polls finished, for tests and benchmarks
        self.under_way = UnderWay()  # the polls running, which a stop does not wait for
        # The due times in order, so a wake-up looks at the repositories due and no others
        # (scanning them all cost the event loop time every second: bench/RESULTS.md,
        # bench.polling).
        # An entry whose time is no longer the repository's (`due`) is dropped when it comes up.
        self._queue: list[tuple[float, int, RepoLocation]] = []
        self._pushed = 0  # entries pushed: ties in time never compare two locations
        self._scheduled_for: object = None  # the clones `schedule` last tracked

    def next_delay(self, location: RepoLocation) -> float:
        """The interval with jitter, doubled for each failure in a row, up to max_backoff."""
        catalog = self.sync.snapshot.catalog
        failures = self.failures.get(location, 0)
        base = min(
            catalog.freshness.refresh_interval * 2.0**failures,
            max(catalog.freshness.max_backoff, catalog.freshness.refresh_interval),
        )
        return base * self.rng.uniform(1 - JITTER, 1 + JITTER)

    def schedule(self) -> None:
        """Track the catalog's repositories: new ones are spread over the first interval."""
        snapshot = self.sync.snapshot
        if snapshot.clones is self._scheduled_for:
            return  # the same repositories (a world is swapped whole: a change is a new mapping)
        self._scheduled_for = snapshot.clones
        now = self.clock()
        current = set(snapshot.clones)
        for location in current - set(self.due):
            self._set_due(
                location, now + self.rng.uniform(0, snapshot.catalog.freshness.refresh_interval)
            )
        for location in set(self.due) - current:
            del self.due[location]
            self.failures.pop(location, None)

    def _set_due(self, location: RepoLocation, due: float) -> None:
        self.due[location] = due
        self._pushed += 1
        heapq.heappush(self._queue, (due, self._pushed, location))

    def _next_due(self, running: set[RepoLocation]) -> tuple[float, RepoLocation] | None:
        """The repository due first that is not being polled, and its time (stale entries of
        the queue dropped on the way; a running one is pushed again when its poll ends)."""
        while self._queue:
            due, _, location = self._queue[0]
            if self.due.get(location) == due and location not in running:
                return due, location
            heapq.heappop(self._queue)
        return None

    def poll(self, location: RepoLocation) -> None:
        """One poll, in a worker thread; reschedules the repository."""
        try:
            self.sync.poll_repo(location)
            failed = self.failures.pop(location, 0)
            if failed:
                log.info("%s: reachable again, after %d failed polls", location, failed)
        except FetchStopped as exc:  # the server is stopping: no outage, and no next poll
            log.info("%s", exc)
            return
        except SourceError as exc:
            self.failures[location] = self.failures.get(location, 0) + 1
            if self.failures[location] == 1:  # once per outage; each poll is in /metrics
                log.warning(
                    "%s: %s; serving the versions known before, polling it again later and"
                    " later (up to max_backoff)",
                    location,
                    exc,
                )
            else:
                log.debug(
                    "poll of %s failed (%d in a row): %s", location, self.failures[location], exc
                )
        except Exception:
            self.failures[location] = self.failures.get(location, 0) + 1
            log.exception("poll of %s failed", location)
        if location in self.due:  # in the queue once the event loop hears the poll ended
            self.due[location] = self.clock() + self.next_delay(location)
        self.rounds += 1

    def _polled(self, running: set[RepoLocation], location: RepoLocation, _: object) -> None:
        running.discard(location)
        due = self.due.get(location)
        if due is not None:
            self._pushed += 1
            heapq.heappush(self._queue, (due, self._pushed, location))

    async def run(self) -> None:
        """Poll until cancelled: at most poll_concurrency repositories at a time."""
        workers = self.sync.snapshot.catalog.freshness.poll_concurrency
        running: set[RepoLocation] = set()
        pool = ThreadPoolExecutor(
            workers, thread_name_prefix="gitreg-poll", initializer=background_thread
        )
        try:
            while True:
                self.schedule()
                now = self.clock()
                while len(running) < workers:
                    first = self._next_due(running)
                    if first is None or first[0] > now:
                        break
                    heapq.heappop(self._queue)
                    location = first[1]
                    running.add(location)
                    poll = partial(self.budget.sliced, partial(self.poll, location))
                    future = self.under_way.submit(pool, poll)
                    future.add_done_callback(partial(self._polled, running, location))
                first = self._next_due(running)
                wait = first[0] - now if first is not None else 1.0
                await asyncio.sleep(min(max(wait, 0.05), 1.0))
        finally:
            # Do not wait for polls under way: a shutdown must not hang on a slow Git server.
            pool.shutdown(wait=False, cancel_futures=True)
