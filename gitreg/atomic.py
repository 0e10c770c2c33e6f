"""Atomic file writes: a reader sees the old file or the whole new one, never a part of it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Literal

TEMP_SUFFIX = ".tmp"
FILE_MODE = 0o644  # not mkstemp's 0600, which would hide a file from a web server or a sync user

# What survives a crash of the machine (a running reader always sees old or new, whatever this):
# "none": nothing is promised (the file may be empty after a crash): for what is only history;
# "file": the file's data is on disk before the rename: after a crash, old or new, whole;
# "folder": the rename too: after a crash, the new file, whole (what must not be forgotten).
Sync = Literal["none", "file", "folder"]


@contextlib.contextmanager
def atomic_writer(path: Path, *, mode: int = FILE_MODE, sync: Sync = "file") -> Iterator[BinaryIO]:
    """A file to write `path`'s new content into, renamed over `path` when the block ends
    normally. When the block raises (anything, cancellation included) or the rename fails, the
    temporary file is removed and `path` is as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # In the target's folder: a rename within one file system is atomic. Dot-named and ending
    # in .tmp: no reader of these folders takes it for one of its files. The writer's process id
    # in the name tells, after a crash, which ones nobody is writing any more (sweep_stale).
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=path.parent
    )
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode)
            yield out
            if sync != "none":
                out.flush()
                os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync == "folder":
        _fsync_folder(path.parent)


def write_atomically(
    path: Path, data: bytes, *, mode: int = FILE_MODE, sync: Sync = "file"
) -> None:
    """Replace `path` with `data` (see `atomic_writer`)."""
    with atomic_writer(path, mode=mode, sync=sync) as out:
        out.write(data)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sweep_stale(root: Path, skip: tuple[str, ...] = ()) -> int:
    """Remove the temporary files under `root` that a crashed writer left (a kill -9 during an
    archive build, a power cut): those whose writing process is gone, or is this one, which has
    written none yet when it calls this at start-up. Folders named in `skip` are not entered.
    Returns how many were removed."""
    removed = 0
    for folder, subfolders, files in os.walk(root):
        if folder == str(root):
            subfolders[:] = [d for d in subfolders if d not in skip]
        for name in files:
            if name.startswith(".") and name.endswith(TEMP_SUFFIX) and _abandoned(name):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(folder, name))
                    removed += 1
    return removed


def abandoned(name: str) -> bool:
    """Whether a temporary name, `.NAME.PID.RANDOM.tmp`, is one its writing process left: that
    process is gone, or is this one (before it wrote any)."""
    return _abandoned(name)


def _abandoned(name: str) -> bool:
    parts = name.removesuffix(TEMP_SUFFIX).split(".")  # "", NAME..., PID, RANDOM
    pid = int(parts[-2]) if len(parts) > 3 and parts[-2].isdigit() else None
    if pid is None or pid == os.getpid():
        return True  # written before process ids were in the name, or by our previous life
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # another user's live process
    return False
