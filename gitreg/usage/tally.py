"""Installs counted off the request path, written in batches by a thread of its own.

A request appends one event to a deque, nothing more; the thread reads the client from each
event's User-Agent, sums the events by row and writes them to the store in one batch every few
seconds, adding to what is there, and deletes rows past the retention, a bounded number a pass.

A store out of reach loses that batch's counts, never a request: the loss is counted (events
and batches) for `/v1/status` and `/metrics`. The events waiting are bounded: past
`MOST_PENDING`, a new one is dropped and counted as lost. At shutdown the last counts are
written before the store is closed."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from gitreg.catalog.settings import DownloadSettings
from gitreg.errors import StateUnavailable
from gitreg.pacing import background_thread
from gitreg.state.download_counts import DAY, Download, DownloadStore, Kind, today
from gitreg.usage.clients import client_of

log = logging.getLogger(__name__)

WRITE_EVERY = 2.0  # seconds between two batches
MOST_PENDING = 200_000  # events held between two batches; past it, they are lost
_Event = tuple[Kind, str, str, str, str | None, int]  # kind, address, version, who, UA, day
FORGET_AT_ONCE = 5_000  # rows past the retention deleted a pass, at most


@dataclass(frozen=True)
class TallyStatus:
    """What `/v1/status` shows of the counting."""

    enabled: bool
    counted: int  # installs counted since start
    written: int  # of them, written to the store
    pending: int  # held in memory, for the next batch
    lost_events: int  # counted but never written: store out of reach, or too many pending
    lost_batches: int  # batches the store refused
    forgotten: int  # rows deleted past the retention since start
    problem: str | None  # why the last batch was lost, until one is written


class DownloadTally:
    """Counts in memory for `store`, written by a thread of its own once `start`ed;
    `settings` is read at each count and each pass, so that a reload's apply at once."""

    def __init__(
        self,
        store: DownloadStore,
        settings: Callable[[], DownloadSettings],
        every: float = WRITE_EVERY,
        most_pending: int = MOST_PENDING,
    ) -> None:
        self.store = store
        self.settings = settings
        self.every = every
        self.most_pending = most_pending
        self._events: deque[_Event] = deque()
        # Who installed what since the last batch was taken, and in the batch before: what the
        # store may not hold yet (`lately`).
        self._lately: set[tuple[Kind, str, str, str]] = set()
        self._before: set[tuple[Kind, str, str, str]] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._writing = threading.Lock()  # one batch at a time: the thread's, or a test's
        self.counted = self.dropped = 0  # the event loop's alone
        self.written = self.lost_in_batches = self.lost_batches = self.forgotten = 0
        self.problem: str | None = None

    def count(
        self, kind: Kind, address: str, version: str, principal: str, user_agent: str | None
    ) -> None:
        """One install of `version` of `address` by `principal` (its name), with the client
        its User-Agent names; nothing when counting is off. Called from the event loop; never
        blocks, and leaves all else to the writer."""
        if not self.settings().enabled:
            return
        self.counted += 1
        events = self._events
        if len(events) >= self.most_pending:
            self.dropped += 1
            return
        events.append((kind, address, version, principal, user_agent, int(time.time() // DAY)))
        self._lately.add((kind, address, version, principal))

    def lately(self, kind: Kind, address: str, version: str, principal: str) -> bool:
        """Whether `principal` installed `version` of `address` since the batch before the
        last was written: what the store may not hold yet."""
        key = (kind, address, version, principal)
        return key in self._lately or key in self._before

    def start(self) -> None:
        """Start the writer thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="gitreg-downloads", daemon=True)
            self._thread.start()

    def close(self, timeout: float | None = None) -> None:
        """Write what is pending, stop the writer and close the store (blocks, at most
        `timeout` s for the writer)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        else:
            self.write()
        self.store.close()

    def write(self) -> None:
        """Write the events waiting as one batch, now; lost (and counted so) when the store is
        out of reach."""
        with self._writing:
            # What the batch before held is in the store now, or lost with it.
            self._before, self._lately = self._lately, set()
            batch = self._batch()
            if not batch:
                return
            events = sum(batch.values())
            try:
                self.store.add(batch)
            except StateUnavailable as exc:
                self.lost_in_batches += events
                self.lost_batches += 1
                if self.problem is None:
                    log.warning("download counts lost (%d installs): %s", events, exc)
                self.problem = str(exc)
                return
            self.written += events
            if self.problem is not None:
                log.info("download counts are written again")
            self.problem = None

    def _batch(self) -> dict[Download, int]:
        """The events waiting, summed by row; those appended meanwhile wait for the next."""
        events, batch = self._events, dict[Download, int]()
        clients: dict[str | None, tuple[str, str]] = {}
        for _ in range(len(events)):
            kind, address, version, principal, user_agent, day = events.popleft()
            client = clients.get(user_agent)
            if client is None:
                client = clients[user_agent] = client_of(user_agent)
            key = Download(kind, address, version, principal, *client, day)
            batch[key] = batch.get(key, 0) + 1
        return batch

    def forget(self) -> None:
        """Delete a bounded number of rows older than the retention."""
        retention = self.settings().retention
        try:
            self.forgotten += self.store.forget_before(
                today() - int(retention // DAY), FORGET_AT_ONCE
            )
        except StateUnavailable as exc:
            log.debug("old download counts not deleted: %s", exc)

    def status(self) -> TallyStatus:
        return TallyStatus(
            enabled=self.settings().enabled,
            counted=self.counted,
            written=self.written,
            pending=len(self._events),
            lost_events=self.dropped + self.lost_in_batches,
            lost_batches=self.lost_batches,
            forgotten=self.forgotten,
            problem=self.problem,
        )

    def _run(self) -> None:
        background_thread()
        passes = 0
        while not self._stop.wait(self.every):
            self.write()
            if passes % 60 == 0:  # the retention is in days: a pass every few minutes will do
                self.forget()
            passes += 1
        self.write()
