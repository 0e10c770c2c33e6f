"""What serving reads for long is kept out of the garbage collector's full walks, swap after swap.

A full collection walks every object the collector tracks, holding the GIL: with an index of
10,000 modules x 50 versions (half a million objects) that is 130 ms during which no request is
answered, every few seconds under load. Objects frozen (`gc.freeze`) are not walked. Start-up
freezes what it read; each snapshot swap afterwards asks for a refreeze, done a moment later in
a thread of its own (swaps in a burst, a start-up's fetches, cost one): first a collection,
which walks only what is not frozen yet (what changed since the last refreeze: its cost follows
the change, not the catalog), so that no garbage is frozen for good; then a freeze.

Frozen objects are never collected, only freed by their reference counts. Something alive at a
freeze that becomes cyclic garbage afterwards (a request under way then) would be kept; so every
FULL_EVERY refreezes one starts from scratch (unfreeze, collect everything, freeze), and a
process's frozen heap stays bounded however many swaps it sees.

A server's start-up is one burst: the collector stays off from the start (`start_up`) until
the clones are read (`settled`), and what was read is then frozen without a walk. Walked as it
grew, then collected before its freeze, it held every request for up to half a second at
10,000 modules. Start-up's own garbage cycles, if any, wait for the first full refreeze.

Only a server process freezes (it hands its Registry a Freezer's `swapped`): a library or a
test keeps the collector as Python sets it.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
import time
from collections.abc import Iterator

log = logging.getLogger(__name__)

DELAY = 0.5  # seconds from the first swap asking to the refreeze: a burst of swaps costs one
FULL_EVERY = 50  # refreezes; then one unfreezes and walks everything once


class Freezer:
    def __init__(self, delay: float = DELAY, full_every: int = FULL_EVERY) -> None:
        self.delay = delay
        self.full_every = full_every
        self.refreezes = 0
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None  # a refreeze asked for, not begun
        self._starting = False  # between start_up and settled: the collector is off

    def start_up(self) -> None:
        """A server starts: the collector off until `settled` (start-up reads what it keeps)."""
        with self._lock:
            self._starting = True
        gc.disable()

    def settled(self) -> None:
        """Start-up read the clones: freeze what it read without a walk, the collector on."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._starting = False
            self.refreezes += 1
        gc.freeze()
        gc.enable()

    def freeze_now(self, full: bool = False) -> None:
        """Collect what is not frozen (everything, when `full`), then freeze what is left."""
        start = time.perf_counter()
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()  # this one does what it was to do
                self._timer = None
            self.refreezes += 1
            full = full or self.refreezes % self.full_every == 0
        if full:
            gc.unfreeze()
        gc.collect()
        gc.freeze()
        if not log.isEnabledFor(logging.DEBUG):
            return  # counting the frozen objects walks all of them: only for the debug line
        log.debug(
            "heap %s: %d objects frozen in %.1f ms",
            "frozen anew" if full else "refrozen",
            gc.get_freeze_count(),
            (time.perf_counter() - start) * 1000,
        )

    def swapped(self) -> None:
        """A snapshot was swapped in: refreeze in a moment (once for a burst of swaps); during
        start-up, `settled` will."""
        with self._lock:
            if self._timer is not None or self._starting:
                return
            self._timer = threading.Timer(self.delay, self.freeze_now)
            self._timer.name = "gitreg-freeze"
            self._timer.daemon = True
            self._timer.start()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a burst of young objects, none garbage, is made
    (a YAML document's nodes, the persisted index's entries, a forge page's repositories): its
    passes would walk them again and again. On again after, unless it was off already."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
