"""The process's CPU budget: background work held to a fraction of one CPU while requests arrive.

`gitreg serve` makes one, installs it behind `gitreg.pacing` (the breaths of paced work, git's
CPU, a request's arrival) and hands it to what schedules background work (slices, clone reads,
the docs warming's rests). Each slice's CPU is paid back with a rest while requests arrive, at
full speed otherwise; background threads and their git run at a lower priority, clone reads on
a few reader threads at the server's. Why, and what it costs: docs/how-it-works/internals.md,
"Background work keeps to a CPU budget".
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import TypeVar

FRACTION = 0.2  # of one CPU, for background work together, while requests arrive
BUSY_FOR = 1.0  # seconds after a request during which the server counts as busy
BREATH = 0.005  # CPU seconds paced work spends between two rests
PACED_FRACTION = 0.05  # of one CPU, for work in one piece (bench/RESULTS.md: bench.scale)
NICENESS = 10  # added to a background thread's (and its git processes') niceness
READERS = 2  # threads that run background slices, at the server's priority: one per CPU here
# Seconds a thread holding the GIL keeps it once another asks (bench/RESULTS.md: bench.scale)
SWITCH_INTERVAL = 0.001

T = TypeVar("T")


def prompt_handover() -> None:
    """In a server: a thread that computes hands the GIL over within SWITCH_INTERVAL of another
    asking. The event loop asks after each socket call of each request; while a reload or a
    clone read computed, each ask waited up to Python's default interval, and a request of
    several asks waited that long for each (bench/RESULTS.md: bench.scale)."""
    sys.setswitchinterval(SWITCH_INTERVAL)


class _ThreadRole(threading.local):
    """What this thread is to the budget; class attributes are the defaults, read without the
    cost of a missing attribute (breathe() runs once per YAML node of a reload)."""

    background = False  # paced background work
    reader = False  # one of the budget's reader threads
    breath: float | None = None  # paced(): the thread's CPU time at its last breath
    slices = 0  # slices under way on this thread (nested ones count)
    owed = 0.0  # CPU seconds its git processes spent, paid when its outermost slice ends


_local = _ThreadRole()


def background_thread() -> None:
    """A thread pool's initializer: this thread does background work (paced, lower priority)."""
    _local.background = True
    with contextlib.suppress(OSError, AttributeError):  # not Linux, or not allowed: unpaced CPU
        thread = threading.get_native_id()
        # Added to the thread's own: setting NICENESS itself would raise the priority of a
        # server started with `nice -n 15` (where allowed), or fail.
        niceness = os.getpriority(os.PRIO_PROCESS, thread) + NICENESS
        os.setpriority(os.PRIO_PROCESS, thread, min(niceness, 19))


class _Readers:
    """A few threads that run slices handed to them, at the priority of the thread that
    started them (Linux gives a new thread its creator's niceness, and only a privileged one
    may take it back)."""

    def __init__(self, count: int) -> None:
        self.pid = os.getpid()  # a forked worker starts its own: threads do not survive a fork
        self._queue: queue.SimpleQueue[tuple[Callable[[], object], Future[object]]]
        self._queue = queue.SimpleQueue()
        for n in range(count):
            thread = threading.Thread(target=self._serve, name=f"gitreg-read-{n}", daemon=True)
            thread.start()

    def submit(self, work: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        self._queue.put((work, future))  # type: ignore[arg-type]
        return future

    def _serve(self) -> None:
        _local.background = True
        _local.reader = True
        while True:
            work, future = self._queue.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(work())
                except BaseException as exc:  # the asking thread raises it
                    future.set_exception(exc)


def in_background() -> bool:
    """Whether this thread does background work: a thread it hands work to should too."""
    return _local.background


class CpuBudget:
    def __init__(
        self,
        fraction: float = FRACTION,
        busy_for: float = BUSY_FOR,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        readers: int = READERS,
    ) -> None:
        self.fraction = fraction
        self.readers = readers
        self._readers: _Readers | None = None
        self.busy_for = busy_for
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._last_request = float("-inf")
        self._free_at = float("-inf")  # when the background's CPU budget is paid back
        self.rested = 0.0  # seconds background threads rested, in all (for /metrics, tests)

    def run(self, work: Callable[[], T]) -> T:
        """`work`, a slice of background work that holds the GIL (a clone read): from a
        background thread, on one of the budget's `readers` threads, paced there, while the
        asking thread waits; at most `readers` such slices run at once. From any other thread
        (a read a request waits for), at once, on that thread."""
        if not in_background() or _local.reader:
            with self.slice():
                return work()
        context = contextvars.copy_context()  # the log lines keep their request or repository
        return self._started().submit(lambda: context.run(self.sliced, work)).result()

    def start(self) -> None:
        """Start the readers from this thread, at its priority: a server's event loop, before
        its background work (threads started by a background thread would run at its lower
        priority). Otherwise the first slice starts them."""
        self._started()

    def _started(self) -> _Readers:
        with self._lock:
            if self._readers is None or self._readers.pid != os.getpid():
                self._readers = _Readers(self.readers)
            return self._readers

    def request_arrived(self) -> None:
        """A request arrived (called on every request: one assignment)."""
        self._last_request = self._clock()

    def background_thread(self) -> None:
        """A thread pool's initializer: this thread does background work (paced, lower
        priority)."""
        background_thread()

    def in_background(self) -> bool:
        return in_background()

    def quiet(self) -> bool:
        """Whether no request arrived in the last `busy_for` seconds: a hold now (the heap's
        full walk) keeps no one waiting, unless a request comes in just then."""
        return self._clock() - self._last_request > self.busy_for

    @contextlib.contextmanager
    def paced(self) -> Iterator[None]:
        """This thread's work, until the end of the block, is background work that breathes
        (`breathe`) while requests arrive, at PACED_FRACTION of one CPU (counted in the one budget
        of all background work); its priority stays as it is."""
        was = _local.background, _local.breath
        _local.background, _local.breath = True, time.thread_time()
        try:
            yield
        finally:
            _local.background, _local.breath = was

    def breathe(self) -> None:
        """In paced work: once it has spent BREATH of CPU since its last breath, a rest that
        pays it back (when busy). Elsewhere, nothing (one attribute read)."""
        last = _local.breath
        if last is None:
            return
        now = time.thread_time()
        if now - last >= BREATH:
            self._rest(now - last, PACED_FRACTION)
            _local.breath = time.thread_time()

    def sliced(self, work: Callable[[], T]) -> T:
        """`work` as one slice, on this thread: a sync's or a poll's own CPU, around the git it
        waits for (counted apart, `charge`) and its clone read (a slice of its own)."""
        with self.slice():
            return work()

    def charge(self, spent: float) -> None:
        """CPU seconds a process that this thread started and waited for has spent (its git):
        from a background thread, paid back with a rest as its own slices are, when busy, once
        the thread's outermost slice ends. Never at once: git returns inside the clone's lock
        and the fetch turn other processes wait on, which a rest would hold. Outside a slice, not
        counted (as before there was a charge): a debt no slice ends would be paid all at once by
        whatever slice the thread runs next."""
        if in_background() and _local.slices:
            _local.owed += spent

    @contextlib.contextmanager
    def slice(self) -> Iterator[None]:
        """A slice of background work: its CPU time is paid back with a rest, when busy."""
        if not in_background():
            yield
            return
        started = time.thread_time()
        _local.slices += 1
        try:
            yield
        finally:
            _local.slices -= 1
            owed = 0.0
            if not _local.slices:
                owed, _local.owed = _local.owed, 0.0
            self._rest(time.thread_time() - started + owed)

    def owe(self, spent: float, fraction: float | None = None) -> float:
        """`spent` CPU seconds of background work counted in the one budget, at `fraction` (the
        budget's own by default): the seconds of rest that pay them back, 0 when quiet. For work
        that rests itself (the docs warming, on the event loop); `_rest` sleeps it."""
        if self.quiet():
            return 0.0  # no one waits: catch up at full speed
        now = self._clock()
        with self._lock:
            # One budget for every background thread: each slice moves the time the budget is
            # paid back by its cost divided by the fraction.
            self._free_at = max(self._free_at, now) + spent / (fraction or self.fraction)
            rest = max(self._free_at - now - spent, 0.0)
            self.rested += rest
        return rest

    def _rest(self, spent: float, fraction: float | None = None) -> None:
        """Pay `spent` CPU seconds back at `fraction` (the budget's own by default), when busy."""
        rest = self.owe(spent, fraction)
        if rest > 0:
            self._sleep(rest)
