"""Fetches of one clone taken in turns across processes, skipped when another's answered the need.

Workers on one host share cache_dir, and `gitreg list --fetch` may run beside a server: a fetch
runs under an exclusive file lock next to the clone. A fetch asked for at some moment is answered
by any fetch that *began* after it (that one saw the remote at least as new): asking takes a
ticket, how many fetches had begun, and the turn skips the fetch when one begun since completed.
So across processes one fetch runs and one waits, as the sync queue does within one. A poll's
fetch also knows what it wants (the tags just listed): it skips when the clone holds them by its
turn. See docs/how-it-works/internals.md."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gitreg.atomic import write_atomically
from gitreg.errors import SourceError


@dataclass(frozen=True)
class Counts:
    begun: int = 0  # fetches begun, ever (the ticket of a fetch asked for now)
    answered: int = 0  # the number, among those, of the last one that completed


class FetchTurns:
    """One clone's turns: `<clone>.fetch.lock` (never replaced: a lock lives on its inode) and
    `<clone>.fetches`, the counts, replaced atomically so a ticket is read without the lock."""

    def __init__(self, clone_path: Path) -> None:
        self.lock_path = clone_path.with_name(f"{clone_path.name}.fetch.lock")
        self.counts_path = clone_path.with_name(f"{clone_path.name}.fetches")

    def ticket(self) -> int:
        return self._read().begun

    def settled(self) -> bool:
        """Whether the last fetch begun has completed (none is under way, none just failed)."""
        counts = self._read()
        return counts.begun == counts.answered

    @contextlib.contextmanager
    def turn(self) -> Iterator[Turn]:
        """Hold the clone's fetch lock (waiting for another process's fetch to end); SourceError
        when it cannot be had (a full disk cannot make the file)."""
        try:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            lock = open(self.lock_path, "a")  # noqa: SIM115 (closed below, after the turn)
        except OSError as exc:
            raise SourceError(f"cannot lock {self.lock_path} to fetch: {exc.strerror}") from exc
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process ends
            yield Turn(self, self._read())

    def _read(self) -> Counts:
        try:
            begun, answered = self.counts_path.read_text().split()
            return Counts(int(begun), int(answered))
        except (OSError, ValueError):
            return Counts()  # never fetched, or the file lost: every ticket is then due a fetch

    def _write(self, counts: Counts) -> None:
        body = f"{counts.begun} {counts.answered}\n".encode()
        # Counts not written only cost fetches: a fetch begun unseen is not waited for, one
        # completed unseen answers nobody. Not worth failing the fetch (a full disk, say).
        with contextlib.suppress(OSError):
            write_atomically(self.counts_path, body, sync="none")


class Turn:
    def __init__(self, turns: FetchTurns, counts: Counts) -> None:
        self._turns = turns
        self._counts = counts
        self._number: int | None = None

    def answered(self, ticket: int) -> bool:
        """Whether a fetch begun after `ticket` was taken has completed."""
        return self._counts.answered > ticket

    def begin(self) -> None:
        self._number = self._counts.begun + 1
        self._counts = Counts(self._number, self._counts.answered)
        self._turns._write(self._counts)

    def completed(self) -> None:
        if self._number is not None:
            self._counts = Counts(self._counts.begun, self._number)
            self._turns._write(self._counts)
