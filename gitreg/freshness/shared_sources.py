"""Workers on one host survey once, and follow each other's surveys.

The first worker surveys every source at its interval, a webhook's survey runs on the
worker it reached, and each worker follows the others' through `cache_dir/sources.json`, within
about a second, serving what changed as a reload does. So a forge is listed once an interval,
not once a worker, and a repository a webhook announced is served by every worker."""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from pathlib import Path

from watchfiles import awatch

from gitreg.freshness.live import LiveCatalog
from gitreg.sources import persisted

_CHECK_MS = 1000  # how often the watch wakes up to notice a reload's other cache_dir


async def follow_shared_surveys(live: LiveCatalog) -> None:
    """Serve what another worker surveyed, whenever it writes it; runs until cancelled."""
    logging.getLogger("watchfiles.main").setLevel(logging.WARNING)
    while True:
        cache_dir = live.current.sources.declared.cache_dir
        cache_dir.mkdir(parents=True, exist_ok=True)
        async for changes in awatch(
            cache_dir,
            watch_filter=partial(_is_shared, str(cache_dir / persisted.FILE)),
            recursive=False,
            step=50,
            debounce=400,
            rust_timeout=_CHECK_MS,
            yield_on_timeout=True,
        ):
            if _moved(live, cache_dir):
                break  # a reload's catalog keeps its surveys elsewhere: watch anew
            if changes and await _followed(live):
                await live.surveyed()
        await asyncio.sleep(0)


async def _followed(live: LiveCatalog) -> bool:
    return await asyncio.to_thread(live.current.sources.follow)


def _is_shared(shared: str, _change: object, path: str) -> bool:
    return path == shared


def _moved(live: LiveCatalog, cache_dir: Path) -> bool:
    return live.current.sources.declared.cache_dir != cache_dir
