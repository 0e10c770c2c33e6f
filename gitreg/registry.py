"""The registry's state: mirrors of the catalog's repositories and the index built from them."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

from gitreg.catalog import Catalog, ModuleSpec
from gitreg.errors import SourceError
from gitreg.gitsource import GitMirror
from gitreg.index import ModuleEntry, VersionIndex
from gitreg.repo_location import RepoLocation
from gitreg.versions import ModuleVersions, resolve_versions

log = logging.getLogger(__name__)

_FETCH_CONCURRENCY = 8


@dataclass(frozen=True)
class RepoStatus:
    location: RepoLocation
    last_success: float | None = None
    last_error: str | None = None


class Registry:
    """Owns the mirrors; `refresh()` fetches them and swaps in a new VersionIndex whole."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.mirrors: dict[RepoLocation, GitMirror] = {}
        self.specs: dict[RepoLocation, list[ModuleSpec]] = {}
        for spec in catalog.modules:
            if spec.repo not in self.mirrors:
                self.mirrors[spec.repo] = GitMirror(
                    spec.repo,
                    catalog.cache_dir,
                    catalog.credential_for(spec.repo.url),
                    catalog.fetch_timeout,
                )
            self.specs.setdefault(spec.repo, []).append(spec)
        self.status: dict[RepoLocation, RepoStatus] = {loc: RepoStatus(loc) for loc in self.mirrors}
        self._index = VersionIndex({})
        self._refresh_lock = threading.Lock()

    @property
    def index(self) -> VersionIndex:
        return self._index

    def refresh(self, fetch: bool = True) -> None:
        """Fetch every repository (unless `fetch` is False) and swap in the index built from them.

        A repository that cannot be fetched keeps the entries it had, or, at start-up, is read
        from whatever its mirror already holds: a Git server outage never removes a version.
        """
        with self._refresh_lock:
            workers = max(1, min(_FETCH_CONCURRENCY, len(self.mirrors)))
            with ThreadPoolExecutor(workers, thread_name_prefix="gitreg-fetch") as pool:
                results = list(pool.map(lambda m: self._sync(m, fetch), self.mirrors.values()))
            entries = {e.spec.address.key: e for result in results for e in result}
            self._index = VersionIndex(entries)

    def _sync(self, mirror: GitMirror, fetch: bool) -> list[ModuleEntry]:
        location = mirror.location
        previous = [e for e in self._index.entries() if e.spec.repo == location]
        try:
            if fetch:
                mirror.fetch()
            entries = self._scan(mirror)
        except SourceError as exc:
            log.warning("%s; serving the versions known before", exc)
            self.status[location] = RepoStatus(
                location, self.status[location].last_success, str(exc)
            )
            if previous:
                return previous
            try:
                return self._scan(mirror)
            except SourceError:
                # Listed but never read: known to the registry, with no versions yet.
                return [
                    self._entry(mirror, spec, ModuleVersions((), (), 0))
                    for spec in self.specs[location]
                ]
        self.status[location] = RepoStatus(location, time.time(), None)
        _log_changes(previous, entries)
        return entries

    def _scan(self, mirror: GitMirror) -> list[ModuleEntry]:
        try:
            tags = mirror.tags()
            with mirror.open() as repo:
                return [
                    self._entry(
                        mirror,
                        spec,
                        resolve_versions(
                            spec, tags, partial(mirror.has_folder, repo, folder=spec.path)
                        ),
                    )
                    for spec in self.specs[mirror.location]
                ]
        except SourceError:
            raise
        except Exception as exc:
            # A corrupt mirror is one repository's fault: it must not stop the others.
            raise SourceError(f"cannot read the mirror of {mirror.location}: {exc!r}") from exc

    @staticmethod
    def _entry(mirror: GitMirror, spec: ModuleSpec, versions: ModuleVersions) -> ModuleEntry:
        return ModuleEntry(spec, mirror.path, versions)


def _log_changes(previous: list[ModuleEntry], current: list[ModuleEntry]) -> None:
    """New versions and newly ignored tags (so every dropped tag is explained once)."""
    before = {e.spec.address.key: e for e in previous}
    for entry in current:
        old = before.get(entry.spec.address.key)
        releases = entry.versions.releases
        if old is None:  # the first read: one line per module, not one per version
            newest = f", newest {releases[0].version}" if releases else ""
            log.info("%s: %d versions%s", entry.spec.address, len(releases), newest)
        else:
            for release in set(releases) - set(old.versions.releases):
                log.info(
                    "%s: new version %s (tag %s, commit %s)",
                    entry.spec.address,
                    release.version,
                    release.tag,
                    release.commit[:12],
                )
        old_ignored = set(old.versions.ignored) if old else set()
        for ignored in entry.versions.ignored:
            if ignored not in old_ignored:
                log.info("%s: ignoring tag %s: %s", entry.spec.address, ignored.tag, ignored.reason)


async def refresh_forever(registry: Registry) -> None:
    """Re-fetch every refresh_interval, in a worker thread; runs until cancelled."""
    while True:
        await asyncio.sleep(registry.catalog.refresh_interval)
        try:
            await asyncio.to_thread(registry.refresh)
        except Exception:
            log.exception("refresh failed; serving the previous index")
