"""Background work takes a bounded share of the process while requests are being served.

Python runs one thread at a time (the GIL): eight threads reading clones after a start took the
event loop's turn eight times in nine, and a registry of 10,000 modules answered at a twelfth of
its speed until they were done. So the Python part of background work (a clone read into
entries, the slice that holds the GIL) is measured in CPU time and paced: while requests arrive,
background threads together use at most `share` of one CPU, each slice followed by a rest; with
no request in the last second, they run at full speed. Background threads also run at a lower
CPU priority, and so do the `git` processes they start (Linux gives a thread's niceness to the
processes it forks), so that on a busy machine the server's own thread comes first.

Only threads marked background (`background_thread`, a thread pool's initializer) are paced: a
read a request waits for (a fresh read) is never slowed."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator

SHARE = 0.2  # of one CPU, for background work together, while requests arrive
BUSY_FOR = 1.0  # seconds after a request during which the server counts as busy
NICENESS = 10  # added to a background thread's (and its git processes') niceness

_local = threading.local()


def background_thread() -> None:
    """A thread pool's initializer: this thread does background work (paced, lower priority)."""
    _local.background = True
    with contextlib.suppress(OSError, AttributeError):  # not Linux, or not allowed: unpaced CPU
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)


def in_background() -> bool:
    """Whether this thread does background work: a thread it hands work to should too."""
    return bool(getattr(_local, "background", False))


class BackgroundShare:
    def __init__(
        self,
        share: float = SHARE,
        busy_for: float = BUSY_FOR,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.share = share
        self.busy_for = busy_for
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._last_request = float("-inf")
        self._free_at = float("-inf")  # when the background's CPU budget is paid back
        self.rested = 0.0  # seconds background threads rested, in all (for /metrics, tests)

    def pulse(self) -> None:
        """A request arrived (called on every request: one assignment)."""
        self._last_request = self._clock()

    @contextlib.contextmanager
    def slice(self) -> Iterator[None]:
        """A slice of background work: its CPU time is paid back with a rest, when busy."""
        if not in_background():
            yield
            return
        started = time.thread_time()
        try:
            yield
        finally:
            self._rest(time.thread_time() - started)

    def _rest(self, spent: float) -> None:
        now = self._clock()
        if now - self._last_request > self.busy_for:
            return  # no one waits: catch up at full speed
        with self._lock:
            # One budget for every background thread: each slice moves the time the budget is
            # paid back by its cost divided by the share.
            self._free_at = max(self._free_at, now) + spent / self.share
            rest = self._free_at - now - spent
        if rest > 0:
            self.rested += rest
            self._sleep(rest)


SHARED = BackgroundShare()  # the process's: the request middleware pulses, background work slices
