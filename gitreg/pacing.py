"""How long work keeps out of the requests' way: hooks domain code calls, no-ops until a server
installs the process's own (`gitreg serve`, from `gitreg/process/`).

Paced work breathes (`breathe`), a background thread's git tells its CPU (`charge`), a request
says it arrived (`request_arrived`), a burst of objects made to be kept is made with the
collector off (`collector_paused`), and `paced(work)` runs long work on a thread of its own with
both. What schedules background work (the sync queue, the poller, the docs warming) is handed a
`Budget` instead. Why: docs/how-it-works/internals.md, "Background work keeps to a CPU budget".
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol, TypeVar

T = TypeVar("T")

Pause = Callable[[], AbstractContextManager[None]]  # the collector off for a block


class Pacer(Protocol):
    """The process's CPU budget as every thread meets it: what `install` puts in place."""

    def breathe(self) -> None: ...

    def charge(self, spent: float) -> None: ...

    def request_arrived(self) -> None: ...

    def background_thread(self) -> None: ...

    def in_background(self) -> bool: ...

    def paced(self) -> AbstractContextManager[None]: ...


class Budget(Protocol):
    """The process's CPU budget as what schedules background work meets it: handed to it."""

    def start(self) -> None:
        """Start the budget's own threads from this one (a server's event loop)."""

    def sliced(self, work: Callable[[], T]) -> T:
        """`work` as one slice of background work, on this thread, paid back with a rest."""

    def run(self, work: Callable[[], T]) -> T:
        """`work`, a slice that holds the GIL long (a clone read), where the budget runs those."""

    def owe(self, spent: float) -> float:
        """The seconds of rest that pay back `spent` CPU seconds of background work."""


class Unpaced:
    """No budget: nothing rests, every slice runs at once, on the thread that asks."""

    def breathe(self) -> None:
        pass

    def charge(self, spent: float) -> None:
        pass

    def request_arrived(self) -> None:
        pass

    def background_thread(self) -> None:
        pass

    def in_background(self) -> bool:
        return False

    def paced(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()

    def start(self) -> None:
        pass

    def sliced(self, work: Callable[[], T]) -> T:
        return work()

    def run(self, work: Callable[[], T]) -> T:
        return work()

    def owe(self, spent: float) -> float:
        return 0.0


UNPACED = Unpaced()  # the default budget of a library, a command, a test

_pacer: Pacer = UNPACED
_pause: Pause = contextlib.nullcontext


def install(pacer: Pacer | None = None, pause: Pause | None = None) -> Callable[[], None]:
    """Put the process's pacing and its collector pauses in place (each one given); returns
    what puts back the ones before (a server that ends, a test)."""
    global _pacer, _pause
    before = _pacer, _pause
    _pacer, _pause = pacer or _pacer, pause or _pause

    def restore() -> None:
        global _pacer, _pause
        _pacer, _pause = before

    return restore


def breathe() -> None:
    """In paced work, a rest when one is due (a YAML node made, a module checked); elsewhere,
    nothing."""
    _pacer.breathe()


def charge(spent: float) -> None:
    """CPU seconds a process this thread started and waited for spent (its git)."""
    _pacer.charge(spent)


def request_arrived() -> None:
    """A request arrived: background work keeps to its budget for a while (on every request)."""
    _pacer.request_arrived()


def background_thread() -> None:
    """A thread pool's initializer: this thread does background work."""
    _pacer.background_thread()


def in_background() -> bool:
    """Whether this thread does background work: a thread it hands work to should too."""
    return _pacer.in_background()


def collector_paused() -> AbstractContextManager[None]:
    """The cyclic garbage collector off for a block that makes many objects, none garbage (a
    YAML document's nodes, the persisted index's entries, a forge page's repositories)."""
    return _pause()


async def paced(work: Callable[[], T]) -> T:
    """`work`'s result, computed on a thread of its own as paced work, the collector off."""
    return await asyncio.to_thread(_paced, work)


def _paced(work: Callable[[], T]) -> T:
    with _pacer.paced(), _pause():
        return work()
