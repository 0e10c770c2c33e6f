"""Docs ready before anyone asks: each module's latest version documented after each swap.

After each snapshot swap, the latest version of every module is read from disk or built, in the
background, one at a time, so that a list of every module finds its descriptions in memory
(`DocsService.description`); lists and pages never wait for it. Parsing holds the GIL, which
requests need too, so the CPU each module took on the docs' thread counts in the process's one
CPU budget (handed to `keep_warm`, with the fetches and polls), and the warming rests until it
is paid back; while no request arrives, it runs at full speed.
See docs/how-it-works/internals.md."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from typing import Protocol

from gitreg.docs.service import DocsService
from gitreg.modules.index import ModuleEntry, VersionIndex
from gitreg.modules.resolve import Release
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.pacing import UNPACED, Budget, breathe, paced

log = logging.getLogger(__name__)

CHECK_EVERY = 1.0  # seconds between looks at which snapshot is served
AT_ONCE = 1  # warming builds at a time: parsing holds the GIL, which requests need too
COLLECTOR_LOOK = 0.2  # seconds between looks at whether the cyclic collector is back on
COLLECTOR_WAIT_MOST = 60.0  # seconds a build waits for it, at most

Sleep = Callable[[float], Awaitable[None]]
Owe = Callable[[float], float]  # CPU seconds spent → seconds of rest that pay them back


class WarmedModules(Protocol):
    """What warming reads of the module sync: the snapshot served; and what it tells it, that
    docs were just kept beside that snapshot."""

    @property
    def snapshot(self) -> RegistrySnapshot: ...

    def kept_beside(self) -> None: ...


async def keep_warm(
    docs: DocsService,
    modules: WarmedModules,
    *,
    budget: Budget = UNPACED,
    every: float = CHECK_EVERY,
    at_once: int = AT_ONCE,
) -> None:
    """Warm the latest versions each time the snapshot is replaced; runs until cancelled.
    Syncs swap the snapshot on their own threads; comparing which one is served, once a
    second, tells of every swap without a hook into them, and never delays one."""
    seen = None
    # The index whose every entry was warmed last, and how often the descriptions had been
    # forgotten then: its entries need no look again while none is forgotten.
    warmed: tuple[VersionIndex, int] | None = None
    while True:
        snapshot = modules.snapshot
        if snapshot is not seen:
            seen = snapshot
            try:
                # Which entries changed since the last warming, off the event loop: 10,000 of
                # them looked at there held every request, once a second while syncs swap the
                # snapshot after a start (bench/RESULTS.md: bench.docs_warming).
                forgotten = docs.forgotten
                base = warmed[0] if warmed and warmed[1] == forgotten else None
                wanted = await paced(partial(_unwarmed_changes, docs, snapshot.index, base))
                loaded = await _warm_each(docs, wanted, at_once=at_once, owe=budget.owe)
                if loaded:
                    # Docs of every module now live as long as the snapshot: out of the
                    # collector's full walks with it (gitreg.process.heap).
                    modules.kept_beside()
                if loaded == len(wanted):  # otherwise, the ones that failed are tried again
                    warmed = (snapshot.index, forgotten)
            except Exception:  # a bug here must not end the warming for good
                log.exception("warming the docs failed; trying again at the next swap")
        await asyncio.sleep(every)


def _unwarmed_changes(
    docs: DocsService, index: VersionIndex, warmed: VersionIndex | None
) -> list[tuple[ModuleEntry, Release]]:
    """`_unwarmed` of the entries of `index` that are not those of `warmed` (all of them
    without it), as paced work: a rest offered at each."""
    if warmed is None:
        return _unwarmed(docs, index.entries())
    changed = []
    for key, entry in index.items():
        if warmed.get(*key) is not entry:
            changed.append(entry)
        breathe()
    return _unwarmed(docs, changed)


def _unwarmed(
    docs: DocsService, entries: Iterable[ModuleEntry]
) -> list[tuple[ModuleEntry, Release]]:
    """Each entry whose latest version's description is not in memory, with that version (in
    paced work, a rest offered at each)."""
    wanted = []
    for entry in entries:
        if entry.versions.releases:
            latest = entry.versions.releases[0]
            if docs.description(entry, latest) is None:
                wanted.append((entry, latest))
        breathe()
    return wanted


async def warm(
    docs: DocsService,
    entries: Iterable[ModuleEntry],
    *,
    at_once: int = AT_ONCE,
    owe: Owe = UNPACED.owe,
    sleep: Sleep = asyncio.sleep,
) -> int:
    """The description of each entry's latest version in memory; returns how many were not
    before. After each, the rest `owe` says its CPU is due (the background's budget)."""
    return await _warm_each(docs, _unwarmed(docs, entries), at_once=at_once, owe=owe, sleep=sleep)


async def _warm_each(
    docs: DocsService,
    wanted: list[tuple[ModuleEntry, Release]],
    *,
    at_once: int = AT_ONCE,
    owe: Owe = UNPACED.owe,
    sleep: Sleep = asyncio.sleep,
) -> int:
    """`warm`, of the versions `wanted`."""
    todo = iter(wanted)
    loaded = 0

    async def one_by_one() -> None:
        nonlocal loaded
        for entry, release in todo:
            await _collector_on(sleep)
            # What the docs' threads spent meanwhile: this build's (or disk read's), and any
            # a page asked for at the same moment (counted too: the budget errs on the safe side).
            before = docs.spent
            try:
                await asyncio.wrap_future(docs.request(entry, release))
                loaded += 1
            except Exception as exc:  # one module's clone must not stop the others warming
                log.info("no docs for %s %s yet: %s", entry.spec.address, release.version, exc)
            rest = owe(docs.spent - before)
            if rest > 0:
                await sleep(rest)

    await asyncio.gather(*(one_by_one() for _ in range(at_once)))
    return loaded


async def _collector_on(sleep: Sleep) -> None:
    """Back once the cyclic collector is on, or after COLLECTOR_WAIT_MOST. A build's garbage
    (dulwich's reference cycles) is freed by the collector alone; while the start-up or paced
    work holds it off, what they leave is frozen with what they kept (`gitreg.process.heap`),
    so a warming from an empty cache kept the garbage of thousands of builds."""
    waited = 0.0
    while not gc.isenabled() and waited < COLLECTOR_WAIT_MOST:
        await sleep(COLLECTOR_LOOK)
        waited += COLLECTOR_LOOK
