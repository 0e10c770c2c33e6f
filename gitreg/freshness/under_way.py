"""Background work under way on a thread pool, held until it ends.

A stopping server leaves it to end by itself (`serve` ends its git processes); an embedding
that stops a server and goes on, a test's, waits for it, so that nothing the server started
runs, or logs, after it."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, TypeVar

T = TypeVar("T")


class UnderWay:
    """The work handed to thread pools that has not ended yet."""

    def __init__(self) -> None:
        self._futures: set[concurrent.futures.Future[Any]] = set()
        self._lock = threading.Lock()  # the pools' threads discard what ends

    def submit(self, pool: Executor, work: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """`work(*args)` on `pool`, held until it ends; awaitable on the running event loop."""
        future = pool.submit(work, *args)
        with self._lock:
            self._futures.add(future)
        future.add_done_callback(self._ended)
        return asyncio.wrap_future(future)

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the work under way to end; whether it all did."""
        with self._lock:
            futures = set(self._futures)
        return not concurrent.futures.wait(futures, timeout).not_done

    def _ended(self, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._futures.discard(future)
