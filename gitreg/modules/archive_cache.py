"""Archives on disk, keyed by commit and folder: built once, off the event loop, atomically; as
modules.v1 serves them (.tar.gz) or as OpenTofu's OCI module packages hold them (.zip)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import fcntl
import hashlib
import logging
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import BinaryIO

from gitreg.atomic import atomic_writer
from gitreg.errors import ArchiveError, ArchiveTooLarge, NotReadYet
from gitreg.git import archive, zip_archive
from gitreg.git.archive_limits import ArchiveLimits

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

    def refused(self) -> dict[str, str]:
        """Archive name → why it is refused, for status."""
        return {key.name: str(error) for key, error in self._refused.items()}

    def path(self, key: ArchiveKey) -> Path:
        return self.directory / key.commit[:2] / f"{key.name}{self.form.suffix}"

    async def get(self, clone_path: Path, key: ArchiveKey) -> Path:
        """The archive's path, building it first if needed; concurrent callers share one build."""
        path = self.path(key)
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
            task = asyncio.create_task(self._build_soon(clone_path, key, path))
            self._building[key] = task
            task.add_done_callback(lambda done: self._finished(key, done))
        return await asyncio.shield(task)

    async def _build_soon(self, clone_path: Path, key: ArchiveKey, path: Path) -> Path:
        async with self._slots:
            if not path.is_file():
                loop = asyncio.get_running_loop()
                # In this task's context, the first requester's: its lines carry its request id.
                build = partial(contextvars.copy_context().run, self._build, clone_path, key, path)
                await loop.run_in_executor(self._pool, build)
        return path

    def _finished(self, key: ArchiveKey, task: asyncio.Task[Path]) -> None:
        del self._building[key]
        error = None if task.cancelled() else task.exception()
        if isinstance(error, ArchiveTooLarge):
            self._refused[key] = error
        if error:
            log.warning("archive %s failed: %s", key.name, error)

    def _build(self, clone_path: Path, key: ArchiveKey, path: Path) -> None:
        # Workers on one host share the cache: one builds, under a lock of the archive's own,
        # and the others wait for it, then find the file.
        with _exclusive(self.directory.parent / "locks" / key.commit[:2] / f"{key.name}.lock"):
            if path.is_file():
                log.debug("archive %s was built by another worker", path.name)
                return
            self._build_alone(clone_path, key, path)

    def _build_alone(self, clone_path: Path, key: ArchiveKey, path: Path) -> None:
        try:
            # Readers see the whole archive or none of it.
            with atomic_writer(path) as out:
                self.form.write(clone_path, key.commit, key.folder, out, self.limits)
        except (ArchiveError, NotReadYet):
            raise
        except Exception as exc:
            # Disk full, a clone deleted under us, a corrupt object: a 503, never a partial file.
            raise ArchiveError(f"cannot build archive {path.name}: {exc!r}") from exc
        log.info("built archive %s (%d bytes)", path.name, path.stat().st_size)


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
