"""A start from the persisted index: before any clone is read, each repository whose clone's
tag refs and ledger still give the digests its line was written from is served from that line,
all of them in one swap; only the others are read from their clones (`Registry.read_clones`).

Under state: postgres, a replica also has the lines other replicas shared: one checks them
against its clone like its own, and serves them as they are where it has no clone yet (the
database is the replicas' shared truth: what one read, the others serve until they read it).
Either way the ledger's published tags must be what the line was read with."""

from __future__ import annotations

import contextlib
import gc
import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gitreg.errors import SourceError
from gitreg.git.clone import BareClone, TagRef
from gitreg.git.location import RepoLocation
from gitreg.modules.index import ModuleEntry
from gitreg.modules.index_keeper import IndexKeeper
from gitreg.modules.persisted import RepositoryLine, Unreadable, decode, published_digest
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.modules.sync import Registry
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


def warm_start(registry: Registry) -> WarmStart:
    """Serve what the persisted index still vouches for (this blocks: run it in a thread)."""
    started = time.monotonic()
    keeper = registry.reads
    if keeper is None:
        return WarmStart(frozenset(), 0, 0.0)
    snapshot = registry.snapshot
    with _collector_paused():  # a million small tuples: nothing in them for it to collect
        own = _decoded(keeper.lines(), str(keeper.path))
        shared = _decoded(keeper.shared_lines().values(), "the reads replicas shared")
        read: dict[RepoLocation, Read] = {}
        from_shared = 0
        for location in snapshot.unread:
            clone = snapshot.clones[location]
            lines = _candidates(clone, own.get(location.url), shared.get(location.url))
            entries = _first_usable(snapshot, location, clone, lines, keeper)
            if entries is not None:
                read[location] = entries
                from_shared += not clone.exists()
        registry.serve_reads(read)
    return WarmStart(frozenset(read), from_shared, time.monotonic() - started)


def _candidates(
    clone: BareClone, own: RepositoryLine | None, shared: RepositoryLine | None
) -> list[RepositoryLine]:
    """The lines that may serve the repository: those read from the refs its clone holds now;
    where there is no clone yet, the one replicas shared."""
    if not clone.exists():
        return [shared] if shared is not None else []
    refs = clone.refs_digest()
    return [line for line in (own, shared) if line is not None and line.read_from.refs == refs]


def _first_usable(
    snapshot: RegistrySnapshot,
    location: RepoLocation,
    clone: BareClone,
    lines: list[RepositoryLine],
    keeper: IndexKeeper,
) -> Read | None:
    specs = snapshot.specs[location]
    ledger: str | None = None
    for line in lines:
        if not line.serves(specs):
            continue  # written for other modules, or other templates or folders
        if ledger is None:
            ledger = _ledger_digest(snapshot.ledgers[location])
        if ledger != line.read_from.ledger:
            continue  # a tag published or accepted since: the entries may differ
        try:
            entries, tags = line.entries(specs, clone.path)
        except Unreadable as exc:
            log.warning("%s; its repository is read from its clone", exc)
            continue
        keeper.noted(location, line.read_from, tags, entries, line.text)
        return entries, tags
    return None


def _ledger_digest(ledger: TagLedger) -> str:
    try:
        return published_digest({tag: p.commit for tag, p in ledger.read().items()})
    except SourceError as exc:
        log.warning("%s; its repository is read from its clone", exc)
        return ""  # no line's: read from the clone, which says the same once more


def _decoded(lines: Iterable[str], where: str) -> dict[str, RepositoryLine]:
    """Repository URL → its line; lines that cannot be used are left out, said once."""
    decoded: dict[str, RepositoryLine] = {}
    unusable: list[str] = []
    for text in lines:
        try:
            line = decode(text)
        except Unreadable as exc:
            unusable.append(str(exc))
            continue
        decoded[line.url] = line
    if unusable:
        log.warning(
            "%s: %d repositories' lines cannot be used (%s); they are read from their clones",
            where,
            len(unusable),
            unusable[0],
        )
    return decoded


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The garbage collector off while the lines are decoded: made in a burst, the entries
    would trigger collections that walk them again and again (1.8 s instead of 0.3 s at
    10,000 modules x 50 versions). A server freezes them after the swap (gitreg.heap)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
