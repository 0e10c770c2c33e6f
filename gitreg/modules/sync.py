"""The module side of the registry: the snapshot requests read, and the sync that replaces it.

Every change goes through `sync_repo`, whatever triggered it (start-up, polling, watching, a
webhook, a fresh read, a client asking for a version we lack, a reload, a version's cooldown
ending): it fetches one repository, reads its tags through the module policies, and swaps in a
new RegistrySnapshot whole. Each repository's RepoStatus is kept beside it, in `status`; users
ask it through narrow protocols of their own (`SyncQueue`'s `RepositorySync`, ...)."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from gitreg.catalog.model import Catalog
from gitreg.errors import FetchStopped, SourceError
from gitreg.git.clone import BareClone, TagRef, move_old_clones
from gitreg.git.location import RepoLocation
from gitreg.modules.change_log import log_changes, served
from gitreg.modules.clone_read import CloneRead, read_clone, unread
from gitreg.modules.cooldown import held
from gitreg.modules.index import ModuleEntry
from gitreg.modules.index_keeper import IndexKeeper, fingerprint_holding
from gitreg.modules.next_catalog import NextCatalog
from gitreg.modules.on_demand import OnDemand
from gitreg.modules.persisted import ReadFrom
from gitreg.modules.read_summary import ReadSummary, summarize
from gitreg.modules.snapshot import OwnSnapshot, RegistrySnapshot, SnapshotCell
from gitreg.modules.status import Mechanism, RepoStatus, StatusBoard, StatusStore
from gitreg.pacing import UNPACED, Budget, background_thread
from gitreg.state.configured import open_state
from gitreg.state.shared import SharedState

log = logging.getLogger(__name__)

_FETCH_CONCURRENCY = 8


class ModuleSync:
    """The module sync: `snapshot`, replaced whole by each sync of a repository; `status`, each
    repository's, beside it."""

    def __init__(
        self,
        catalog: Catalog,
        shared: SharedState | None = None,
        on_swap: Callable[[], None] | None = None,
        cell: SnapshotCell | None = None,
        reads: IndexKeeper | None = None,
        budget: Budget = UNPACED,
    ) -> None:
        """`on_swap`: called after each snapshot swap, once the new one is served (a server
        refreezes its heap: gitreg.process.heap). `cell`: what holds the snapshot served, and those
        that replace it (a server's world: gitreg.world), holding one of `catalog` already; by
        default, a cell of its own. `reads`: where each read of a repository is noted, for the
        persisted index (a server's). `budget`: the process's CPU budget (a server's)."""
        move_old_clones(catalog.cache_dir)
        self._on_swap = on_swap
        self.reads = reads
        self.budget = budget
        # Where the ledgers live (local disk, or PostgreSQL shared with other replicas); fixed
        # for the process: a reload that changes state: needs a restart.
        self.shared = shared or open_state(catalog)
        self.status = StatusBoard(StatusStore(catalog.cache_dir / "state"))
        self.sync_counts: Counter[tuple[str, str]] = Counter()  # (mechanism, ok|failed|unchanged)
        self._locks_lock = threading.Lock()
        self._sync_locks: dict[RepoLocation, threading.Lock] = {}
        self.on_demand = OnDemand()  # refreshes a client's cache miss may cause
        self.clock: Callable[[], float] = time.time  # when versions publish_when holds are due
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

    def clone_path(self, location: RepoLocation) -> Path | None:
        clone = self.snapshot.clones.get(location)
        return clone.path if clone is not None else None

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
                    read_now = self._read(draft, location, clone)
                except SourceError as exc:  # served as before; its next sync says more
                    log.warning("%s; serving the versions known before", exc)
                    return False
                read[location] = (tuple(read_now.entries), read_now.tags)
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
                found = self._read_or_unread(snapshot, location, clone)
                if clone.exists():
                    log_changes([], found.entries, "startup")
                self._swap(location, found.tags, found.entries)
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
        pool = ThreadPoolExecutor(
            workers, thread_name_prefix="gitreg-sync", initializer=background_thread
        )
        with pool:
            return list(pool.map(work, locations))

    def sync_repo(
        self,
        location: RepoLocation,
        mechanism: Mechanism,
        fetch: bool = True,
        expect: Mapping[str, str] | None = None,
    ) -> bool:
        """Fetch one repository and swap in its versions; False when the fetch or read failed.
        `expect`: the remote's tags, as a poll's ls-remote saw them (no fetch if the clone holds
        them by its turn: another worker fetched them meanwhile).

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
                fetched = False
                if fetch and expect is None and mechanism == "startup":
                    fetched = clone.fetch_changed()  # most are unchanged after a restart
                elif fetch:
                    fetched = clone.fetch(expect)
                found = self._read(snapshot, location, clone)
                tags, entries, pending = found.tags, found.entries, found.pending
            except FetchStopped as exc:  # no failure of the repository's: nothing recorded
                log.info("%s", exc)
                return False
            except SourceError as exc:
                self._count(mechanism, "failed")
                # A command (`gitreg list`, `accept`) serves nothing: it says what it could not
                # read, and no more.
                after = "" if mechanism == "cli" else "; serving the versions known before"
                log.warning("%s%s", exc, after)
                message = str(exc)
                self._set_status(clone, lambda s: s.failed(message))
                if not previous:
                    unread = self._read_or_unread(snapshot, location, clone)
                    self._swap(location, unread.tags, unread.entries)
                return False
            served_differs = served(previous) != served(entries)
            if served_differs:
                log_changes(previous, entries, mechanism)
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
                status = self.status[location]
                if (
                    not fetched
                    and not served_differs
                    and status.fingerprint
                    and not status.last_error
                ):
                    # As a poll that found the remote unchanged: the status's fingerprint is that
                    # of what is served (working it out again is most of such a sync's CPU).
                    fingerprint = status.fingerprint
                else:
                    fingerprint = _fingerprint(entries)
                when = time.time()
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
        lease = 2 * max(snapshot.catalog.freshness.refresh_interval, 1.0)
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
            remote = clone.ls_remote()
        except FetchStopped:
            raise  # no failure of the repository's: nothing recorded
        except SourceError as exc:
            self._count(mechanism, "failed")
            message = str(exc)
            self._set_status(clone, lambda s: s.failed(message))
            raise
        try:
            unchanged = clone.holds(remote)
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
        if not self.sync_repo(location, mechanism, expect=remote.tags()):
            raise SourceError(self.status[location].last_error or f"fetch from {location} failed")
        return True

    def _read(
        self, snapshot: RegistrySnapshot, location: RepoLocation, clone: BareClone
    ) -> CloneRead:
        """The clone's read (gitreg.modules.clone_read), paced as background work; with a
        persisted index, none when the clone's refs, its ledger and the modules are those of its
        last read (after a start from the index, the start-up fetch reads no clone whose tags
        did not change), and each read noted for the index's next write."""
        ledger = snapshot.ledgers[location]
        # Taken before the read: a ref moved or a tag published meanwhile makes them differ. A
        # clone with versions held back is always read (they are due by the clock, not refs).
        keep = self.reads is not None and not any(map(held, snapshot.specs[location]))
        refs = clone.refs_digest() if keep else None
        ledger_read = ledger.fingerprint() if self.reads is not None else None
        if self.reads is not None and refs and ledger_read:
            again = self.reads.read_again(location, ReadFrom(refs, ledger_read), snapshot)
            if again is not None:
                self._ledger_seen[location] = ledger.version()
                return CloneRead(again[0], list(again[1]), None, ledger.version())
        found = self.budget.run(partial(read_clone, snapshot, location, clone, self.clock()))
        self._ledger_seen[location] = found.ledger_version
        if self.reads is not None and refs and ledger_read and found.pending is None:
            if found.published:
                ledger_read = fingerprint_holding(ledger, found.published)
            if ledger_read:
                self.reads.noted(location, ReadFrom(refs, ledger_read), found.tags, found.entries)
        return found

    def _read_or_unread(
        self, snapshot: RegistrySnapshot, location: RepoLocation, clone: BareClone
    ) -> CloneRead:
        if clone.exists():
            try:
                return self._read(snapshot, location, clone)
            except SourceError:
                pass
        return unread(snapshot, location, clone)

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


def _fingerprint(entries: list[ModuleEntry]) -> str:
    served = sorted((e.spec.address.key, e.versions.releases, e.changes) for e in entries)
    return hashlib.sha256(repr(served).encode()).hexdigest()[:16]
