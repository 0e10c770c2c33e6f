"""Read-through's own threads: a cap per origin, a deadline, and busy refused at once.

They are a bounded pool apart from the event loop's default executor (which reloads
registry.yaml and rescans providers), with a cap on the threads one origin may hold, a deadline
for each piece of work (connect and every read in it), and a refusal at once when full: an origin
that stalls costs its share of threads, never a queue the rest waits in."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import TypeVar

from gitreg.errors import OriginBusy

T = TypeVar("T")

RETRY_BUSY = 5  # the Retry-After, in seconds, of a request refused because read-through is full

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "gitreg_origin_deadline", default=None
)


def remaining() -> float | None:
    """Seconds left to the work this thread does for an origin; None: it has no deadline (as for
    `gitreg mirror sync`)."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - time.monotonic()


def carried(work: Callable[[], T]) -> Callable[[], T]:
    """`work`, to run in another thread under this thread's deadline."""
    return partial(contextvars.copy_context().run, work)


class OriginWork:
    def __init__(self, workers: int, per_origin: int) -> None:
        self.workers = workers
        self.per_origin = per_origin
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="gitreg-origin")
        self._busy: Counter[str] = Counter()  # threads at work, by origin: allowed ones only
        self._lock = threading.Lock()

    async def run(self, origin: str, seconds: float, work: Callable[[], T]) -> T:
        """`work()` in one of the pool's threads, within `seconds`; raise OriginBusy at once
        when every thread, or every one `origin` may hold, is at work."""
        with self._lock:
            if self._busy.total() >= self.workers:
                raise OriginBusy(
                    f"read-through is busy: its {self.workers} threads are all at work "
                    "(mirror.workers)"
                )
            if self._busy[origin] >= self.per_origin:
                raise OriginBusy(
                    f"read-through is busy with {origin}: {self.per_origin} requests to it are "
                    "at work (mirror.per_origin)"
                )
            self._busy[origin] += 1
        try:
            future = self._pool.submit(_within, time.monotonic() + seconds, work)
        except RuntimeError:  # shut down: a reload replaced it while this request came in
            self._release(origin)
            raise OriginBusy("read-through is being replaced by a reload") from None
        future.add_done_callback(partial(self._done, origin))
        return await asyncio.wrap_future(future)

    def busy(self) -> dict[str, int]:
        with self._lock:
            return dict(self._busy)

    def close(self) -> None:
        """Threads at work finish their work (their deadline bounds it); none starts."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _done(self, origin: str, _: Future[object]) -> None:
        self._release(origin)

    def _release(self, origin: str) -> None:
        with self._lock:
            self._busy[origin] -= 1
            if self._busy[origin] <= 0:
                del self._busy[origin]


def _within(deadline: float, work: Callable[[], T]) -> T:
    token = _deadline.set(deadline)
    try:
        return work()
    finally:
        _deadline.reset(token)
