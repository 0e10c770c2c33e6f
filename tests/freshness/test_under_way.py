"""Work handed to a thread pool is held until it ends: a test's server that stopped waits for
the syncs it left running, so that none logs after the test."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from gitreg.freshness.under_way import UnderWay


def test_work_is_waited_for_until_it_ends_even_after_its_pool_is_shut_down() -> None:
    under_way, go_on = UnderWay(), threading.Event()
    pool = ThreadPoolExecutor(2)

    def sync() -> str:
        return "synced" if go_on.wait(30) else "held too long"

    async def started() -> asyncio.Future[str]:
        return under_way.submit(pool, sync)

    loop = asyncio.new_event_loop()
    try:
        running = loop.run_until_complete(started())
        pool.shutdown(wait=False, cancel_futures=True)  # as a stopping server does
        assert not under_way.wait(0.05)  # still held: it runs on
        go_on.set()
        assert under_way.wait(30)
        assert loop.run_until_complete(running) == "synced"
    finally:
        loop.close()
    assert under_way.wait(0)  # nothing is left under way
