"""Deterministic zip archives of a Git tree, as OpenTofu's `oci://` module packages hold them.

They have the same entries as the tarball of the same commit and folder (`archive.py`), and the
same bytes for the same commit on every replica. Entries are in the tarball's order, every time
stamp the commit's (zip cannot say before 1980), modes fixed as the tarball fixes them (0644,
0755 for executables and folders, symlinks as symlinks), no extra fields, and each file deflated
at one fixed level. Contents stream from git in chunks, under the same limits as the tarball.
See docs/opentofu-oci.md."""

from __future__ import annotations

import stat
import time
import zipfile
from pathlib import Path
from typing import BinaryIO

from gitreg.errors import ArchiveError
from gitreg.git.archive import (
    MAX_LINK_TARGET,
    Blobs,
    file_too_large,
    link_stays_inside,
    too_large,
    tree_entries,
)
from gitreg.git.archive_limits import ArchiveLimits
from gitreg.git.clone import open_repo

FORMAT_VERSION = "1"  # part of every cache key: bump when the bytes of a zip change
_COMPRESSLEVEL = 6
_EARLIEST = (1980, 1, 1, 0, 0, 0)
_CHUNK = 1 << 20
_UNIX = 3  # zip's "made by" system: Unix, so that readers honour the modes


def zip_of_clone(
    clone_path: Path, commit_id: str, folder: str, out: BinaryIO, limits: ArchiveLimits
) -> None:
    """Write the tree of `commit_id` (or its `folder`) in the clone at `clone_path` as a zip to
    `out`, which must be seekable (each file's header is completed once it is written)."""
    with open_repo(clone_path) as repo:
        entries, commit_time = tree_entries(repo, commit_id, folder, limits)
        stamp = max(_EARLIEST, time.gmtime(commit_time)[:6])
        links = {path for path, mode, _ in entries if stat.S_ISLNK(mode)}
        wanted = [sha for _, mode, sha in entries if stat.S_ISREG(mode) or stat.S_ISLNK(mode)]
        with (
            Blobs(Path(repo.controldir()), wanted) as blobs,
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=_COMPRESSLEVEL) as zf,
        ):
            total = 0
            for path, mode, sha in entries:
                total += _add(blobs, zf, path, mode, sha, links, stamp, limits)
                if total > limits.max_size:
                    raise too_large(commit_id, limits)


def _add(
    blobs: Blobs,
    zf: zipfile.ZipFile,
    path: str,
    mode: int,
    sha: bytes,
    links: set[str],
    stamp: tuple[int, int, int, int, int, int],
    limits: ArchiveLimits,
) -> int:
    """Add one entry; the number of file bytes it added."""
    if stat.S_ISDIR(mode):
        info = _info(f"{path}/", stat.S_IFDIR | 0o755, stamp, zipfile.ZIP_STORED)
        info.external_attr |= 0x10  # MS-DOS's folder flag, which some readers look for
        zf.writestr(info, b"")
    elif stat.S_ISLNK(mode):
        raw = blobs.read(sha, MAX_LINK_TARGET)
        target = raw.decode("utf-8", "surrogateescape") if raw is not None else ""
        if raw is None or not link_stays_inside(path, target, links):
            return 0  # left out, as the tarball leaves it out (and logs it there)
        zf.writestr(_info(path, stat.S_IFLNK | 0o777, stamp, zipfile.ZIP_STORED), raw)
    elif stat.S_ISREG(mode):
        size, stream = blobs.open(sha)
        if size > limits.max_file_size:
            blobs.skip(size)
            raise file_too_large(path, size, limits)
        perms = 0o755 if mode & 0o111 else 0o644
        info = _info(path, stat.S_IFREG | perms, stamp, zipfile.ZIP_DEFLATED)
        info.file_size = size  # so that zip64 is chosen up front, from the size
        with zf.open(info, "w") as entry:
            left = size
            while left > 0:
                chunk = stream.read(min(left, _CHUNK))
                if not chunk:
                    raise ArchiveError("git cat-file ended in the middle of a blob")
                entry.write(chunk)
                left -= len(chunk)
        blobs.done()
        return size
    return 0  # a submodule (gitlink): its commit is not in this repository


def _info(
    name: str, mode: int, stamp: tuple[int, int, int, int, int, int], compression: int
) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, stamp)
    info.create_system = _UNIX
    info.external_attr = mode << 16
    info.compress_type = compression
    return info
