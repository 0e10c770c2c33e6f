"""The ledger: which commit each published tag pointed to when gitreg first saw it.

`TagLedger` is what a sync needs of it, per repository; the state registry.yaml asks for says
where it lives (`pg_ledger.py` under `state: postgres`). `DiskLedger`, the default: one JSON file
per repository in cache_dir, so that a tag moved or deleted later can be held to what was
published. Written atomically, under a file
lock, because `gitreg accept` may write it while a server reads it. Beside it, the SHA-256 of
each archive first built of the repository's commits: later builds must give the same bytes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import time
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from gitreg.atomic import write_atomically
from gitreg.errors import SourceError

_DIGESTS = ".digests.json"  # beside `NAME.json`, the ledger: `NAME.digests.json`


@dataclass(frozen=True)
class Published:
    """A tag as the ledger holds it: its commit, when gitreg first saw it, and whether it waits
    under `publish_when` (`pending`); once published, a tag never waits again."""

    commit: str
    first_seen: float
    pending: bool = False


class TagLedger(Protocol):
    """One repository's ledger. First writer wins: `record` never changes a tag already in it
    (only `accept`, an operator's decision, does). A shared ledger that cannot be reached raises
    StateUnavailable from `record` and `accept`; `read` may then answer what it last confirmed."""

    def version(self) -> object:
        """A value that changes whenever the ledger does (an operator's `gitreg accept`, say)."""
        ...

    def fingerprint(self) -> str:
        """A digest of what `read` answers: the same while the ledger holds the same tags at
        the same commits (a persisted read of a repository is checked against it)."""
        ...

    def read(self) -> dict[str, Published]: ...

    def record(
        self, tags: Mapping[str, str], pending: Collection[str] = (), now: float | None = None
    ) -> dict[str, Published]:
        """Add the tags not yet in the ledger (tag → commit), first seen `now` (by default, the
        time), those in `pending` as waiting under `publish_when`; return the whole ledger, whose
        commits for those tags may be another writer's, who was first."""
        ...

    def publish(self, tags: Collection[str]) -> dict[str, Published]:
        """Mark `tags` published (no longer pending), for good; return the whole ledger."""
        ...

    def accept(self, tag: str, commit: str) -> None:
        """An operator's decision: `commit` is now what `tag` publishes."""
        ...

    def digest(self, archive: str) -> str | None:
        """The SHA-256 (hex) recorded for the archive file `archive`, or None."""
        ...

    def record_digest(self, archive: str, digest: str) -> str:
        """Record `digest` for `archive` unless one is recorded; return the one recorded (the
        first writer's, which may be another replica's)."""
        ...


def published_digest(published: Mapping[str, Published]) -> str:
    """A digest of a ledger's published tags and their commits."""
    text = "".join(
        f"{tag} {p.commit}{' pending' if p.pending else ''}\n"
        for tag, p in sorted(published.items())
    )
    return hashlib.sha256(text.encode()).hexdigest()


class DiskLedger:
    """The ledger of one repository in a JSON file (one server, or workers on one host)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def version(self) -> int | None:
        """Changes whenever the file does."""
        try:
            return self.path.stat().st_mtime_ns
        except OSError:
            return None

    def fingerprint(self) -> str:
        """The file's bytes, digested: no parsing (a start checks 1,000 ledgers with it)."""
        try:
            return hashlib.sha256(self.path.read_bytes()).hexdigest()
        except FileNotFoundError:
            return published_digest({})
        except OSError as exc:
            raise SourceError(f"cannot read the ledger {self.path}: {exc}") from exc

    def read(self) -> dict[str, Published]:
        data = _json_of(self.path, "the ledger")
        return {
            tag: Published(e["commit"], e["first_seen"], bool(e.get("pending")))
            for tag, e in data.get("tags", {}).items()
        }

    def record(
        self, tags: Mapping[str, str], pending: Collection[str] = (), now: float | None = None
    ) -> dict[str, Published]:
        with self._locked():
            published = self.read()
            now = time.time() if now is None else now
            new = {
                t: Published(c, now, t in pending) for t, c in tags.items() if t not in published
            }
            if new:
                published.update(new)
                self._write(published)
            return published

    def publish(self, tags: Collection[str]) -> dict[str, Published]:
        with self._locked():
            published = self.read()
            due = [t for t in tags if t in published and published[t].pending]
            if due:
                published.update((t, replace(published[t], pending=False)) for t in due)
                self._write(published)
            return published

    def accept(self, tag: str, commit: str) -> None:
        with self._locked():
            published = self.read()
            published[tag] = Published(commit, time.time())
            self._write(published)

    def digest(self, archive: str) -> str | None:
        return self._digests().get(archive)

    def record_digest(self, archive: str, digest: str) -> str:
        with self._locked():
            digests = self._digests()
            if archive not in digests:
                digests[archive] = digest
                body = json.dumps(dict(sorted(digests.items())), indent=1).encode()
                write_atomically(self._digests_path, body, sync="folder")
            return digests[archive]

    @property
    def _digests_path(self) -> Path:
        # A file of its own: the ledger's fingerprint (its file's bytes) stays the tags'.
        return self.path.with_suffix(_DIGESTS)

    def _digests(self) -> dict[str, str]:
        return _digests_in(self._digests_path)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def replace(self, published: Mapping[str, Published]) -> None:
        """Hold exactly `published` (a copy of a shared ledger, kept for when it is away)."""
        with self._locked():
            if self.read() != published:
                self._write(published)

    def _write(self, published: Mapping[str, Published]) -> None:
        body = {
            "tags": {
                # "pending" only while true: a ledger without publish_when reads as before.
                t: {"commit": p.commit, "first_seen": p.first_seen, **_pending(p)}
                for t, p in sorted(published.items())
            }
        }
        # "folder": a published commit must outlive a crash of the machine.
        write_atomically(self.path, json.dumps(body, indent=1).encode(), sync="folder")


def _pending(p: Published) -> dict[str, bool]:
    return {"pending": True} if p.pending else {}


def recorded_digests(folder: Path) -> dict[str, dict[str, str]]:
    """The archive digests recorded beside the ledgers in `folder`: clone name → archive file
    name → SHA-256 (hex); SourceError when a file cannot be read."""
    files = sorted(folder.glob(f"*{_DIGESTS}"))
    return {file.name.removesuffix(_DIGESTS): _digests_in(file) for file in files}


def _digests_in(path: Path) -> dict[str, str]:
    data = _json_of(path, "the digests")
    return {str(k): str(v) for k, v in data.items()}


def _json_of(path: Path, what: str) -> dict[str, Any]:
    """The JSON object in `path`, {} when there is no file; SourceError when it cannot be read."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise SourceError(f"cannot read {what} {path}: {exc}") from exc
    return data if isinstance(data, dict) else {}
