"""Archives on disk, keyed by commit and folder: built once, off the event loop, atomically."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gitreg.archive import FORMAT_VERSION, write_archive
from gitreg.errors import ArchiveError
from gitreg.gitsource import open_repo

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


class ArchiveCache:
    def __init__(self, directory: Path, max_parallel_builds: int = 2) -> None:
        self.directory = directory / "archives" / f"v{FORMAT_VERSION}"
        self._building: dict[ArchiveKey, asyncio.Task[Path]] = {}
        self._slots = asyncio.Semaphore(max_parallel_builds)

    def path(self, key: ArchiveKey) -> Path:
        return self.directory / key.commit[:2] / f"{key.name}.tar.gz"

    async def get(self, mirror_path: Path, key: ArchiveKey) -> Path:
        """The archive's path, building it first if needed; concurrent callers share one build."""
        path = self.path(key)
        if path.is_file():
            return path
        task = self._building.get(key)
        if task is None:
            # A task of its own: a client that hangs up does not cancel the build others wait on.
            task = asyncio.create_task(self._build_soon(mirror_path, key, path))
            self._building[key] = task
            task.add_done_callback(lambda done: self._finished(key, done))
        return await asyncio.shield(task)

    async def _build_soon(self, mirror_path: Path, key: ArchiveKey, path: Path) -> Path:
        async with self._slots:
            if not path.is_file():
                await asyncio.to_thread(self._build, mirror_path, key, path)
        return path

    def _finished(self, key: ArchiveKey, task: asyncio.Task[Path]) -> None:
        del self._building[key]
        if not task.cancelled() and task.exception():
            log.warning("archive %s failed: %s", key.name, task.exception())

    def _build(self, mirror_path: Path, key: ArchiveKey, path: Path) -> None:
        tmp: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".build-", dir=path.parent)
            os.fchmod(fd, 0o644)  # mkstemp's 0600 would hide it from a web server or a sync user
            with os.fdopen(fd, "wb") as out, open_repo(mirror_path) as repo:
                write_archive(repo, key.commit, key.folder, out)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)  # readers see the whole archive or none of it
            tmp = None
        except ArchiveError:
            raise
        except Exception as exc:
            # Disk full, a mirror deleted under us, a corrupt object: a 503, never a partial file.
            raise ArchiveError(f"cannot build archive {path.name}: {exc!r}") from exc
        finally:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)
        log.info("built archive %s (%d bytes)", path.name, path.stat().st_size)
