"""Versions `publish_when` holds back, published when their time comes, without a push.

A timer rather than a check on read: the sync it asks for records the version as published in
the ledger (so that a longer `min_age` later never takes it back) and swaps the snapshot, which
lets every kept answer go; the hot routes stay as they are. The timer sleeps until the earliest
due version, at most `every` seconds (a snapshot swapped meanwhile may hold an earlier one), so
a version is served at most that long after its time. Without publish_when it finds nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from gitreg.freshness.sync_queue import SyncQueue
from gitreg.git.location import RepoLocation
from gitreg.modules.snapshot import RegistrySnapshot

CHECK_EVERY = 30.0  # seconds at most between two looks for a version that came due
_AT_LEAST = 1.0  # seconds between two looks: a sync asked for has its turn to run


class Cooling(Protocol):
    """What the timer reads of the module sync: the snapshot served, and its clock."""

    @property
    def snapshot(self) -> RegistrySnapshot: ...

    clock: Callable[[], float]


def next_due(snapshot: RegistrySnapshot) -> float | None:
    """When the earliest version held back is due, or None when none is."""
    times = [e.pending[0].due for e in snapshot.index.entries() if e.pending]
    return min(times, default=None)


def due_repositories(snapshot: RegistrySnapshot, now: float) -> list[RepoLocation]:
    """The repositories with a version held back whose time has come at `now`."""
    due = {
        e.spec.repo: None for e in snapshot.index.entries() if e.pending and e.pending[0].due <= now
    }
    return list(due)


async def publish_when_due(
    sync: Cooling, syncs: SyncQueue, every: Callable[[], float] = lambda: CHECK_EVERY
) -> None:
    """Ask a sync of each repository whose held-back version came due; forever."""
    while True:
        snapshot, now = sync.snapshot, sync.clock()
        for location in due_repositories(snapshot, now):
            syncs.request(location, "cooldown", fetch=False)
        due = next_due(snapshot)
        wait = every() if due is None else min(every(), max(due - now, _AT_LEAST))
        await asyncio.sleep(wait)
