"""Watching with watchfiles: local repositories' tags (a new tag is served within about a
second) and registry.yaml (a write is handed to the live catalog, which reloads it)."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Protocol

from watchfiles import awatch

from gitreg.catalog.approvals import FILE as APPROVALS
from gitreg.freshness.sync_queue import SyncQueue
from gitreg.git.location import RepoLocation
from gitreg.modules.snapshot import RegistrySnapshot

log = logging.getLogger(__name__)

_CHECK_MS = 1000  # how often a watch wakes up to notice a catalog change


def git_dir(location: RepoLocation) -> Path:
    """A work tree's .git folder, or the bare repository itself."""
    path = Path(location.url)
    return path / ".git" if (path / ".git").is_dir() else path


def _tag_change(git_dirs: dict[Path, RepoLocation]) -> dict[str, RepoLocation]:
    """tag files (refs/tags/..., packed-refs) → the repository they belong to."""
    return {str(d / "refs" / "tags"): loc for d, loc in git_dirs.items()} | {
        str(d / "packed-refs"): loc for d, loc in git_dirs.items()
    }


def _is_tag_file(owner: Callable[[str], RepoLocation | None], _: object, path: str) -> bool:
    return owner(path) is not None


def _owner(watched: dict[str, RepoLocation], path: str) -> RepoLocation | None:
    return next((loc for prefix, loc in watched.items() if path.startswith(prefix)), None)


class ServedSnapshot(Protocol):
    """What the watch reads of the module sync: the snapshot served, with its repositories."""

    @property
    def snapshot(self) -> RegistrySnapshot: ...


async def watch_repositories(modules: ServedSnapshot, syncs: SyncQueue) -> None:
    """Sync a local repository as soon as its tags change; runs until cancelled."""
    while True:
        snapshot = modules.snapshot
        catalog = snapshot.catalog
        local = [loc for loc in snapshot.clones if loc.transport == "local"]
        dirs = {d: loc for loc in local if (d := git_dir(loc)).is_dir()}
        if not dirs:
            while modules.snapshot.catalog is catalog:
                await asyncio.sleep(_CHECK_MS / 1000)
            continue
        owner = partial(_owner, _tag_change(dirs))
        async for changes in awatch(
            *dirs,
            watch_filter=partial(_is_tag_file, owner),
            step=50,
            debounce=400,
            rust_timeout=_CHECK_MS,
            yield_on_timeout=True,
        ):
            for location in {loc for _, p in changes if (loc := owner(p)) is not None}:
                await asyncio.shield(syncs.request(location, "watch"))
            if modules.snapshot.catalog is not catalog:
                break  # the set of local repositories may have changed: watch anew


async def watch_catalog(path: Path, reload: Callable[[], Awaitable[object]]) -> None:
    """Call `reload` whenever registry.yaml is written (editors often replace it: watch its
    folder), or its folder's `..data` link is swapped (a Kubernetes ConfigMap updated); runs
    until cancelled."""
    targets = {str(path), str(path.parent / APPROVALS)}  # approvals.yaml is read with it

    def concerns(_change: object, changed: str) -> bool:
        return changed in targets or os.path.basename(changed) == "..data"

    async for _ in awatch(path.parent, watch_filter=concerns, recursive=False, step=100):
        await reload()
