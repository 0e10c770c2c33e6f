"""What is known of each repository's syncing, kept in cache_dir so `gitreg list` can show a
running server's view: last success, last error, and the mechanism that last changed it.

It lives beside the RegistrySnapshot, not in it: every poll changes it (its last success),
while what is served changes rarely, and a poll must not copy the snapshot to say "still the
same". Each repository's status is one frozen value, replaced whole."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal

from gitreg.atomic import write_atomically
from gitreg.git.location import RepoLocation

Mechanism = Literal[
    "startup", "poll", "watch", "webhook", "fresh-read", "on-demand", "reload", "cli", "peer"
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


class StatusStore:
    """One small JSON file per repository; losing them loses nothing but history."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def read(self, name: str) -> RepoStatus:
        try:
            data = json.loads((self.directory / f"{name}.json").read_text())
            return RepoStatus(**data)
        except (OSError, ValueError, TypeError):
            return RepoStatus()

    def write(self, name: str, status: RepoStatus) -> None:
        # Written at every poll of every repository, and only history: no fsync (it costs
        # 3 ms a write here; a file emptied by a crash reads as nothing known).
        with contextlib.suppress(OSError):
            body = json.dumps(asdict(status)).encode()
            write_atomically(self.directory / f"{name}.json", body, sync="none")


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
            status = change(self[location])
            if location not in self._statuses:
                return status
            self._statuses[location] = status
            self.store.write(name, status)
            return status
