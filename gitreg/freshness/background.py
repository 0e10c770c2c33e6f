"""The background work of a serving registry: polling, watching local repositories, provider
folders and registry.yaml, and the event-driven syncs. Started by the app's lifespan; stopped
when a stop is asked for (SIGTERM), before the requests in flight are drained, so that a
stopping server starts no new fetch, and again, harmlessly, when the lifespan ends.

Of several workers on one host (`gitreg serve --workers N`), only the first polls, fetches at
start-up, watches local repositories and surveys the sources at their interval; every worker
follows what the others fetch into the shared clones (`shared_cache.py`) and survey
(`shared_sources.py`), and each handles the webhooks and clients that reach it."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from functools import partial

from gitreg.freshness.cooldowns import CHECK_EVERY, publish_when_due
from gitreg.freshness.live import LiveCatalog
from gitreg.freshness.poller import Poller
from gitreg.freshness.release_reads import ReleaseReads
from gitreg.freshness.shared_cache import follow_shared_cache
from gitreg.freshness.shared_sources import follow_shared_surveys
from gitreg.freshness.survey_queue import SurveyQueue
from gitreg.freshness.surveying import survey_sources
from gitreg.freshness.sync_queue import SyncQueue
from gitreg.freshness.watching import watch_catalog, watch_repositories
from gitreg.git.location import RepoLocation
from gitreg.modules.index import VersionIndex
from gitreg.modules.read_summary import summarize
from gitreg.modules.sync import ModuleSync
from gitreg.modules.warm_start import WarmStart, warm_start
from gitreg.pacing import UNPACED, Budget, paced
from gitreg.providers.hosted import Providers, watch_providers

log = logging.getLogger(__name__)

INDEX_EVERY = 5.0  # seconds at least between two writes of the persisted index
REQUESTED_AT_ONCE = 4  # start-up syncs asked for between two turns of the event loop


class BackgroundWork:
    """The background work around one module sync (`sync`, whose start-up reads, fetches,
    polls and persisted index it runs), the reloads (`live`) and the event-driven syncs."""

    def __init__(
        self,
        live: LiveCatalog,
        sync: ModuleSync,
        syncs: SyncQueue,
        worker: int | None = None,
        budget: Budget = UNPACED,
    ) -> None:
        self.live = live
        self.sync = sync
        self.budget = budget  # the process's: polls and the docs warming keep to it
        self.syncs = syncs
        self.surveys = SurveyQueue(live)  # sources surveyed: at their interval, by webhook
        # Providers' release lists read from their forges: at their interval, by webhook.
        self.release_reads = ReleaseReads(self._providers)
        self.worker = worker  # which of several workers (None: the only server process)
        self.fetcher = worker in (None, 0)
        self.poller = Poller(sync, budget=budget)  # run by the one that fetches
        self._tasks: list[asyncio.Task[None]] = []
        self._stopped = False
        self.cooldown_every = CHECK_EVERY  # seconds at most between looks for versions due

    def start(self) -> None:
        """Poll the repositories, watch the local ones, the provider folders and registry.yaml
        (unless watch_catalog is off); on the event loop."""
        sync = self.sync
        self.budget.start()  # the clone readers, from the event loop: at the server's priority
        self._tasks = [asyncio.create_task(watch_providers(self._providers))]
        # Every worker reads its providers' forges, as each rescans its folders: a release one
        # fetched into the shared cache_dir is not fetched again by the others.
        self._tasks.append(asyncio.create_task(self.release_reads.run()))
        if self.fetcher:
            self._tasks.append(asyncio.create_task(self.poller.run()))
            self._tasks.append(asyncio.create_task(watch_repositories(sync, self.syncs)))
            # The sources too, at their interval; a webhook's survey runs where it arrived.
            self._tasks.append(asyncio.create_task(survey_sources(self.surveys)))
            every = lambda: self.cooldown_every  # noqa: E731 (a test may shorten it)
            self._tasks.append(asyncio.create_task(publish_when_due(sync, self.syncs, every)))
        if self.worker is not None:
            self._tasks.append(asyncio.create_task(follow_shared_cache(sync, self.syncs)))
            self._tasks.append(asyncio.create_task(follow_shared_surveys(self.live)))
        catalog = sync.snapshot.catalog
        if catalog.freshness.watch_catalog:
            self._tasks.append(asyncio.create_task(watch_catalog(catalog.source, self.live.reload)))
        loop = asyncio.get_running_loop()

        def changed(repository: str | None) -> None:
            # From the listener's thread: another replica changed a repository (None: every one
            # may have, while this replica was not listening).
            loop.call_soon_threadsafe(self._sync_from_peer, repository)

        sync.shared.listen(changed)

    def _providers(self) -> Providers:
        return self.live.current.world.side.providers

    def _sync_from_peer(self, repository: str | None) -> None:
        if self._stopped:
            return
        for location in self.sync.snapshot.clones:
            if repository is None or location.url == repository:
                self.syncs.request(location, "peer")

    def start_up(self, settled: Callable[[], None] | None = None) -> None:
        """Serve what the clones hold, then fetch every repository, in the background: the
        port answers meanwhile, and a repository not read yet answers 503 (`settled`: called
        once the clones and the release folders are read)."""
        self.budget.start()
        self._tasks.append(asyncio.create_task(self._read_at_start(settled)))

    async def _read_at_start(self, settled: Callable[[], None] | None) -> None:
        try:
            await self._read_clones_at_start()
        finally:
            # Whatever happened: the collector, off since the start (gitreg.process.heap), comes
            # back on, and what was read is frozen (one cheap call, never cancelled half-way).
            if settled is not None:
                settled()

    async def _read_clones_at_start(self) -> None:
        sync = self.sync
        snapshot = sync.snapshot
        log.info(
            "reading %d repositories for %d modules",
            len(snapshot.clones),
            len(snapshot.catalog.modules),
        )
        started = time.monotonic()
        # First what the persisted index still vouches for, in one swap: served in seconds.
        try:
            warm = await asyncio.to_thread(warm_start, sync)
        except Exception:  # a bug, or a line no check foresaw: the clones are read instead
            log.exception("cannot serve from the persisted index; reading every clone")
            warm = WarmStart(frozenset(), 0, 0.0)
        if warm.served:
            log.info("start-up: %s", warm)
        others = [location for location in snapshot.clones if location not in warm.served]
        uncloned = await asyncio.to_thread(sync.read_clones, others)
        after = sync.snapshot
        seconds = time.monotonic() - started
        # Paced: at start-up every entry changed, and comparing them all held the loop long
        # (bench/RESULTS.md: bench.scale).
        summary = await paced(
            partial(summarize, snapshot.index, after.index, len(after.clones), 0, seconds)
        )
        cloned = f"; {uncloned} not cloned yet (fetched next)" if uncloned else ""
        log.info("start-up: read the clones: %s%s", summary.totals(), cloned)
        if self.fetcher:
            self._tasks.append(asyncio.create_task(self._keep_index()))
        await asyncio.to_thread(self._providers().refresh)
        self.fetch_all()

    async def _keep_index(self) -> None:
        """Write the persisted index after the start-up read, then, after syncs that changed
        something, at most every INDEX_EVERY seconds: off the event loop, never on a request's
        path. Of several workers, the first alone (the one that fetches)."""
        while True:
            await self._write_index()
            await asyncio.sleep(INDEX_EVERY)

    async def _write_index(self, last: bool = False) -> None:
        reads = self.sync.reads
        if reads is None or not (reads.dirty or last):
            return
        started, writes = time.monotonic(), reads.writes
        try:
            snapshot = self.sync.snapshot
            if last:  # stopping: at once
                await asyncio.to_thread(reads.flush, snapshot)
            else:  # paced: long at 10,000 modules (bench/RESULTS.md: bench.scale)
                await paced(partial(reads.write, snapshot))
        except OSError as exc:  # a full disk, say: the next start reads the clones
            log.warning("cannot write the persisted index %s: %s", reads.path, exc)
            return
        except Exception:  # a bug: the index is only a head start, serving goes on
            log.exception("cannot write the persisted index %s", reads.path)
            return
        if reads.writes == writes:
            return  # nothing was left to write
        seconds = time.monotonic() - started
        # The first write says where the index is and what it costs; the others, at debug.
        level = logging.INFO if writes == 0 else logging.DEBUG
        log.log(level, "persisted index written to %s in %.1f s", reads.path, seconds)

    def fetch_all(self) -> None:
        """Fetch every repository once, in the background (start-up: served from the clones
        already, so a hung Git server delays nothing; its repository says so in /readyz). Of
        several workers, the first alone: the others read what it fetched."""
        if not self.fetcher:
            return
        before, started = self.sync.snapshot.index, time.monotonic()
        locations = list(self.sync.snapshot.clones)
        self._tasks.append(asyncio.create_task(self._fetched(locations, before, started)))

    async def _fetched(
        self, locations: list[RepoLocation], before: VersionIndex, started: float
    ) -> None:
        """Fetch each repository; once all are done, what they read, in one line (each module
        at DEBUG). The syncs are asked for a few at a time, the requests' turn between: 1,000
        asked at once held the event loop for tens of milliseconds."""
        syncs = []
        for n, location in enumerate(locations, 1):
            syncs.append(self.syncs.request(location, "startup"))
            if n % REQUESTED_AT_ONCE == 0:
                await asyncio.sleep(0)
        for sync in syncs:
            # One at a time, not gather: a stop cancels this task, not the syncs. Nor all at
            # once: asyncio.wait adds a callback to each, and takes it back, in one go.
            await asyncio.wait((sync,))
        failed = sum(1 for s in syncs if s.cancelled() or s.exception() or not s.result())
        after = self.sync.snapshot.index
        seconds = time.monotonic() - started
        summary = await paced(partial(summarize, before, after, len(syncs), failed, seconds))
        log.info("start-up fetch: %s", summary)

    async def stop(self) -> None:
        """Cancel the pollers and watchers and refuse new syncs; fetches under way are left to
        their threads (a shutdown must not wait on a slow Git server; `serve` ends their `git`
        processes once it stops). Idempotent."""
        if not self._stopped:
            self._stopped = True
            if self._tasks:
                log.info("background work stopped: no more polls, watches or syncs")
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.syncs.close()
        self.surveys.close()
        self.release_reads.close()

    def wait_ended(self, timeout: float) -> bool:
        """After `stop`: wait for the syncs under way to end, then the polls (up to `timeout`
        seconds each); whether they did. `serve` ends their git instead; a test's server,
        which cannot end only its own, waits, so that none runs or logs after it."""
        return self.syncs.under_way.wait(timeout) and self.poller.under_way.wait(timeout)

    async def close(self) -> None:
        """At the end of the lifespan: stopped, the persisted index written once more (so that
        a restart serves what this process read last), and the shared state's connections
        closed."""
        await self.stop()
        if self.fetcher:
            await self._write_index(last=True)
        await asyncio.to_thread(self.sync.shared.close)
