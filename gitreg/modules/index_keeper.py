"""Keeps the persisted index (`persisted.py`) in cache_dir/index.jsonl, and, under state:
postgres, in the database: each read of a repository is noted with what it was read from, and
a write (off the event loop, at most every few seconds: freshness/background.py) keeps the
repositories whose served entries are what their last read gave.

A read is noted before its entries are swapped in; a write that comes between finds the served
entries differ and leaves the repository out until the next write. So a line never pairs
entries with refs they were not read from: a stale copy is never written as current."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gitreg.atomic import write_atomically
from gitreg.errors import StateUnavailable
from gitreg.git.clone import TagRef
from gitreg.git.location import RepoLocation
from gitreg.modules.index import ModuleEntry
from gitreg.modules.persisted import ReadFrom, encode, reading
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.state.ledger import TagLedger
from gitreg.state.shared import SharedState

log = logging.getLogger(__name__)

FILE_NAME = "index.jsonl"


@dataclass
class _Read:
    read_from: ReadFrom
    entries: tuple[ModuleEntry, ...]
    tags: tuple[TagRef, ...]
    line: str | None = field(default=None)  # encoded at the first write that keeps it


class IndexKeeper:
    def __init__(self, cache_dir: Path, shared: SharedState | None = None) -> None:
        """`shared`: where replicas share their lines too (nothing is shared by LocalState)."""
        self.path = cache_dir / FILE_NAME
        self.shared = shared
        self._lock = threading.Lock()
        self._reads: dict[RepoLocation, _Read] = {}
        self._shared_lines: dict[str, str] = {}  # as last written to the shared state
        self._write_lock = threading.RLock()  # one write at a time; `flush` waits for it
        self.dirty = False  # a read was noted that no write kept yet
        self.writes = 0

    def noted(
        self,
        location: RepoLocation,
        read_from: ReadFrom,
        tags: Sequence[TagRef],
        entries: Sequence[ModuleEntry],
        line: str | None = None,
    ) -> None:
        """A read of `location` gave `entries` and `tags` from `read_from` (a sync's, before it
        swaps them in; or a start's, taken from `line`)."""
        read = _Read(read_from, tuple(entries), tuple(tags), line)
        with self._lock:
            before = self._reads.get(location)
            if before is not None and _same(before, read):
                return  # a read that found nothing new: the line written stays true
            self._reads[location] = read
            self.dirty = True

    def write(self, snapshot: RegistrySnapshot) -> int:
        """Write the lines of the repositories `snapshot` serves as last read (this blocks: run
        it in a thread); returns how many were written."""
        with self._write_lock:
            with self._lock:
                self.dirty = False
                reads = dict(self._reads)
            served: dict[RepoLocation, list[ModuleEntry]] = {}
            for entry in snapshot.index.entries():
                served.setdefault(entry.spec.repo, []).append(entry)
            lines: dict[str, str] = {}
            for location in snapshot.clones:
                read = reads.get(location)
                if read is None or location in snapshot.unread:
                    continue
                entries = served.get(location, [])
                if not _serves(read, entries, snapshot.tags.get(location, ())):
                    self.dirty = True  # swapped in a moment: the next write keeps it
                    continue
                if read.line is None:
                    read.line = encode(location.url, read.read_from, entries, read.tags)
                lines[location.url] = read.line
            text = "".join(line + "\n" for line in lines.values())
            write_atomically(self.path, text.encode())
            self._share(lines)
            self.writes += 1
            return len(lines)

    def flush(self, snapshot: RegistrySnapshot) -> None:
        """Once a write under way is over, write what is left to write, if anything (a server
        that stops: its last reads are what the next start finds)."""
        with self._write_lock:
            if self.dirty:
                self.write(snapshot)

    def lines(self) -> list[str]:
        """The lines of cache_dir/index.jsonl, as written (none when it is absent)."""
        try:
            return self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return []
        except OSError as exc:
            log.warning("cannot read %s (%s): every clone is read instead", self.path, exc)
            return []

    def shared_lines(self) -> dict[str, str]:
        """The lines other replicas wrote to the shared state, by repository URL."""
        if self.shared is None:
            return {}
        try:
            lines = self.shared.saved_reads()
        except StateUnavailable as exc:
            log.warning("the reads other replicas shared are out of reach: %s", exc)
            return {}
        self._shared_lines = dict(lines)
        return lines

    def _share(self, lines: dict[str, str]) -> None:
        if self.shared is None:
            return
        changed = {url: line for url, line in lines.items() if self._shared_lines.get(url) != line}
        if not changed:
            return
        try:
            self.shared.save_reads(changed)
        except StateUnavailable as exc:
            log.info("the reads of %d repositories are not shared yet: %s", len(changed), exc)
            self.dirty = True
            return
        self._shared_lines.update(changed)


def fingerprint_holding(ledger: TagLedger, published: Mapping[str, str]) -> str | None:
    """The ledger's fingerprint, if it holds `published` (tag → commit) now: after a read
    recorded new tags, what the read's entries were made with. None when it changed meanwhile
    (the read is then not kept: the next one is)."""
    fingerprint = ledger.fingerprint()
    if {tag: p.commit for tag, p in ledger.read().items()} != published:
        return None
    return fingerprint


def _same(a: _Read, b: _Read) -> bool:
    return a.read_from == b.read_from and a.tags == b.tags and _entries_equal(a.entries, b.entries)


def _serves(read: _Read, served: list[ModuleEntry], tags: tuple[TagRef, ...]) -> bool:
    """Whether the entries served are what `read` gave (the same objects, most often)."""
    return (read.tags is tags or read.tags == tags) and _entries_equal(read.entries, served)


def _entries_equal(a: Sequence[ModuleEntry], b: Sequence[ModuleEntry]) -> bool:
    if len(a) != len(b):
        return False
    by_key = {e.spec.address.key: e for e in b}
    for entry in a:
        other = by_key.get(entry.spec.address.key)
        if other is None:
            return False
        if other is entry:
            continue
        if (entry.versions, entry.changes, reading(entry.spec)) != (
            other.versions,
            other.changes,
            reading(other.spec),
        ):
            return False
    return True
