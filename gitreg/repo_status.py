"""What is known of each repository's syncing, kept in cache_dir so `gitreg list` can show a
running server's view: last success, last error, and the mechanism that last changed it."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal

Mechanism = Literal["startup", "poll", "watch", "webhook", "on-demand", "reload", "cli"]


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
        with contextlib.suppress(OSError):
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".status-", dir=self.directory)
            with os.fdopen(fd, "w") as out:
                json.dump(asdict(status), out)
            os.replace(tmp, self.directory / f"{name}.json")
