"""The registry's state: mirrors of the catalog's repositories and the index built from them.

Every change goes through `sync_repo`, whatever triggered it (start-up, polling, watching, a
webhook, a client asking for a version we lack, a catalog reload): it fetches one repository,
reads its tags through the module policies, and swaps in a new VersionIndex whole.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from gitreg.catalog import Catalog, ModuleSpec
from gitreg.errors import NotFound, SourceError
from gitreg.gitsource import GitMirror, TagRef
from gitreg.index import ModuleEntry, VersionIndex
from gitreg.ledger import Ledger
from gitreg.repo_location import RepoLocation
from gitreg.repo_status import Mechanism, RepoStatus, StatusStore
from gitreg.tag_policy import effective_tags
from gitreg.tags import parse_version
from gitreg.versions import ModuleVersions, resolve_versions

log = logging.getLogger(__name__)

_FETCH_CONCURRENCY = 8
ON_DEMAND_EVERY = 10.0  # seconds between refreshes one repository's cache misses may cause


class Registry:
    def __init__(self, catalog: Catalog) -> None:
        self._index = VersionIndex({})
        self._swap_lock = threading.Lock()
        self._locks_lock = threading.Lock()
        self._sync_locks: dict[RepoLocation, threading.Lock] = {}
        self._on_demand: dict[RepoLocation, float] = {}
        self._ledger_seen: dict[RepoLocation, int | None] = {}
        self.repo_tags: dict[RepoLocation, tuple[TagRef, ...]] = {}  # as last read, for providers
        self.sync_counts: Counter[tuple[str, str]] = Counter()  # (mechanism, ok|failed|unchanged)
        self.mirrors: dict[RepoLocation, GitMirror] = {}
        self.status: dict[RepoLocation, RepoStatus] = {}
        self.store = StatusStore(catalog.cache_dir / "state")
        self._configure(catalog)

    @property
    def index(self) -> VersionIndex:
        return self._index

    def _configure(self, catalog: Catalog) -> None:
        mirrors: dict[RepoLocation, GitMirror] = {}
        for location in catalog.repositories:
            credential = catalog.credential_for(location.url)
            old = self.mirrors.get(location)
            same = old and old.credential == credential and old.timeout == catalog.fetch_timeout
            mirrors[location] = (
                old
                if old and same
                else GitMirror(location, catalog.cache_dir, credential, catalog.fetch_timeout)
            )
        specs: dict[RepoLocation, list[ModuleSpec]] = {}
        for spec in catalog.modules:
            specs.setdefault(spec.repo, []).append(spec)
        self.catalog, self.mirrors, self.specs = catalog, mirrors, specs
        self.ledgers = {
            loc: Ledger(catalog.cache_dir / "ledgers" / f"{m.name}.json")
            for loc, m in mirrors.items()
        }
        self.status = {
            loc: self.status.get(loc) or self.store.read(m.name) for loc, m in mirrors.items()
        }

    def apply_catalog(self, catalog: Catalog) -> None:
        """Serve a new catalog: new repositories are fetched, the others re-read, not fetched."""
        before = set(self.mirrors)
        self._configure(catalog)
        self._forget_removed()
        self.refresh(fetch=lambda loc: loc not in before, mechanism="reload")

    def refresh(
        self, fetch: bool | Callable[[RepoLocation], bool] = True, mechanism: Mechanism = "startup"
    ) -> None:
        """Sync every repository, several at a time. `fetch` may be a predicate on locations."""

        def one(location: RepoLocation) -> None:
            wanted = fetch(location) if callable(fetch) else fetch
            self.sync_repo(location, mechanism, fetch=wanted)

        workers = max(1, min(_FETCH_CONCURRENCY, len(self.mirrors)))
        with ThreadPoolExecutor(workers, thread_name_prefix="gitreg-sync") as pool:
            list(pool.map(one, list(self.mirrors)))

    def sync_repo(self, location: RepoLocation, mechanism: Mechanism, fetch: bool = True) -> bool:
        """Fetch one repository and swap in its versions; False when the fetch or read failed.

        A repository that cannot be fetched keeps the versions it had, or, at start-up, serves
        what its mirror already holds: a Git server outage never removes a version.
        """
        with self._sync_lock(location):
            mirror = self.mirrors.get(location)
            if mirror is None:
                return False  # removed from the catalog meanwhile
            previous = [e for e in self._index.entries() if e.spec.repo == location]
            try:
                if fetch:
                    mirror.fetch()
                entries = self._scan(location, mirror)
            except SourceError as exc:
                self.sync_counts[(mechanism, "failed")] += 1
                log.warning("%s; serving the versions known before", exc)
                self._set_status(location, self.status[location].failed(str(exc)))
                if not previous:
                    self._replace(location, self._scan_or_empty(location, mirror))
                return False
            if fetch:  # a read of the mirror alone is no sync: the status stays as it was
                self.sync_counts[(mechanism, "ok")] += 1
                status = self.status[location].succeeded(
                    time.time(), _fingerprint(entries), mechanism
                )
                self._set_status(location, status)
            if _summary(previous) != _summary(entries):
                _log_changes(previous, entries, mechanism)
                self._replace(location, entries)
            return True

    def poll_repo(self, location: RepoLocation) -> bool:
        """List the remote's tags (no fetch); fetch only when they differ from the mirror's.
        Raises SourceError when the remote cannot be reached, so the poller can back off."""
        mirror = self.mirrors.get(location)
        if mirror is None:
            return False
        try:
            remote = {
                ref: sha for ref, sha in mirror.remote_tags().items() if not ref.endswith("^{}")
            }
        except SourceError as exc:
            self.sync_counts[("poll", "failed")] += 1
            self._set_status(location, self.status[location].failed(str(exc)))
            raise
        try:
            unchanged = mirror.exists() and mirror.local_tags() == remote
        except SourceError:
            unchanged = False
        status = self.status[location]
        if unchanged and status.last_error is None and status.fingerprint is not None:
            if self.ledgers[location].version() != self._ledger_seen.get(location):
                self.sync_repo(location, "poll", fetch=False)  # an operator accepted a moved tag
            self.sync_counts[("poll", "unchanged")] += 1
            self._set_status(location, status.succeeded(time.time(), status.fingerprint, "poll"))
            return False
        if not self.sync_repo(location, "poll"):
            raise SourceError(self.status[location].last_error or f"fetch from {location} failed")
        return True

    def refresh_on_miss(self, location: RepoLocation) -> bool:
        """A client asked for a version we lack: refresh, at most every ON_DEMAND_EVERY seconds."""
        now = time.monotonic()
        with self._locks_lock:
            if now - self._on_demand.get(location, -ON_DEMAND_EVERY) < ON_DEMAND_EVERY:
                return False
            self._on_demand[location] = now
        return self.sync_repo(location, "on-demand")

    def accept(self, namespace: str, name: str, system: str, version: str) -> str:
        """An operator's decision: the version's tag now publishes the commit it points at."""
        entry = self._index.get(namespace, name, system)
        if entry is None:
            raise NotFound(f"no module {namespace}/{name}/{system}")
        wanted = str(parse_version(version.removeprefix("v")))
        mirror = self.mirrors[entry.spec.repo]
        for change in entry.changes:
            text = next(
                (t.version_text(change.tag) for t in entry.spec.tags if t.version_text(change.tag)),
                None,
            )
            if text and change.current and str(parse_version(text)) == wanted:
                self.ledgers[entry.spec.repo].accept(change.tag, change.current)
                mirror.keep({change.tag: change.current})
                self.sync_repo(entry.spec.repo, "cli", fetch=False)
                commit = change.current[:12]
                return f"{entry.spec.address} {wanted}: tag {change.tag} now publishes {commit}"
        raise NotFound(f"{entry.spec.address} {wanted}: no moved tag to accept")

    def _scan(self, location: RepoLocation, mirror: GitMirror) -> list[ModuleEntry]:
        try:
            tags = mirror.tags()
            self.repo_tags[location] = tuple(tags)
            ledger = self.ledgers[location]
            published = {tag: p.commit for tag, p in ledger.read().items()}
            entries = []
            with mirror.open() as repo:
                for spec in self.specs.get(location, []):
                    effective, changes = effective_tags(
                        spec, tags, published, partial(mirror.has_commit, repo)
                    )
                    has_folder = partial(mirror.has_folder, repo, folder=spec.path)
                    entries.append(
                        ModuleEntry(
                            spec,
                            mirror.path,
                            resolve_versions(spec, effective, has_folder),
                            tuple(changes),
                        )
                    )
            new = {
                r.tag: r.commit
                for e in entries
                for r in e.versions.releases
                if r.tag not in published
            }
            if new:
                ledger.record(new)
                mirror.keep(new)
            self._ledger_seen[location] = ledger.version()
            return entries
        except SourceError:
            raise
        except Exception as exc:
            # A corrupt mirror is one repository's fault: it must not stop the others.
            raise SourceError(f"cannot read the mirror of {mirror.location}: {exc!r}") from exc

    def _scan_or_empty(self, location: RepoLocation, mirror: GitMirror) -> list[ModuleEntry]:
        if mirror.exists():
            try:
                return self._scan(location, mirror)
            except SourceError:
                pass
        # Listed but never read: known to the registry, with no versions yet.
        return [
            ModuleEntry(spec, mirror.path, ModuleVersions((), (), 0))
            for spec in self.specs.get(location, [])
        ]

    def _replace(self, location: RepoLocation, entries: list[ModuleEntry]) -> None:
        with self._swap_lock:
            current = set(self.catalog.modules)
            kept = {
                k: e
                for k, e in self._index.items()
                if e.spec.repo != location and e.spec in current
            }
            kept.update((e.spec.address.key, e) for e in entries if e.spec in current)
            self._index = VersionIndex(kept)

    def _forget_removed(self) -> None:
        with self._swap_lock:
            current = set(self.catalog.modules)
            self._index = VersionIndex({k: e for k, e in self._index.items() if e.spec in current})

    def _set_status(self, location: RepoLocation, status: RepoStatus) -> None:
        self.status[location] = status
        mirror = self.mirrors.get(location)
        if mirror:
            self.store.write(mirror.name, status)

    def _sync_lock(self, location: RepoLocation) -> threading.Lock:
        with self._locks_lock:
            return self._sync_locks.setdefault(location, threading.Lock())


def _fingerprint(entries: list[ModuleEntry]) -> str:
    served = sorted((e.spec.address.key, e.versions.releases, e.changes) for e in entries)
    return hashlib.sha256(repr(served).encode()).hexdigest()[:16]


def _summary(entries: list[ModuleEntry]) -> dict[tuple[str, str, str], object]:
    return {e.spec.address.key: (e.spec, e.versions, e.changes) for e in entries}


def _log_changes(
    previous: list[ModuleEntry], current: list[ModuleEntry], mechanism: Mechanism
) -> None:
    """New versions, newly ignored tags and new tag changes, each once."""
    before = {e.spec.address.key: e for e in previous}
    for entry in current:
        old = before.get(entry.spec.address.key)
        releases = entry.versions.releases
        if old is None:  # the first read: one line per module, not one per version
            newest = f", newest {releases[0].version}" if releases else ""
            log.info("%s: %d versions%s (%s)", entry.spec.address, len(releases), newest, mechanism)
        else:
            for release in sorted(set(releases) - set(old.versions.releases), key=lambda r: r.tag):
                log.info(
                    "%s: new version %s (tag %s, commit %s; %s)",
                    entry.spec.address,
                    release.version,
                    release.tag,
                    release.commit[:12],
                    mechanism,
                )
        old_ignored = set(old.versions.ignored) if old else set()
        for ignored in entry.versions.ignored:
            if ignored not in old_ignored:
                log.info("%s: ignoring tag %s: %s", entry.spec.address, ignored.tag, ignored.reason)
        old_changes = set(old.changes) if old else set()
        for change in entry.changes:
            if change not in old_changes:
                log.warning("%s: %s", entry.spec.address, change)
