"""Watching with watchfiles: local repositories' tags (a new tag is served within about a
second) and registry.yaml (a valid edit is applied live, an invalid one refused)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

from watchfiles import awatch

from gitreg.background_share import SHARED
from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from gitreg.errors import ConfigError
from gitreg.freshness.sync_queue import SyncQueue
from gitreg.git.location import RepoLocation
from gitreg.modules.sync import Registry
from gitreg.paced import paced

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


async def watch_repositories(registry: Registry, syncs: SyncQueue) -> None:
    """Sync a local repository as soon as its tags change; runs until cancelled."""
    while True:
        snapshot = registry.snapshot
        catalog = snapshot.catalog
        local = [loc for loc in snapshot.clones if loc.transport == "local"]
        dirs = {d: loc for loc in local if (d := git_dir(loc)).is_dir()}
        if not dirs:
            while registry.snapshot.catalog is catalog:
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
            if registry.snapshot.catalog is not catalog:
                break  # the set of local repositories may have changed: watch anew


async def reload_catalog(served: Catalog, serve: Callable[[Catalog], Awaitable[bool]]) -> bool:
    """Read registry.yaml again (the file `served` was read from) and `serve` it; an invalid
    catalog is refused and the old one serves."""
    try:
        catalog = await paced(partial(_reread, served))
    except ConfigError as exc:
        _refused(exc, "still serving the previous catalog")
        return False
    return await serve(catalog)


def _reread(served: Catalog) -> Catalog:
    catalog = load_catalog(served.source)
    return _sharing_specs(served, _keep_what_needs_a_restart(served, catalog))


def reread_catalog(catalog: Catalog) -> Catalog:
    """registry.yaml as a reload would serve it now (blocking); `catalog` when it is invalid."""
    try:
        return _keep_what_needs_a_restart(catalog, load_catalog(catalog.source))
    except ConfigError as exc:
        _refused(exc, "serving the catalog read at start-up")
        return catalog


def _refused(exc: ConfigError, then: str) -> None:
    """registry.yaml refused, as lines of their own (a record's newline would be written `\\n`):
    what serves meanwhile, then each problem as `gitreg check` says it."""
    count = len(exc.problems)
    log.error("%s is invalid (%d problem%s): %s", exc.source, count, "s"[: count != 1], then)
    for problem in exc.problems:
        log.error("%s: %s", exc.source, problem)


def _sharing_specs(old: Catalog, new: Catalog) -> Catalog:
    """`new`, with each module spec equal to one of `old` replaced by that one: the entries a
    reload keeps hold the old specs, and two equal copies of 10,000 specs cost 70 MB for as
    long as those entries serve. (Equal specs also compare at once: `is` before `==`.)"""
    before = {spec.address.key: spec for spec in old.modules}
    modules = []
    for spec in new.modules:
        SHARED.breathe()
        kept = before.get(spec.address.key)
        modules.append(kept if kept is not None and kept == spec else spec)
    return dataclasses.replace(new, modules=tuple(modules))


def _keep_what_needs_a_restart(old: Catalog, new: Catalog) -> Catalog:
    kept = ("listen", "tls", "cache_dir", "log_format", "shutdown_grace", "hsts", "mcp")
    for key in kept:
        if getattr(old, key) != getattr(new, key):
            log.warning("catalog reload: a change of %s takes effect at the next restart", key)
    return dataclasses.replace(new, **{key: getattr(old, key) for key in kept})


async def watch_catalog(path: Path, reload: Callable[[], Awaitable[object]]) -> None:
    """Call `reload` whenever registry.yaml is written (editors often replace it: watch its
    folder), or its folder's `..data` link is swapped (a Kubernetes ConfigMap updated); runs
    until cancelled."""
    target = str(path)

    def concerns(_change: object, changed: str) -> bool:
        return changed == target or os.path.basename(changed) == "..data"

    async for _ in awatch(path.parent, watch_filter=concerns, recursive=False, step=100):
        await reload()
