"""What is known of each repository's syncing, kept in cache_dir so `gitreg list` can show a
running server's view: last success, last error, and the mechanism that last changed it.

It lives beside the RegistrySnapshot, not in it: every poll changes it (its last success),
while what is served changes rarely, and a poll must not copy the snapshot to say "still the
same". Each repository's status is one frozen value, replaced whole."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal

from gitreg.atomic import write_atomically
from gitreg.git.location import RepoLocation

Mechanism = Literal[
    "startup",
    "poll",
    "watch",
    "webhook",
    "fresh-read",
    "on-demand",
    "reload",
    "cli",
    "peer",
    "cooldown",
]


@dataclass(frozen=True)
class RepoStatus:
    last_success: float | None = None  # the last fetch or poll that worked
    last_error: str | None = None  # None after a success
    last_update: float | None = None  # when its versions last changed
    mechanism: Mechanism | None = None  # what made that change
    fingerprint: str | None = None  # of the versions served, to tell a change across restarts

    def succeeded(self, when: float, fingerprint: str, mechanism: Mechanism) -> RepoStatus:
        if fingerprint != self.fingerprint:
            return RepoStatus(when, None, when, mechanism, fingerprint)
        return replace(self, last_success=when, last_error=None)

    def failed(self, error: str) -> RepoStatus:
        return replace(self, last_error=error)

    @property
    def never_fetched(self) -> bool:
        """No fetch or poll of the repository ever worked (on this cache_dir)."""
        return self.last_success is None

    @property
    def state(self) -> str:
        if self.never_fetched:
            return "never fetched"
        return "failing" if self.last_error else "ok"


# A modification time within this of the last success written is that success (a float's
# round trip through the file system's nanoseconds); a later success is a poll interval later.
_SAME = 0.001


class StatusStore:
    """One small JSON file per repository; losing them loses nothing but history.

    A poll that finds a working repository unchanged moves only its last success: the file's
    modification time is set to it (one system call) rather than the file rewritten, which cost
    as much as a sixth of a poll's own CPU. While the file says the last sync worked, the later
    of its `last_success` and its modification time is the last success."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def read(self, name: str) -> RepoStatus:
        path = self.directory / f"{name}.json"
        try:
            with path.open("rb") as file:
                data = json.loads(file.read())
                touched = os.fstat(file.fileno()).st_mtime
            status = RepoStatus(**data)
        except (OSError, ValueError, TypeError):
            return RepoStatus()
        working = status.last_error is None and status.last_success is not None
        if working and touched > (status.last_success or 0.0) + _SAME:  # a later success
            return replace(status, last_success=touched)
        return status

    def touch(self, name: str, status: RepoStatus) -> None:
        """`status`, which differs from the one stored only by a later last success."""
        assert status.last_success is not None and status.last_error is None
        try:
            os.utime(self.directory / f"{name}.json", (status.last_success, status.last_success))
        except OSError:  # not written yet, or removed: the whole of it
            self.write(name, status)

    def write(self, name: str, status: RepoStatus) -> None:
        # Written at every poll of every repository, and only history: no fsync (its cost at
        # that rate: bench/RESULTS.md, bench.polling); a file emptied by a crash reads as
        # nothing known.
        with contextlib.suppress(OSError):
            body = json.dumps(asdict(status)).encode()
            path = self.directory / f"{name}.json"
            write_atomically(path, body, sync="none")
            if status.last_success is not None:  # its time, not the write's: see `read`
                os.utime(path, (status.last_success, status.last_success))


class StatusBoard:
    """Every repository's RepoStatus: in memory for requests, and in the StatusStore."""

    def __init__(self, store: StatusStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._statuses: dict[RepoLocation, RepoStatus] = {}

    def __getitem__(self, location: RepoLocation) -> RepoStatus:
        return self._statuses.get(location) or RepoStatus()

    def track(self, repositories: Iterable[tuple[RepoLocation, str]]) -> None:
        """Hold the statuses of these repositories (location, clone name): a new one's is read
        from the store (a restart keeps its history), a repository not named is forgotten."""
        with self._lock:
            wanted = dict(repositories)
            self._statuses = {
                location: self._statuses.get(location) or self.store.read(name)
                for location, name in wanted.items()
            }

    def reread(self, location: RepoLocation, name: str) -> None:
        """Take a tracked repository's status from the store (another worker on the same
        cache_dir synced it)."""
        with self._lock:
            if location in self._statuses:
                self._statuses[location] = self.store.read(name)

    def update(
        self, location: RepoLocation, name: str, change: Callable[[RepoStatus], RepoStatus]
    ) -> RepoStatus:
        """Replace one repository's status by `change(current)`, and store it; a repository
        no longer tracked (removed from the catalog meanwhile) is left alone."""
        with self._lock:
            before = self[location]
            status = change(before)
            if location not in self._statuses:
                return status
            self._statuses[location] = status
            if _only_succeeded_again(before, status):
                self.store.touch(name, status)
            else:
                self.store.write(name, status)
            return status


def _only_succeeded_again(before: RepoStatus, after: RepoStatus) -> bool:
    """Whether `after` is `before` with a later last success, both working."""
    return (
        before.last_success is not None
        and after.last_success is not None
        and after.last_success >= before.last_success
        and before.last_error is None
        and replace(before, last_success=after.last_success) == after
    )
