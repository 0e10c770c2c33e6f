"""Workers on one host share cache_dir: each follows what the others write to it, within about
a second, with watchfiles. A fetch into a clone (its `.fetches` counts, written as it begins and
once it completed) and a ledger changed (a tag first recorded, an operator's `gitreg accept`)
make the repository read again from its clone, without a fetch; a repository's stored status
(a worker's sync, or its failure) is taken as it is.

So one worker fetches, whoever asked (its poll, a webhook that reached it, a client), and every
worker serves what it brought. Only three folders are watched, none of them recursively: not
the clones' objects, which would cost an inotify watch per folder of every clone.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from pathlib import Path
from typing import Protocol

from watchfiles import awatch

from gitreg.freshness.sync_queue import SyncQueue
from gitreg.git.fetch_turns import FetchTurns
from gitreg.git.location import RepoLocation
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.modules.status import StatusBoard

log = logging.getLogger(__name__)

_CHECK_MS = 1000  # how often the watch wakes up to notice a catalog change


class FollowedModules(Protocol):
    """What following reads of the module sync: the repositories served, and their statuses."""

    @property
    def snapshot(self) -> RegistrySnapshot: ...

    @property
    def status(self) -> StatusBoard: ...


async def follow_shared_cache(modules: FollowedModules, syncs: SyncQueue) -> None:
    """Read a repository again whenever another worker fetched it or changed its ledger, and
    take its status as stored; runs until cancelled."""
    # A status is written at every poll: watchfiles' own line per change would flood the log.
    logging.getLogger("watchfiles.main").setLevel(logging.WARNING)
    while True:
        snapshot = modules.snapshot
        catalog = snapshot.catalog
        folders = [catalog.cache_dir / name for name in ("git", "ledgers", "state")]
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
        fetches: dict[str, tuple[RepoLocation, FetchTurns]] = {}
        ledgers: dict[str, RepoLocation] = {}
        statuses: dict[str, tuple[RepoLocation, str]] = {}
        for location, clone in snapshot.clones.items():
            turns = FetchTurns(clone.path)
            fetches[str(turns.counts_path)] = (location, turns)
            ledgers[str(_in(folders[1], clone.name))] = location
            statuses[str(_in(folders[2], clone.name))] = (location, clone.name)
        watched = frozenset(fetches) | frozenset(ledgers) | frozenset(statuses)
        caught_up = False
        async for changes in awatch(
            *folders,
            watch_filter=partial(_concerns, watched),
            recursive=False,
            step=50,
            debounce=400,
            rust_timeout=_CHECK_MS,
            yield_on_timeout=True,
        ):
            paths = {path for _, path in changes}
            if not caught_up:
                # The watch is on from the first step: what another worker wrote before it (the
                # first worker's fetch at start-up, say) is read now, once.
                caught_up = True
                paths = set(watched)
            for path in paths & statuses.keys():
                modules.status.reread(*statuses[path])
            read = {ledgers[path] for path in paths & ledgers.keys()}
            # Written as a fetch begins, too: the clone is worth reading once it completed.
            read |= {fetches[p][0] for p in paths & fetches.keys() if fetches[p][1].settled()}
            for location in read:
                syncs.request(location, "watch", fetch=False)
            if modules.snapshot.catalog is not catalog:
                break  # the repositories may have changed: watch anew
        await asyncio.sleep(0)


def _concerns(watched: frozenset[str], _change: object, path: str) -> bool:
    return path in watched


def _in(folder: Path, name: str) -> Path:
    """A repository's file in the ledgers or state folder (named after its clone)."""
    return folder / f"{name}.json"
