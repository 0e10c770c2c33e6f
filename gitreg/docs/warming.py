"""Docs ready before anyone asks: after each snapshot swap, the latest version of every module
is read from disk or built, in the background, a few at a time, so that a list of every
module finds its descriptions in memory (`DocsService.description`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from gitreg.docs.service import DocsService
from gitreg.modules.index import ModuleEntry
from gitreg.modules.sync import Registry

log = logging.getLogger(__name__)

CHECK_EVERY = 1.0  # seconds between looks at which snapshot is served
AT_ONCE = 1  # warming builds at a time: parsing holds the GIL, which requests need too


async def keep_warm(
    docs: DocsService, registry: Registry, *, every: float = CHECK_EVERY, at_once: int = AT_ONCE
) -> None:
    """Warm the latest versions each time the snapshot is replaced; runs until cancelled.
    Syncs swap the snapshot on their own threads; comparing which one is served, once a
    second, tells of every swap without a hook into them, and never delays one."""
    seen = None
    while True:
        snapshot = registry.snapshot
        if snapshot is not seen:
            seen = snapshot
            entries = snapshot.index.entries()
            try:
                if await warm(docs, entries, at_once=at_once):
                    # Docs of every module now live as long as the snapshot: out of the
                    # collector's full walks with it (gitreg.heap).
                    registry.kept_beside()
            except Exception:  # a bug here must not end the warming for good
                log.exception("warming the docs failed; trying again at the next swap")
        await asyncio.sleep(every)


async def warm(docs: DocsService, entries: Iterable[ModuleEntry], *, at_once: int = AT_ONCE) -> int:
    """The description of each entry's latest version in memory; returns how many were not
    before."""
    wanted = iter(
        [
            (entry, entry.versions.releases[0])
            for entry in entries
            if entry.versions.releases
            and docs.description(entry, entry.versions.releases[0]) is None
        ]
    )
    loaded = 0

    async def one_by_one() -> None:
        nonlocal loaded
        for entry, release in wanted:
            try:
                await asyncio.wrap_future(docs.request(entry, release))
                loaded += 1
            except Exception as exc:  # one module's clone must not stop the others warming
                log.info("no docs for %s %s yet: %s", entry.spec.address, release.version, exc)

    await asyncio.gather(*(one_by_one() for _ in range(at_once)))
    return loaded
