"""Long work off the event loop and paced (a reload's registry.yaml read and checked and its
next world built, what changed counted, the persisted index written, the docs warming's look at
what changed). At 10,000 modules, run at full speed beside the requests, it took many of their
turns, and a full collection of the objects it made held every request (bench/RESULTS.md:
bench.scale).
Now it rests as it goes while requests arrive (`background_share`), with the cyclic collector
off: what it makes is kept or freed by reference counts, and the refreeze after the swap
(`heap.py`) collects once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from gitreg.background_share import SHARED
from gitreg.heap import collector_paused

T = TypeVar("T")


async def paced(work: Callable[[], T]) -> T:
    """`work`'s result, computed on a thread of its own as paced background work."""
    return await asyncio.to_thread(_paced, work)


def _paced(work: Callable[[], T]) -> T:
    with SHARED.paced(), collector_paused():
        return work()
