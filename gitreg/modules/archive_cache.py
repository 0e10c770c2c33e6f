"""Archives on disk, keyed by commit and folder: built once, off the event loop, atomically; as
modules.v1 serves them (.tar.gz) or as OpenTofu's OCI module packages hold them (.zip).
Given the repository's ledger, a build's SHA-256 is recorded there the first time, and compared
with the record every later time: bytes that differ are never put in place (`ArchiveMismatch`)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import fcntl
import hashlib
import logging
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import BinaryIO

from gitreg.atomic import atomic_writer
from gitreg.errors import (
    ArchiveError,
    ArchiveMismatch,
    ArchiveTooLarge,
    NotReadYet,
    StateUnavailable,
)
from gitreg.git import archive, zip_archive
from gitreg.git.archive_limits import ArchiveLimits
from gitreg.state.ledger import TagLedger

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ArchiveKey:
    """What an archive's bytes depend on: the commit, and the folder when only it is archived."""

    commit: str
    folder: str = ""

    @property
    def name(self) -> str:
        """File name and URL name; also the strong ETag, since equal names mean equal bytes."""
        if not self.folder:
            return self.commit
        return f"{self.commit}-{hashlib.sha256(self.folder.encode()).hexdigest()[:16]}"


@dataclass(frozen=True)
class ArchiveFormat:
    """How an archive is written, and where under cache_dir its files are kept (the folder
    names the format's version: bytes of another version are never served)."""

    suffix: str
    folder: str
    write: Callable[[Path, str, str, BinaryIO, ArchiveLimits], None]


TARBALL = ArchiveFormat(".tar.gz", f"archives/v{archive.FORMAT_VERSION}", archive.archive_of_clone)
ZIP = ArchiveFormat(".zip", f"zips/v{zip_archive.FORMAT_VERSION}", zip_archive.zip_of_clone)


class ArchiveCache:
    def __init__(
        self,
        directory: Path,
        max_parallel_builds: int = 2,
        limits: ArchiveLimits | None = None,
        form: ArchiveFormat = TARBALL,
    ) -> None:
        self.form = form
        self.directory = directory / form.folder
        self.limits = limits or ArchiveLimits()
        self._building: dict[ArchiveKey, asyncio.Task[Path]] = {}
        self._slots = asyncio.Semaphore(max_parallel_builds)
        # Threads of its own: a slow Git server or origin, which holds other pools, never
        # delays an archive.
        self._pool = ThreadPoolExecutor(max_parallel_builds, thread_name_prefix="gitreg-archive")
        # Archives over a limit: refused again at once, not rebuilt up to the limit each time.
        self._refused: dict[ArchiveKey, ArchiveTooLarge] = {}
        # Builds whose bytes the ledger's digest refuses: refused at once, never rebuilt.
        self._mismatched: dict[ArchiveKey, ArchiveMismatch] = {}
        # File name → the digest recorded for it, once an archive here was found to match.
        self._digests: dict[str, str] = {}

    def refused(self) -> dict[str, str]:
        """Archive name → why it is refused, for status."""
        return {key.name: str(error) for key, error in self._refused.items()}

    def mismatched(self) -> dict[str, str]:
        """Archive name → how its build differs from the recorded digest, for status."""
        return {key.name: str(error) for key, error in self._mismatched.items()}

    def known_digest(self, key: ArchiveKey) -> str | None:
        """The digest of `key`'s archive when this process already knows it matches the record."""
        return self._digests.get(f"{key.name}{self.form.suffix}")

    async def digest(self, clone_path: Path, key: ArchiveKey, ledger: TagLedger) -> str:
        """The SHA-256 (hex) the ledger records for `key`'s archive, once an archive here is
        known to match it: built (and recorded or compared) first when there is none."""
        file = f"{key.name}{self.form.suffix}"
        known = self._digests.get(file)
        if known is None:
            try:
                path = await self.get(clone_path, key, ledger)
            except NotReadYet:
                # No clone here yet (a replica serving what others read): another's record.
                recorded = await asyncio.to_thread(ledger.digest, file)
                if recorded is None:
                    raise
                return recorded
            known = self._digests.get(file)
            if known is None:  # built before (an earlier run, another worker): its record
                try:
                    known = await asyncio.to_thread(self._recorded, path, ledger)
                except ArchiveMismatch as exc:
                    self._mismatched[key] = exc
                    raise
        return known

    def path(self, key: ArchiveKey) -> Path:
        return self.directory / key.commit[:2] / f"{key.name}{self.form.suffix}"

    async def get(self, clone_path: Path, key: ArchiveKey, ledger: TagLedger | None = None) -> Path:
        """The archive's path, building it first if needed; concurrent callers share one build,
        whose digest `ledger` records, or refuses (ArchiveMismatch) when it records another."""
        path = self.path(key)
        if key in self._mismatched:
            raise self._mismatched[key]
        if path.is_file():
            return path
        if key in self._refused:
            raise self._refused[key]
        if not (clone_path / "objects").is_dir():
            # A replica that serves what others read (gitreg.modules.warm_start) before its
            # clone exists: an archive waits for the clone, like the client, told when to retry.
            # Until its first fetch ends, the build says the same (git.archive.tree_entries).
            raise NotReadYet(f"archive {key.name}: the repository is not cloned here yet")
        task = self._building.get(key)
        if task is None:
            # A task of its own: a client that hangs up does not cancel the build others wait on.
            task = asyncio.create_task(self._build_soon(clone_path, key, path, ledger))
            self._building[key] = task
            task.add_done_callback(lambda done: self._finished(key, done))
        return await asyncio.shield(task)

    async def _build_soon(
        self, clone_path: Path, key: ArchiveKey, path: Path, ledger: TagLedger | None
    ) -> Path:
        async with self._slots:
            if not path.is_file():
                loop = asyncio.get_running_loop()
                # In this task's context, the first requester's: its lines carry its request id.
                run = contextvars.copy_context().run
                build = partial(run, self._build, clone_path, key, path, ledger)
                await loop.run_in_executor(self._pool, build)
        return path

    def _finished(self, key: ArchiveKey, task: asyncio.Task[Path]) -> None:
        del self._building[key]
        error = None if task.cancelled() else task.exception()
        if isinstance(error, ArchiveTooLarge):
            self._refused[key] = error
        elif isinstance(error, ArchiveMismatch):
            self._mismatched[key] = error
        if error:
            log.warning("archive %s failed: %s", key.name, error)

    def _build(
        self, clone_path: Path, key: ArchiveKey, path: Path, ledger: TagLedger | None
    ) -> None:
        # Workers on one host share the cache: one builds, under a lock of the archive's own,
        # and the others wait for it, then find the file.
        with _exclusive(self.directory.parent / "locks" / key.commit[:2] / f"{key.name}.lock"):
            if path.is_file():
                log.debug("archive %s was built by another worker", path.name)
                return
            self._build_alone(clone_path, key, path, ledger)

    def _build_alone(
        self, clone_path: Path, key: ArchiveKey, path: Path, ledger: TagLedger | None
    ) -> None:
        try:
            # Readers see the whole archive or none of it, and only bytes the ledger records.
            with atomic_writer(path) as out:
                self.form.write(clone_path, key.commit, key.folder, out, self.limits)
                if ledger is not None:
                    out.flush()
                    self._compared(path.name, _digest_of(out.fileno()), ledger)
        except (ArchiveError, NotReadYet):
            raise
        except Exception as exc:
            # Disk full, a clone deleted under us, a corrupt object: a 503, never a partial file.
            raise ArchiveError(f"cannot build archive {path.name}: {exc!r}") from exc
        log.info("built archive %s (%d bytes)", path.name, path.stat().st_size)

    def _recorded(self, path: Path, ledger: TagLedger) -> str:
        """The digest recorded for an archive already on disk; recorded from its bytes when
        none is (archives built before digests were)."""
        recorded = ledger.digest(path.name)
        if recorded is None:
            with path.open("rb") as file:
                return self._compared(path.name, _digest_of(file.fileno()), ledger)
        self._digests[path.name] = recorded
        return recorded

    def _compared(self, file: str, digest: str, ledger: TagLedger) -> str:
        """`digest`, recorded for `file` unless one was; ArchiveMismatch when another was."""
        try:
            recorded = ledger.record_digest(file, digest)
        except StateUnavailable:  # the shared state away: what it last confirmed, if anything
            confirmed = ledger.digest(file)
            if confirmed is None:  # served as built, and recorded once the state is back
                log.warning("archive %s: its digest cannot be recorded now; served as built", file)
                return digest
            recorded = confirmed
        if recorded != digest:
            raise ArchiveMismatch(
                f"archive {file} built here has sha256:{digest}, but the ledger records"
                f" sha256:{recorded}: not served (another Git, zlib or gitreg, or tampering)"
            )
        self._digests[file] = digest
        return digest


def _digest_of(fd: int) -> str:
    """The SHA-256 (hex) of the file open at `fd` (readable), from its start."""
    sha, offset = hashlib.sha256(), 0
    while chunk := os.pread(fd, 1 << 20, offset):
        sha.update(chunk)
        offset += len(chunk)
    return sha.hexdigest()


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """An exclusive lock on `lock_path`, across processes. The file stays: removing it would let
    a process that opened it before lock another inode than the next one. ArchiveError (a 503)
    when it cannot be made (a full disk)."""
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(lock_path, "a")  # noqa: SIM115 (closed below, after the build)
    except OSError as exc:
        raise ArchiveError(f"cannot lock {lock_path.name} to build it: {exc.strerror}") from exc
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
