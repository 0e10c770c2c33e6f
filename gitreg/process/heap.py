"""What serving reads for long is kept out of the garbage collector's full walks, swap after swap.

A server freezes (`gc.freeze`) what its start-up read and, a moment after each snapshot swap,
what the swap kept; bursts of objects made to be kept are made with the collector off
(`collector_paused`, installed behind `gitreg.pacing`) and, in a server, frozen as they end. A
full walk, due after FULL_EVERY refreezes, waits for a moment without requests. Only a server
freezes (it hands its ModuleSync a Freezer's `swapped`). Why, and what it costs:
docs/how-it-works/internals.md, "Background work keeps to a CPU budget".
"""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
import time
from collections.abc import Callable, Iterator

log = logging.getLogger(__name__)

DELAY = 0.5  # seconds from the first swap asking to the refreeze: a burst of swaps costs one
FULL_EVERY = 50  # refreezes; then a full walk is due, at the first quiet moment
FORCE_AFTER = 200  # refreezes without a quiet moment: the full walk is done all the same
RECHECK = 10.0  # seconds between two looks for a quiet moment, while a full walk is due


def _always() -> bool:
    return True


# One freeze or walk at a time, whichever thread asks (a refreeze's timer, a full walk's watch,
# a burst's end): a freeze between a full walk's unfreeze and its collection would put back out
# of its reach what it was to collect. Taken after `_Pauses`' own lock, never before.
_FREEZING = threading.RLock()


class _Pauses:
    """Threads in `collector_paused`: the collector is off from the first one in to the last one
    out, and on again then if it was on before the first. (Each thread restoring what it saw
    turned it back on under another's burst: a reload's world then built under the collector's
    full walks of it, each a pause at 10,000 modules: bench/RESULTS.md, bench.scale.)"""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._was_enabled = False
        self.freeze_after = False  # a server's: `freeze_after_bursts`

    def enter(self) -> None:
        with self._lock:
            if self._count == 0:
                self._was_enabled = gc.isenabled()
            self._count += 1
            gc.disable()

    def leave(self) -> None:
        with self._lock:
            self._count -= 1
            if self._count == 0 and self._was_enabled:
                if self.freeze_after:
                    with _FREEZING:
                        gc.freeze()  # what the bursts made, kept for long: frozen unwalked
                gc.enable()

    def under_way(self) -> bool:
        return self._count > 0


_PAUSES = _Pauses()


def freeze_after_bursts(on: bool = True) -> None:
    """In a server: what a burst made is frozen, unwalked, as the collector comes back on after
    it, rather than walked by the next collection of the young generation (after a reload at
    10,000 modules, a pause during which no request was answered: bench/RESULTS.md,
    bench.scale). A burst's own cyclic garbage, if any, waits for the next full walk. `on`
    False: as a library's, walked (a test's, after)."""
    _PAUSES.freeze_after = on


class Freezer:
    def __init__(
        self,
        delay: float = DELAY,
        full_every: int = FULL_EVERY,
        quiet: Callable[[], bool] = _always,
        force_after: int = FORCE_AFTER,
        recheck: float = RECHECK,
    ) -> None:
        """`quiet`: whether no request waits now (a server's `CpuBudget.quiet`); a
        library's default is always."""
        self.delay = delay
        self.full_every = full_every
        self.quiet = quiet
        self.force_after = force_after
        self.recheck = recheck
        self.refreezes = 0
        self.full_walks = 0
        self._since_full = 0  # refreezes since the last full walk
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None  # a refreeze asked for, not begun
        self._watch: threading.Timer | None = None  # a full walk due, waiting for quiet
        self._starting = False  # between start_up and settled: the collector is off

    def start_up(self) -> None:
        """A server starts: the collector off until `settled` (start-up reads what it keeps)."""
        with self._lock:
            if self._starting:
                return
            self._starting = True
        _PAUSES.enter()

    def settled(self) -> None:
        """Start-up read the clones: freeze what it read without a walk, the collector on (once
        no burst is under way: `collector_paused`)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            starting, self._starting = self._starting, False
            self.refreezes += 1
            self._since_full += 1
        with _FREEZING:
            gc.freeze()
        if starting:
            _PAUSES.leave()

    def freeze_now(self, full: bool = False) -> None:
        """Collect the young generations (everything, when `full` or when a full walk is due
        and it is quiet), then freeze what is left."""
        start = time.perf_counter()
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()  # this one does what it was to do
                self._timer = None
            self.refreezes += 1
            self._since_full += 1
            full = full or self._full_due()
            if full:
                self._since_full = 0
                self.full_walks += 1
            elif self._since_full >= self.full_every and self._watch is None:
                self._watch = self._timer_for(self.recheck, self._look_for_quiet, "gitreg-walk")
        with _FREEZING:
            if full:
                gc.unfreeze()
                gc.collect()
            else:
                gc.collect(1)
            gc.freeze()
        if not log.isEnabledFor(logging.DEBUG):
            return  # counting the frozen objects walks all of them: only for the debug line
        log.debug(
            "heap %s: %d objects frozen in %.1f ms",
            "frozen anew" if full else "refrozen",
            gc.get_freeze_count(),
            (time.perf_counter() - start) * 1000,
        )

    def _full_due(self) -> bool:
        """With the lock held: whether this refreeze walks everything."""
        if self._since_full >= self.force_after:
            return True
        return self._since_full >= self.full_every and self.quiet()

    def _look_for_quiet(self) -> None:
        """A full walk is due: done now if it is quiet, else looked at again in a while."""
        with self._lock:
            self._watch = None
            if self._since_full < self.full_every:
                return  # a refreeze walked everything meanwhile
            walk = self._full_due()
            if not walk:
                self._watch = self._timer_for(self.recheck, self._look_for_quiet, "gitreg-walk")
        if walk:
            self.freeze_now(full=True)

    def swapped(self) -> None:
        """A snapshot was swapped in: refreeze in a moment (once for a burst of swaps); during
        start-up, `settled` will."""
        with self._lock:
            if self._timer is not None or self._starting:
                return
            self._timer = self._timer_for(self.delay, self._refreeze, "gitreg-freeze")

    def _refreeze(self) -> None:
        """The refreeze a swap asked for; while a burst is under way (a reload's next world
        being built), later: its young generation is that burst, and walking it held every
        request at 10,000 modules (bench/RESULTS.md: bench.scale)."""
        if _PAUSES.under_way():
            with self._lock:
                self._timer = self._timer_for(self.delay, self._refreeze, "gitreg-freeze")
            return
        self.freeze_now()

    @staticmethod
    def _timer_for(delay: float, then: Callable[[], None], name: str) -> threading.Timer:
        timer = threading.Timer(delay, then)
        timer.name = name
        timer.daemon = True
        timer.start()
        return timer


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a burst of young objects, none garbage, is made
    (a YAML document's nodes, the persisted index's entries, a forge page's repositories): its
    passes would walk them again and again. On again once no thread is in such a burst, unless
    it was off already before the first."""
    _PAUSES.enter()
    try:
        yield
    finally:
        _PAUSES.leave()
