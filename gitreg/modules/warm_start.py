"""A start from the persisted index: a repository whose line still holds is served from it at once.

Before any clone is read, each repository whose clone's tag refs and ledger still give the digests
its line was written from is served from that line, all of them in one swap; only the others are
read from their clones (`ModuleSync.read_clones`). Under state: postgres a replica also has the
lines other replicas shared: it checks them against its clone like its own, and serves them as
they are where it has no clone yet (what one replica read, the others serve until they read it).
Either way the ledger's published tags must be what the line was read with. See
docs/how-it-works/internals.md."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from gitreg.errors import SourceError
from gitreg.git.clone import BareClone, TagRef
from gitreg.git.location import RepoLocation
from gitreg.modules.index import ModuleEntry
from gitreg.modules.index_keeper import IndexKeeper
from gitreg.modules.persisted import RepositoryLine, Unreadable, decode
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.pacing import collector_paused
from gitreg.state.ledger import TagLedger

log = logging.getLogger(__name__)

Read = tuple[tuple[ModuleEntry, ...], tuple[TagRef, ...]]


@dataclass(frozen=True)
class WarmStart:
    served: frozenset[RepoLocation]  # from a line: not to be read from their clones now
    shared: int  # of which from a line another replica shared, with no clone here yet
    seconds: float

    def __str__(self) -> str:
        shared = f" ({self.shared} with no clone yet, as other replicas read them)"
        return (
            f"{len(self.served)} repositories served from the persisted index"
            f"{shared if self.shared else ''} in {self.seconds:.1f} s"
        )


class StartingSync(Protocol):
    """What a warm start asks of the module sync: the persisted index, the snapshot served,
    and the repositories read from it served in one swap."""

    @property
    def reads(self) -> IndexKeeper | None: ...

    @property
    def snapshot(self) -> RegistrySnapshot: ...

    def serve_reads(self, read: Mapping[RepoLocation, Read]) -> None: ...


def warm_start(sync: StartingSync) -> WarmStart:
    """Serve what the persisted index still vouches for (this blocks: run it in a thread)."""
    started = time.monotonic()
    keeper = sync.reads
    if keeper is None:
        return WarmStart(frozenset(), 0, 0.0)
    snapshot = sync.snapshot
    unread = {location.url: location for location in snapshot.unread}
    read: dict[RepoLocation, Read] = {}
    # A million small tuples, nothing in them to collect: made in a burst, they would trigger
    # collections that walk them again and again, a warm start several times as slow
    # (bench/RESULTS.md: bench.scale). A server freezes them after the swap (gitreg.process.heap).
    with collector_paused():
        # Line by line, each decoded only while it is looked at: the whole index decoded at
        # once would raise the peak of memory (bench/RESULTS.md: bench.scale).
        for line in _decoded(keeper.lines(), str(keeper.path)):
            location = unread.get(line.url)
            if location is None or location in read:
                continue
            clone = snapshot.clones[location]
            if clone.exists() and line.read_from.refs == clone.refs_digest():
                _use(snapshot, location, clone, line, keeper, read, in_file=True)
        from_shared = 0
        left = {url: location for url, location in unread.items() if location not in read}
        shared = keeper.shared_lines() if left else {}
        for line in _decoded(shared.values(), "the reads replicas shared"):
            location = left.get(line.url)
            if location is None or location in read:
                continue
            clone = snapshot.clones[location]
            # Checked against this replica's clone, or, with none yet, taken as the database
            # holds it: the replicas' shared truth.
            if clone.exists() and line.read_from.refs != clone.refs_digest():
                continue
            if _use(snapshot, location, clone, line, keeper, read, in_file=False):
                from_shared += not clone.exists()
        sync.serve_reads(read)
    return WarmStart(frozenset(read), from_shared, time.monotonic() - started)


def _use(
    snapshot: RegistrySnapshot,
    location: RepoLocation,
    clone: BareClone,
    line: RepositoryLine,
    keeper: IndexKeeper,
    read: dict[RepoLocation, Read],
    in_file: bool,
) -> bool:
    """Take the line's entries into `read` if it was read for the modules specified now, with
    the ledger as it is now."""
    specs = snapshot.specs[location]
    try:
        if not line.serves(specs):
            return False  # written for other modules, or other templates or folders
        if _ledger_digest(snapshot.ledgers[location]) != line.read_from.ledger:
            return False  # a tag published or accepted since: the entries may differ
        entries, tags = line.entries(specs, clone.path)
    except Unreadable as exc:
        log.warning("%s; its repository is read from its clone", exc)
        return False
    if in_file or clone.exists():
        # Another replica's read is served where there is no clone here, not noted as this
        # one's: its first fetch reads the clone, which may lack a commit the line pins (then
        # withheld here: gitreg.modules.tag_policy).
        keeper.noted(location, line.read_from, tags, entries, in_file=in_file)
    read[location] = (entries, tags)
    return True


def _ledger_digest(ledger: TagLedger) -> str:
    try:
        return ledger.fingerprint()
    except SourceError as exc:
        log.warning("%s; its repository is read from its clone", exc)
        return ""  # no line's: read from the clone, which says the same once more


def _decoded(lines: Iterable[str], where: str) -> Iterator[RepositoryLine]:
    """Each line decoded; those that cannot be used are left out, and said once at the end."""
    unusable: list[str] = []
    for text in lines:
        try:
            yield decode(text)
        except Unreadable as exc:
            unusable.append(str(exc))
    if unusable:
        log.warning(
            "%s: %d repositories' lines cannot be used (%s); they are read from their clones",
            where,
            len(unusable),
            unusable[0],
        )
