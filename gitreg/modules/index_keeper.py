"""Keeps the persisted index in cache_dir/index.jsonl, and in PostgreSQL under state: postgres.

Each read of a repository is noted with what it was read from (`persisted.py`), and a write (off
the event loop, at most every few seconds: freshness/background.py) keeps the repositories whose
served entries are what their last read gave. A read is noted before its entries are swapped in;
a write between finds the served entries differ and keeps the repository's line as it was until
the next write, so a line never pairs entries with refs they were not read from. No line is kept
in memory (their size: bench/RESULTS.md, bench.scale): a write copies the lines of repositories
not read since from the file it replaces, and encodes only the others. See
docs/how-it-works/internals.md."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitreg.atomic import atomic_writer
from gitreg.errors import StateUnavailable
from gitreg.git.clone import TagRef
from gitreg.git.location import RepoLocation
from gitreg.modules.index import ModuleEntry
from gitreg.modules.persisted import ReadFrom, Unreadable, encode, head, reading
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.pacing import breathe
from gitreg.state.ledger import TagLedger
from gitreg.state.shared import SharedState

log = logging.getLogger(__name__)

FILE_NAME = "index.jsonl"
MISSES = 3  # writes a read may find not served before it is given up


@dataclass
class _Read:
    read_from: ReadFrom
    entries: tuple[ModuleEntry, ...]
    tags: tuple[TagRef, ...]
    in_file: bool = False  # its line is in the file as last written (or as a start found it)
    misses: int = 0  # writes that found other entries served


class IndexKeeper:
    def __init__(self, cache_dir: Path, shared: SharedState | None = None) -> None:
        """`shared`: where replicas share their lines too (nothing is shared by LocalState)."""
        self.path = cache_dir / FILE_NAME
        self.shared = shared
        self._lock = threading.Lock()
        self._reads: dict[RepoLocation, _Read] = {}
        self._shared: dict[str, ReadFrom] = {}  # what the shared state holds, as far as known
        self._write_lock = threading.RLock()  # one write at a time; `flush` waits for it
        self.dirty = False  # a read was noted that no write kept yet
        self.writes = 0

    def noted(
        self,
        location: RepoLocation,
        read_from: ReadFrom,
        tags: Sequence[TagRef],
        entries: Sequence[ModuleEntry],
        in_file: bool = False,
    ) -> None:
        """A read of `location` gave `entries` and `tags` from `read_from` (a sync's, before it
        swaps them in; or, `in_file`, a start's, taken from the file's line)."""
        read = _Read(read_from, tuple(entries), tuple(tags), in_file)
        with self._lock:
            before = self._reads.get(location)
            if before is not None and _same(before, read):
                return  # a read that found nothing new: the line written stays true
            self._reads[location] = read
            self.dirty = self.dirty or not in_file

    def read_again(
        self, location: RepoLocation, read_from: ReadFrom, snapshot: RegistrySnapshot
    ) -> tuple[tuple[TagRef, ...], tuple[ModuleEntry, ...]] | None:
        """What the last read of `location` gave, when it was read from `read_from` for the
        modules `snapshot` specifies: a read is a function of those, so reading the clone again
        would give the same. None otherwise."""
        with self._lock:
            read = self._reads.get(location)
        if read is None or read.read_from != read_from:
            return None
        if tuple(e.spec for e in read.entries) != snapshot.specs.get(location):
            return None
        return read.tags, read.entries

    def write(self, snapshot: RegistrySnapshot) -> int:
        """Write the lines of the repositories `snapshot` serves as last read (this blocks: run
        it in a thread); returns how many were written."""
        with self._write_lock:
            with self._lock:
                self.dirty = False
                for location in self._reads.keys() - snapshot.clones.keys():
                    del self._reads[location]  # removed from the catalog by a reload
                reads = dict(self._reads)
            served: dict[RepoLocation, list[ModuleEntry]] = {}
            for entry in snapshot.index.entries():
                breathe()  # paced while requests arrive (freshness/background.py)
                served.setdefault(entry.spec.repo, []).append(entry)
            old = self._old_lines()
            lines: dict[str, str] = {}
            written: dict[str, ReadFrom] = {}
            for location in snapshot.clones:
                breathe()
                read = reads.get(location)
                entries = served.get(location, [])
                if (
                    read is None
                    or location in snapshot.unread
                    or not _serves(read, entries, snapshot.tags.get(location, ()))
                ):
                    # Not read yet (a start under way), or read and not swapped in yet (the
                    # next write keeps it), or served otherwise (no clone, a ledger away): its
                    # line stays as it was, a claim about what it was read from, which a start
                    # checks like any other.
                    if read is not None and location not in snapshot.unread:
                        self._missed(location, read)
                    if location.url in old:
                        lines[location.url], written[location.url] = old[location.url]
                    continue
                line, read_from = old.get(location.url, ("", None))
                if not (read.in_file and read_from == read.read_from):
                    line = encode(location.url, read.read_from, entries, read.tags)
                lines[location.url] = line
                written[location.url] = read.read_from
            with atomic_writer(self.path) as out:
                for line in lines.values():
                    out.write(line.encode() + b"\n")
            for location, read in reads.items():
                read.in_file = written.get(location.url) == read.read_from
            self._share(lines, written)
            self.writes += 1
            return len(lines)

    def _missed(self, location: RepoLocation, read: _Read) -> None:
        """A read the snapshot does not serve: swapped in a moment, most often (the next write
        keeps it); after a few writes, one that never will be (its entries were not served)."""
        read.misses += 1
        if read.misses < MISSES:
            self.dirty = True
            return
        with self._lock:
            if self._reads.get(location) is read:
                del self._reads[location]

    def _old_lines(self) -> dict[str, tuple[str, ReadFrom]]:
        """The file's lines as it stands (those that can be used), by repository URL."""
        old = {}
        for line in self.lines():
            breathe()
            with contextlib.suppress(Unreadable):
                url, read_from = head(line)
                old[url] = (line, read_from)
        return old

    def flush(self, snapshot: RegistrySnapshot) -> None:
        """Once a write under way is over, write what is left to write, if anything (a server
        that stops: its last reads are what the next start finds)."""
        with self._write_lock:
            if self.dirty:
                self.write(snapshot)

    def lines(self) -> Iterator[str]:
        """The lines of cache_dir/index.jsonl, one at a time (none when it is absent)."""
        try:
            with open(self.path, encoding="utf-8", errors="replace") as file:
                for line in file:
                    yield line.rstrip("\n")
        except FileNotFoundError:
            return
        except OSError as exc:
            log.warning("cannot read %s (%s): its repositories are read anew", self.path, exc)

    def shared_lines(self) -> dict[str, str]:
        """The lines other replicas wrote to the shared state, by repository URL."""
        if self.shared is None:
            return {}
        try:
            lines = self.shared.saved_reads()
        except StateUnavailable as exc:
            log.warning("the reads other replicas shared are out of reach: %s", exc)
            return {}
        for url, line in lines.items():
            with contextlib.suppress(Unreadable):
                self._shared[url] = head(line)[1]
        return lines

    def _share(self, lines: dict[str, str], written: dict[str, ReadFrom]) -> None:
        if self.shared is None:
            return
        changed = {url: lines[url] for url, r in written.items() if self._shared.get(url) != r}
        if not changed:
            return
        try:
            self.shared.save_reads(changed)
        except StateUnavailable as exc:
            log.info("the reads of %d repositories are not shared yet: %s", len(changed), exc)
            self.dirty = True
            return
        self._shared.update((url, written[url]) for url in changed)


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
