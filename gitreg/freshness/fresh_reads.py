"""Fresh reads: a `versions` request lists the remote's tags first when none was checked lately.

A `versions` request for a repository no read has checked in the last `fresh_reads` seconds first
lists the remote's tags (`git ls-remote`; a fetch only when they differ from the clone's),
waiting a bounded time, so that a tag pushed a moment ago is installable without a webhook.
Terraform asks `versions` before `download`, so this is where a client's read must be fresh. One
check per repository at a time, shared by every request that wants it; a remote that fails is
checked again later and later; within the window a read costs a clock read and a dictionary
lookup, and the index is read as always. See docs/how-it-works/internals.md."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from gitreg.errors import SourceError
from gitreg.freshness.poller import PollingSync
from gitreg.git.location import RepoLocation

log = logging.getLogger(__name__)

WAIT = 2.0  # seconds a request waits for a check; Terraform gives up on a registry after 10
WORKERS = 8  # checks at the same time, each of another repository


class FreshReads:
    def __init__(
        self,
        sync: PollingSync,
        clock: Callable[[], float] = time.monotonic,
        wait: float = WAIT,
    ) -> None:
        self.sync = sync
        self.clock = clock
        self.wait = wait
        self._lock = threading.Lock()
        self._fresh_until: dict[RepoLocation, float] = {}
        self._failures: dict[RepoLocation, int] = {}
        self._running: dict[RepoLocation, Future[None]] = {}
        # Its own threads: a slow Git server holds these, not the ones archives are built in.
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="gitreg-fresh")

    def due(self, location: RepoLocation) -> bool:
        """Whether a read of the repository should check its remote first (no I/O)."""
        if self.sync.snapshot.catalog.freshness.fresh_reads <= 0:
            return False
        return self.clock() >= self._fresh_until.get(location, float("-inf"))

    def checking(self, location: RepoLocation) -> bool:
        return location in self._running

    async def check(self, location: RepoLocation) -> None:
        """Check the repository's remote, or join the check under way, for at most `wait`
        seconds; a check that takes longer goes on in the background."""
        future = self._start(location)
        if future is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), self.wait)
        except TimeoutError:
            log.info("%s: still checking its tags; answering with the versions known", location)

    def close(self) -> None:
        # Do not wait for checks under way: a shutdown must not hang on a slow Git server.
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _start(self, location: RepoLocation) -> Future[None] | None:
        with self._lock:
            running = self._running.get(location)
            if running is None and self.due(location):
                running = self._pool.submit(self._check, location)
                self._running[location] = running
            return running

    def _check(self, location: RepoLocation) -> None:
        failed = True
        try:
            self.sync.poll_repo(location, "fresh-read")
            failed = False
        except SourceError as exc:
            log.debug("fresh read of %s: %s", location, exc)
        except Exception:  # a background check: it must not end the checks to come
            log.exception("fresh read of %s failed", location)
        finally:
            catalog = self.sync.snapshot.catalog
            with self._lock:
                failures = self._failures.pop(location, 0) + 1 if failed else 0
                delay = catalog.freshness.fresh_reads
                if failures:
                    self._failures[location] = failures
                    delay = min(delay * 2.0**failures, max(catalog.freshness.max_backoff, delay))
                self._fresh_until[location] = self.clock() + delay
                del self._running[location]
