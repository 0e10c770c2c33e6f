"""The sources surveyed while serving, each at its interval; a change served as a reload is.

Each source is surveyed every `interval` (at once at start-up), off the event loop, through
the queue webhooks ask too; a round's surveys that change the modules served prepare the
next world and swap it in, as a reload of registry.yaml does. See docs/sources.md."""

from __future__ import annotations

import asyncio
import logging
import time

from gitreg.freshness.survey_queue import SurveyQueue
from gitreg.sources import persisted

log = logging.getLogger(__name__)

LOOK_AGAIN = 5.0  # seconds at most between two looks at the catalog's sources (a reload's new)


async def survey_sources(queue: SurveyQueue) -> None:
    """Until cancelled: every source of the catalog served, at its interval."""
    live = queue.live
    sources = live.current.sources
    due: dict[str, float] = {}  # identity → monotonic time of its next survey
    while True:
        specs = sources.declared.sources
        now = time.monotonic()
        changed = False
        for spec in specs:
            key = persisted.identity(spec)
            if due.get(key, 0.0) > now:
                continue
            changed |= await queue.request(spec, apply=False)
            # A source that asked to be left alone longer (Retry-After) is, within a day.
            found = sources.last(spec)
            wait = max(spec.interval, min(found.retry_after if found else 0.0, 86400.0))
            due[key] = time.monotonic() + wait
        if changed:
            await live.surveyed()
        keys = {persisted.identity(s) for s in specs}
        upcoming = [at for key, at in due.items() if key in keys]
        wait = min(upcoming, default=now + LOOK_AGAIN) - time.monotonic()
        await asyncio.sleep(min(max(wait, 0.0), LOOK_AGAIN))
