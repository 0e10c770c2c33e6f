"""Deterministic .tar.gz archives of a Git tree: the same commit always gives the same bytes.

Entries are sorted, owners and modes fixed, every mtime is the commit's time and the gzip
header carries no timestamp or name. Executable bits and symlinks are kept; a symlink that
points outside the archive root, and any path with `..` or `.git`, is left out.
"""

from __future__ import annotations

import gzip
import io
import logging
import stat
import tarfile
from collections.abc import Iterator
from typing import BinaryIO

from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

from gitreg.errors import ArchiveError
from gitreg.gitsource import folder_tree

log = logging.getLogger(__name__)

FORMAT_VERSION = "1"  # part of every cache key: bump when the bytes of an archive change
_COMPRESSLEVEL = 6


def write_archive(repo: Repo, commit_id: str, folder: str, out: BinaryIO) -> None:
    """Write the tree of `commit_id` (or its `folder`) as a .tar.gz to `out`."""
    root = folder_tree(repo, commit_id, folder)
    if root is None:
        raise ArchiveError(f"commit {commit_id} is not in the mirror, or has no folder {folder!r}")
    commit = repo[commit_id.encode()]
    assert isinstance(commit, Commit)
    entries = list(_walk(repo, root, ""))
    links = {path for path, mode, _ in entries if stat.S_ISLNK(mode)}
    with (
        gzip.GzipFile(
            filename="", mode="wb", fileobj=out, mtime=0, compresslevel=_COMPRESSLEVEL
        ) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8") as tar,
    ):
        for path, mode, sha in entries:
            _add(repo, tar, path, mode, sha, links, commit.commit_time)


def _walk(repo: Repo, tree: Tree, prefix: str) -> Iterator[tuple[str, int, bytes]]:
    """(path, mode, sha) of every entry under `tree`, depth first, sorted by name."""
    for entry in sorted(tree.items(), key=lambda e: e.path):
        name = entry.path.decode("utf-8", "surrogateescape")
        path = f"{prefix}{name}"
        if not _safe_name(name):
            log.warning("archive: leaving out %r: not a safe path", path)
            continue
        yield path, entry.mode, entry.sha
        if stat.S_ISDIR(entry.mode):
            subtree = repo[entry.sha]
            assert isinstance(subtree, Tree)
            yield from _walk(repo, subtree, f"{path}/")


def _add(
    repo: Repo, tar: tarfile.TarFile, path: str, mode: int, sha: bytes, links: set[str], mtime: int
) -> None:
    if stat.S_ISDIR(mode):
        tar.addfile(_info(path, tarfile.DIRTYPE, 0o755, mtime))
    elif stat.S_ISLNK(mode):
        target = _blob(repo, sha).decode("utf-8", "surrogateescape")
        if not _link_stays_inside(path, target, links):
            log.warning(
                "archive: leaving out symlink %s -> %s: it may point outside the archive",
                path,
                target,
            )
            return
        info = _info(path, tarfile.SYMTYPE, 0o777, mtime)
        info.linkname = target
        tar.addfile(info)
    elif stat.S_ISREG(mode):
        data = _blob(repo, sha)
        info = _info(path, tarfile.REGTYPE, 0o755 if mode & 0o111 else 0o644, mtime)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    # Anything else is a submodule (gitlink): its commit is not in this repository.


def _info(path: str, kind: bytes, mode: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(path)
    info.type = kind
    info.mode = mode
    info.mtime = mtime
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _blob(repo: Repo, sha: bytes) -> bytes:
    blob = repo[sha]
    assert isinstance(blob, Blob)
    return blob.as_raw_string()


def _safe_name(name: str) -> bool:
    return (
        name not in ("", ".", "..")
        and "/" not in name
        and "\\" not in name
        and "\0" not in name
        and name.lower() != ".git"
    )


def _link_stays_inside(path: str, target: str, links: set[str]) -> bool:
    """Resolve `target` from the link's folder, refusing to climb above the root or to pass
    through another symlink (whose own target would make a lexical check meaningless)."""
    if not target or target.startswith("/") or "\\" in target or "\0" in target:
        return False
    parts = path.split("/")[:-1]
    segments = [s for s in target.split("/") if s not in ("", ".")]
    for i, segment in enumerate(segments):
        if segment == "..":
            if not parts:
                return False
            parts.pop()
            continue
        parts.append(segment)
        if i < len(segments) - 1 and "/".join(parts) in links:
            return False
    return True
