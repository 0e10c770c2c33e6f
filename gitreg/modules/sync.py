"""The module side of the registry: the snapshot requests read, and the sync service that
replaces it.

Every change goes through `sync_repo`, whatever triggered it (start-up, polling, watching, a
webhook, a fresh read, a client asking for a version we lack, a catalog reload): it fetches one
repository, reads its tags through the module policies, and swaps in a new RegistrySnapshot
whole (one assignment under a lock). A request reads `registry.snapshot` once and sees one
consistent world; each repository's RepoStatus is kept beside it, in `registry.status`.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial

from dulwich.repo import Repo

from gitreg.catalog.model import Catalog
from gitreg.errors import FetchStopped, NotFound, SourceError, StateUnavailable
from gitreg.git.clone import BareClone, TagRef, move_old_clones
from gitreg.git.location import RepoLocation
from gitreg.modules.index import ModuleEntry
from gitreg.modules.index_keeper import IndexKeeper, fingerprint_holding
from gitreg.modules.next_catalog import NextCatalog
from gitreg.modules.persisted import ReadFrom
from gitreg.modules.read_summary import ReadSummary, summarize
from gitreg.modules.resolve import ModuleVersions, resolve_versions
from gitreg.modules.snapshot import OwnSnapshot, RegistrySnapshot, SnapshotCell
from gitreg.modules.status import Mechanism, RepoStatus, StatusBoard, StatusStore
from gitreg.modules.tag_policy import effective_tags
from gitreg.state.configured import open_state
from gitreg.state.shared import SharedState
from gitreg.tags import parse_version, released_version

log = logging.getLogger(__name__)

_FETCH_CONCURRENCY = 8
ON_DEMAND_EVERY = 10.0  # seconds between refreshes one repository's cache misses may cause
# What a start or a reload reads is said in one summary line; each module's detail at DEBUG.
_SUMMED_UP: frozenset[Mechanism] = frozenset({"startup", "reload"})


class Registry:
    """`snapshot`, replaced whole by each sync; `status`, each repository's, beside it."""

    def __init__(
        self,
        catalog: Catalog,
        shared: SharedState | None = None,
        on_swap: Callable[[], None] | None = None,
        cell: SnapshotCell | None = None,
        reads: IndexKeeper | None = None,
    ) -> None:
        """`on_swap`: called after each snapshot swap, once the new one is served (a server
        refreezes its heap: gitreg.heap). `cell`: what holds the snapshot served, and those
        that replace it (a server's world: gitreg.world), holding one of `catalog` already;
        by default, a cell of the registry's own. `reads`: where each read of a repository is
        noted, for the persisted index (a server's)."""
        move_old_clones(catalog.cache_dir)
        self._on_swap = on_swap
        self.reads = reads
        # Where the ledgers live (local disk, or PostgreSQL shared with other replicas); fixed
        # for the process: a reload that changes state: needs a restart.
        self.shared = shared or open_state(catalog)
        self.status = StatusBoard(StatusStore(catalog.cache_dir / "state"))
        self.sync_counts: Counter[tuple[str, str]] = Counter()  # (mechanism, ok|failed|unchanged)
        self._locks_lock = threading.Lock()
        self._sync_locks: dict[RepoLocation, threading.Lock] = {}
        self._on_demand: dict[RepoLocation, float] = {}
        self._ledger_seen: dict[RepoLocation, object] = {}
        if cell is None:
            cell = OwnSnapshot(RegistrySnapshot.serving(catalog, ledger_for=self.shared.ledger))
        self.cell = cell
        clones = cell.snapshot.clones
        self.status.track((loc, clone.name) for loc, clone in clones.items())

    @property
    def snapshot(self) -> RegistrySnapshot:
        return self.cell.snapshot

    def tags_of(self, location: RepoLocation) -> tuple[TagRef, ...]:
        """The repository's tags as last read (hosted providers gate their versions on them)."""
        return self.snapshot.tags.get(location, ())

    def unknown_versions(self, snapshot: RegistrySnapshot, location: RepoLocation) -> str | None:
        """Why the repository's versions are unknown, or None when they are known (even if
        there are none): it was never fetched and its clone holds no tag, so an empty list
        would claim what nobody has read."""
        if location in snapshot.unread:
            return "its repository is being read (the server just started, or a reload added it)"
        status = self.status[location]
        if not status.never_fetched or snapshot.tags.get(location):
            return None
        return status.last_error or "its repository was never fetched"

    def prepare(self, catalog: Catalog) -> NextCatalog:
        """`catalog`'s module side, beside the one served (this blocks: run it in a thread):
        the repositories it changes are read from their clones, and nothing is swapped."""
        base = self.snapshot
        draft = RegistrySnapshot.serving(catalog, base, self.shared.ledger)
        changed = NextCatalog.changed(base, draft)

        def one(location: RepoLocation) -> bool:
            with self._sync_lock(location):
                clone = draft.clones[location]
                if not clone.exists():
                    return False  # unread until its fetch, after the swap
                try:
                    tags, entries, _ = self._scan(draft, location, clone)
                except SourceError as exc:  # served as before; its next sync says more
                    log.warning("%s; serving the versions known before", exc)
                    return False
                read[location] = (tuple(entries), tags)
                return True

        read: dict[RepoLocation, tuple[tuple[ModuleEntry, ...], tuple[TagRef, ...]]] = {}
        self._each(one, changed)
        fetch = tuple(location for location in draft.clones if location not in base.clones)
        draft = draft.with_repositories(read)
        return NextCatalog(catalog, base, draft, read, fetch, self.shared.ledger)

    def adopted(self, next_catalog: NextCatalog) -> None:
        """`next_catalog` is served now (its cell swapped it in): statuses follow."""
        clones = self.snapshot.clones
        self.status.track((loc, clone.name) for loc, clone in clones.items())
        self._swapped()

    def fetch_new(self, next_catalog: NextCatalog) -> int:
        """Fetch the repositories a served catalog added; returns how many failed."""
        return self._each(partial(self.sync_repo, mechanism="reload"), next_catalog.fetch).count(
            False
        )

    def apply_catalog(self, catalog: Catalog) -> ReadSummary:
        """Serve a new catalog (prepared, swapped, its new repositories fetched); returns what
        changed. A server does the same with its whole world: gitreg.world."""
        started = time.monotonic()
        next_catalog = self.prepare(catalog)
        self.cell.update(next_catalog.on)
        self.adopted(next_catalog)
        failed = self.fetch_new(next_catalog)
        seconds = time.monotonic() - started
        read = len(next_catalog.read) + len(next_catalog.fetch)
        return summarize(next_catalog.base.index, self.snapshot.index, read, failed, seconds)

    def refresh(
        self, fetch: bool | Callable[[RepoLocation], bool] = True, mechanism: Mechanism = "startup"
    ) -> int:
        """Sync every repository, several at a time; returns how many failed. `fetch` may be a
        predicate on locations."""

        def one(location: RepoLocation) -> bool:
            wanted = fetch(location) if callable(fetch) else fetch
            return self.sync_repo(location, mechanism, fetch=wanted)

        return self._each(one).count(False)

    def read_clones(self, locations: Iterable[RepoLocation] | None = None) -> int:
        """Serve what every clone (or those of `locations`) already holds, fetching nothing
        (start-up: a hung Git server must not delay serving what is on disk). A repository with
        no clone yet is listed with no versions, and answers 503 until its first fetch. Returns
        how many have no clone yet."""

        def one(location: RepoLocation) -> bool:
            with self._sync_lock(location):
                snapshot = self.snapshot
                clone = snapshot.clones[location]
                tags, entries, _ = self._scan_or_empty(snapshot, location, clone)
                if clone.exists():
                    _log_changes([], entries, "startup")
                self._swap(location, tags, entries)
                return clone.exists()

        return self._each(one, locations).count(False)

    def serve_reads(
        self, read: Mapping[RepoLocation, tuple[tuple[ModuleEntry, ...], tuple[TagRef, ...]]]
    ) -> None:
        """Serve these repositories' entries and tags, read elsewhere (a start's persisted
        index: gitreg.modules.warm_start), in one swap however many there are."""
        if read:
            self.cell.update(lambda snapshot: snapshot.with_repositories(read))
            self._swapped()

    def _each(
        self, work: Callable[[RepoLocation], bool], locations: Iterable[RepoLocation] | None = None
    ) -> list[bool]:
        """`work` on every repository (or on `locations`), several at a time; what each
        returned."""
        locations = list(self.snapshot.clones if locations is None else locations)
        if not locations:
            return []
        workers = max(1, min(_FETCH_CONCURRENCY, len(locations)))
        with ThreadPoolExecutor(workers, thread_name_prefix="gitreg-sync") as pool:
            return list(pool.map(work, locations))

    def sync_repo(
        self,
        location: RepoLocation,
        mechanism: Mechanism,
        fetch: bool = True,
        expect: Mapping[str, str] | None = None,
    ) -> bool:
        """Fetch one repository and swap in its versions; False when the fetch or read failed.
        `expect`: the remote's tags, as a poll listed them (no fetch if the clone holds them by
        its turn: another worker fetched them meanwhile).

        A repository that cannot be fetched keeps the versions it had, or, at start-up, serves
        what its clone already holds: a Git server outage never removes a version.
        """
        with self._sync_lock(location):
            snapshot = self.snapshot
            clone = snapshot.clones.get(location)
            if clone is None:
                return False  # removed from the catalog meanwhile
            # A repository not read yet is listed with stand-in entries: nothing served before.
            previous = [] if location in snapshot.unread else snapshot.entries_of(location)
            try:
                if fetch:
                    clone.fetch(expect)
                tags, entries, pending = self._scan(snapshot, location, clone)
            except FetchStopped as exc:  # no failure of the repository's: nothing recorded
                log.info("%s", exc)
                return False
            except SourceError as exc:
                self._count(mechanism, "failed")
                log.warning("%s; serving the versions known before", exc)
                message = str(exc)
                self._set_status(clone, lambda s: s.failed(message))
                if not previous:
                    self._swap(location, *self._scan_or_empty(snapshot, location, clone)[:2])
                return False
            served_differs = _summary(previous) != _summary(entries)
            if served_differs:
                _log_changes(previous, entries, mechanism)
            if served_differs or snapshot.tags.get(location) != tags:
                self._swap(location, tags, entries)
            if served_differs:
                # The other replicas sync it too. A sync a peer asked for announces its change
                # as well: it may be the one that saw a new tag first (a webhook folded into it,
                # or a tag pushed while it fetched). A replica announces only a change of what
                # it serves, so the announcements stop once every replica agrees.
                self.shared.announce(location)
            if pending is not None:
                # Served: what the shared ledger confirmed. New tags wait for it (a failure, so
                # that every poll tries again until they are published).
                self._count(mechanism, "failed")
                self._set_status(clone, lambda s: s.failed(pending))
                return False
            if fetch:  # a read of the clone alone is no sync: the status stays as it was
                self._count(mechanism, "ok")
                when, fingerprint = time.time(), _fingerprint(entries)
                self._set_status(clone, lambda s: s.succeeded(when, fingerprint, mechanism))
            return True

    def poll_repo(self, location: RepoLocation, mechanism: Mechanism = "poll") -> bool:
        """List the remote's tags (no fetch); fetch only when they differ from the clone's.
        Raises SourceError when the remote cannot be reached, so the caller can back off."""
        snapshot = self.snapshot
        clone = snapshot.clones.get(location)
        if clone is None:
            return False
        status = self.status[location]
        lease = 2 * max(snapshot.catalog.refresh_interval, 1.0)
        if (
            mechanism == "poll"
            and status.last_error is None
            and not status.never_fetched
            and not self.shared.may_poll(location, lease)
        ):
            # Another replica polls it this round, and says so when it changes.
            self._count(mechanism, "skipped")
            return False
        try:
            listing = clone.list_remote()
        except FetchStopped:
            raise  # no failure of the repository's: nothing recorded
        except SourceError as exc:
            self._count(mechanism, "failed")
            message = str(exc)
            self._set_status(clone, lambda s: s.failed(message))
            raise
        try:
            unchanged = clone.holds(listing)
        except SourceError:
            unchanged = False
        fingerprint = status.fingerprint
        if unchanged and status.last_error is None and fingerprint is not None:
            if snapshot.ledgers[location].version() != self._ledger_seen.get(location):
                self.sync_repo(location, mechanism, fetch=False)  # an operator accepted a moved tag
            self._count(mechanism, "unchanged")
            when = time.time()
            self._set_status(
                clone, lambda s: s.succeeded(when, s.fingerprint or fingerprint, mechanism)
            )
            return False
        if not self.sync_repo(location, mechanism, expect=listing.tags()):
            raise SourceError(self.status[location].last_error or f"fetch from {location} failed")
        return True

    def on_miss_due(self, location: RepoLocation) -> bool:
        """A client asked for a version we lack: whether that may refresh the repository now
        (at most every ON_DEMAND_EVERY seconds); the caller then asks for the sync."""
        now = time.monotonic()
        with self._locks_lock:
            if now - self._on_demand.get(location, -ON_DEMAND_EVERY) < ON_DEMAND_EVERY:
                return False
            self._on_demand[location] = now
        return True

    def accept(self, namespace: str, name: str, system: str, version: str) -> str:
        """An operator's decision: the version's tag now publishes the commit it points at."""
        snapshot = self.snapshot
        entry = snapshot.index.get(namespace, name, system)
        if entry is None:
            raise NotFound(f"no module {namespace}/{name}/{system}")
        wanted = str(parse_version(version.removeprefix("v")))
        clone = snapshot.clones[entry.spec.repo]
        for change in entry.changes:
            released = released_version(entry.spec.tags, change.tag)
            if released is not None and change.current and str(released) == wanted:
                snapshot.ledgers[entry.spec.repo].accept(change.tag, change.current)
                clone.keep({change.tag: change.current})
                self.sync_repo(entry.spec.repo, "cli", fetch=False)
                commit = change.current[:12]
                return f"{entry.spec.address} {wanted}: tag {change.tag} now publishes {commit}"
        raise NotFound(f"{entry.spec.address} {wanted}: no moved tag to accept")

    def _scan(
        self, snapshot: RegistrySnapshot, location: RepoLocation, clone: BareClone
    ) -> tuple[tuple[TagRef, ...], list[ModuleEntry], str | None]:
        """The clone's tags and the entries they make; and, when the ledger could not record
        the tags seen first now, why (those are left out: published only once it can)."""
        try:
            ledger = snapshot.ledgers[location]
            # Taken before the read: a ref moved or a tag published meanwhile makes them differ.
            noting = self.reads is not None
            refs = clone.refs_digest() if noting else None
            ledger_read = ledger.fingerprint() if noting else None
            if self.reads is not None and refs and ledger_read:
                # Read from these refs and this ledger already, for these modules: the same
                # read again would give the same (after a start from the persisted index, the
                # start-up fetch reads no clone whose tags did not change).
                again = self.reads.read_again(location, ReadFrom(refs, ledger_read), snapshot)
                if again is not None:
                    self._ledger_seen[location] = ledger.version()
                    return again[0], list(again[1]), None
            tags = clone.tags()
            published = {tag: p.commit for tag, p in ledger.read().items()}
            pending = None
            with clone.open() as repo:
                entries = self._entries(snapshot, location, clone, repo, tags, published)
                new = {
                    r.tag: r.commit
                    for e in entries
                    for r in e.versions.releases
                    if r.tag not in published
                }
                if new:
                    try:
                        agreed = {tag: p.commit for tag, p in ledger.record(new).items()}
                    except StateUnavailable as exc:
                        pending = f"{exc}; {len(new)} new tags wait for it"
                        entries = [_without(e, new) for e in entries]
                    else:
                        ledger_read = fingerprint_holding(ledger, agreed) if noting else None
                        if any(agreed.get(tag) != commit for tag, commit in new.items()):
                            # Another replica saw these tags first, at other commits: its win.
                            entries = self._entries(snapshot, location, clone, repo, tags, agreed)
                        clone.keep(
                            {
                                tag: agreed[tag]
                                for tag in new
                                if tag in agreed and clone.has_commit(repo, agreed[tag])
                            }
                        )
            self._ledger_seen[location] = ledger.version()
            read_tags = tuple(tags)
            if self.reads is not None and refs and ledger_read and pending is None:
                self.reads.noted(location, ReadFrom(refs, ledger_read), read_tags, entries)
            return read_tags, entries, pending
        except SourceError:
            raise
        except Exception as exc:
            # A corrupt clone is one repository's fault: it must not stop the others.
            raise SourceError(f"cannot read the clone of {clone.location}: {exc!r}") from exc

    @staticmethod
    def _entries(
        snapshot: RegistrySnapshot,
        location: RepoLocation,
        clone: BareClone,
        repo: Repo,
        tags: list[TagRef],
        published: dict[str, str],
    ) -> list[ModuleEntry]:
        entries = []
        for spec in snapshot.specs[location]:
            effective, changes = effective_tags(
                spec, tags, published, partial(clone.has_commit, repo)
            )
            has_folder = partial(clone.has_folder, repo, folder=spec.path)
            entries.append(
                ModuleEntry(
                    spec,
                    clone.path,
                    resolve_versions(spec, effective, has_folder),
                    tuple(changes),
                )
            )
        return entries

    def _scan_or_empty(
        self, snapshot: RegistrySnapshot, location: RepoLocation, clone: BareClone
    ) -> tuple[tuple[TagRef, ...], list[ModuleEntry], str | None]:
        if clone.exists():
            try:
                return self._scan(snapshot, location, clone)
            except SourceError:
                pass
        # Listed but never read: known to the registry, with no versions yet.
        empty = [
            ModuleEntry(spec, clone.path, ModuleVersions((), (), 0))
            for spec in snapshot.specs[location]
        ]
        return (), empty, None

    def _swap(
        self, location: RepoLocation, tags: tuple[TagRef, ...], entries: list[ModuleEntry]
    ) -> None:
        self.cell.update(lambda snapshot: snapshot.with_repository(location, entries, tags))
        self._swapped()

    def _swapped(self) -> None:
        if self._on_swap is not None:
            self._on_swap()

    def kept_beside(self) -> None:
        """Something read for the snapshot and kept as long as it (docs warmed for its modules)
        was just built: tell `on_swap`, as for a swap, so a server refreezes its heap."""
        self._swapped()

    def _set_status(self, clone: BareClone, change: Callable[[RepoStatus], RepoStatus]) -> None:
        self.status.update(clone.location, clone.name, change)

    def _count(self, mechanism: Mechanism, result: str) -> None:
        with self._locks_lock:
            self.sync_counts[(mechanism, result)] += 1

    def _sync_lock(self, location: RepoLocation) -> threading.Lock:
        with self._locks_lock:
            return self._sync_locks.setdefault(location, threading.Lock())


def _without(entry: ModuleEntry, tags: dict[str, str]) -> ModuleEntry:
    """The entry without the releases of `tags` (not published yet)."""
    releases = tuple(r for r in entry.versions.releases if r.tag not in tags)
    return ModuleEntry(
        entry.spec, entry.clone_path, replace(entry.versions, releases=releases), entry.changes
    )


def _fingerprint(entries: list[ModuleEntry]) -> str:
    served = sorted((e.spec.address.key, e.versions.releases, e.changes) for e in entries)
    return hashlib.sha256(repr(served).encode()).hexdigest()[:16]


def _summary(entries: list[ModuleEntry]) -> dict[tuple[str, str, str], object]:
    return {e.spec.address.key: (e.spec, e.versions, e.changes) for e in entries}


def _log_changes(
    previous: list[ModuleEntry], current: list[ModuleEntry], mechanism: Mechanism
) -> None:
    """New versions, newly ignored tags and new tag changes, each once: at DEBUG for a start or
    a reload, which say what they read in a summary line (read_summary.py)."""
    level = logging.DEBUG if mechanism in _SUMMED_UP else logging.INFO
    before = {e.spec.address.key: e for e in previous}
    for entry in current:
        old = before.get(entry.spec.address.key)
        releases = entry.versions.releases
        if old is None:  # the first read: one line per module, not one per version
            newest = f", newest {releases[0].version}" if releases else ""
            log.log(
                level,
                "%s: %d versions%s (%s)",
                entry.spec.address,
                len(releases),
                newest,
                mechanism,
            )
        else:
            for release in sorted(set(releases) - set(old.versions.releases), key=lambda r: r.tag):
                log.log(
                    level,
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
                log.log(
                    level,
                    "%s: ignoring tag %s: %s",
                    entry.spec.address,
                    ignored.tag,
                    ignored.reason,
                )
        old_changes = set(old.changes) if old else set()
        for change in entry.changes:
            if change not in old_changes:
                log.warning("%s: %s", entry.spec.address, change)
