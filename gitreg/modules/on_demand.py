"""Refreshes a client's cache miss may cause: a client asking for a version we lack may have the
repository refreshed, at most every ON_DEMAND_EVERY seconds per repository."""

from __future__ import annotations

import threading
import time

from gitreg.git.location import RepoLocation

ON_DEMAND_EVERY = 10.0  # seconds


class OnDemand:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[RepoLocation, float] = {}

    def due(self, location: RepoLocation) -> bool:
        """Whether a miss may refresh the repository now (the caller then asks for the sync)."""
        now = time.monotonic()
        with self._lock:
            if now - self._last.get(location, -ON_DEMAND_EVERY) < ON_DEMAND_EVERY:
                return False
            self._last[location] = now
        return True
