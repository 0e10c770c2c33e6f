"""Deterministic .tar.gz archives of a Git tree: the same commit always gives the same bytes.

Entries are sorted, owners and modes fixed, every mtime the commit's time, and the gzip header
holds no timestamp or name; executable bits and symlinks are kept, but a symlink out of the
archive root and any path with `..` or `.git` are left out. Trees are walked with a stack of our
own; blobs stream in chunks from one `git cat-file --batch` per archive, every one asked for up
front by a thread of its own so that git inflates the next while we work (bench/RESULTS.md:
bench.archives); the tar stream is deflated in blocks on every core (`parallel_gzip.py`). Limits
of `archives:` refuse a tree with a message naming the limit. See docs/how-it-works/internals.md."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import stat
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, BinaryIO, cast

from dulwich.objects import Commit, ObjectID, Tree
from dulwich.repo import Repo

from gitreg.errors import ArchiveError, ArchiveTooLarge, NotReadYet
from gitreg.git.archive_limits import ArchiveLimits
from gitreg.git.clone import folder_tree, open_repo
from gitreg.git.parallel_gzip import ParallelGzip

log = logging.getLogger(__name__)

# Part of every cache key: bump when the bytes of an archive change. 2: deflated in blocks on
# several threads (parallel_gzip.py); the same tar inside as 1.
FORMAT_VERSION = "2"
_COPY_CHUNK = 1 << 20  # a file's bytes from git to the tar stream in reads of this size at most
_PIPE_SIZE = 1 << 20  # /proc/sys/fs/pipe-max-size's default
MAX_LINK_TARGET = 4096  # bytes; longer is no path a checkout could follow


def archive_of_clone(
    clone_path: Path, commit_id: str, folder: str, out: BinaryIO, limits: ArchiveLimits
) -> None:
    """Write the tree of `commit_id` (or its `folder`) in the clone at `clone_path` as a .tar.gz
    to `out`."""
    with open_repo(clone_path) as repo:
        write_archive(repo, commit_id, folder, out, limits)


def write_archive(
    repo: Repo, commit_id: str, folder: str, out: BinaryIO, limits: ArchiveLimits | None = None
) -> None:
    """Write the tree of `commit_id` (or its `folder`) as a .tar.gz to `out`."""
    limits = limits or ArchiveLimits()
    entries, commit_time = tree_entries(repo, commit_id, folder, limits)
    links = {path for path, mode, _ in entries if stat.S_ISLNK(mode)}
    wanted = [sha for _, mode, sha in entries if stat.S_ISREG(mode) or stat.S_ISLNK(mode)]
    with (
        Blobs(Path(repo.controldir()), wanted) as blobs,
        ParallelGzip(out) as gz,
        tarfile.TarFile(
            # Written only, and asked where it is: all tarfile does with it in mode "w".
            fileobj=cast(IO[bytes], gz),
            mode="w",
            format=tarfile.PAX_FORMAT,
            encoding="utf-8",
            copybufsize=_COPY_CHUNK,
        ) as tar,
    ):
        total = 0
        for path, mode, sha in entries:
            total += _add(blobs, tar, path, mode, sha, links, commit_time, limits)
            if total > limits.max_size:
                raise too_large(commit_id, limits)


def tree_entries(
    repo: Repo, commit_id: str, folder: str, limits: ArchiveLimits
) -> tuple[list[tuple[str, int, bytes]], int]:
    """(path, mode, sha) of every entry an archive of `commit_id` (or its `folder`) holds, in
    the order it holds them, and the commit's time; ArchiveTooLarge past max_entries; NotReadYet
    when the clone lacks the commit (a replica's first fetch under way: modules/warm_start.py)."""
    root = folder_tree(repo, commit_id, folder)
    if root is None and ObjectID(commit_id.encode()) not in repo.object_store:
        raise NotReadYet(f"commit {commit_id} is not in the clone yet")
    if root is None:
        raise ArchiveError(f"commit {commit_id} has no folder {folder!r}")
    commit = repo[commit_id.encode()]
    assert isinstance(commit, Commit)
    entries = []
    for entry in _walk(repo, root):
        entries.append(entry)
        if len(entries) > limits.max_entries:
            raise ArchiveTooLarge(
                f"commit {commit_id[:12]} has over {limits.max_entries} files and folders"
                f"{f' in {folder}' if folder else ''}: over the limit archives.max_entries"
            )
    return entries, commit.commit_time


def too_large(commit_id: str, limits: ArchiveLimits) -> ArchiveTooLarge:
    return ArchiveTooLarge(
        f"commit {commit_id[:12]} holds over {size_text(limits.max_size)} of files: "
        "over the limit archives.max_size"
    )


def file_too_large(path: str, size: int, limits: ArchiveLimits) -> ArchiveTooLarge:
    return ArchiveTooLarge(
        f"{path} is {size_text(size)}: over the limit archives.max_file_size"
        f" ({size_text(limits.max_file_size)})"
    )


def _walk(repo: Repo, root: Tree) -> Iterator[tuple[str, int, bytes]]:
    """(path, mode, sha) of every entry under `root`, depth first, sorted by name; with a stack
    of our own, so that no depth of folders can exhaust Python's."""
    stack: list[tuple[Iterator[tuple[bytes, int, bytes]], str]] = [(_sorted(root), "")]
    while stack:
        items, prefix = stack[-1]
        item = next(items, None)
        if item is None:
            stack.pop()
            continue
        raw, mode, sha = item
        name = raw.decode("utf-8", "surrogateescape")
        path = f"{prefix}{name}"
        if not _safe_name(name):
            log.warning("archive: leaving out %r: not a safe path", path)
            continue
        yield path, mode, sha
        if stat.S_ISDIR(mode):
            subtree = repo[sha]
            if not isinstance(subtree, Tree):
                raise ArchiveError(f"{path} is a folder whose object is no tree")
            stack.append((_sorted(subtree), f"{path}/"))


def _sorted(tree: Tree) -> Iterator[tuple[bytes, int, bytes]]:
    return iter(sorted((e.path, e.mode, e.sha) for e in tree.items()))


def _add(
    blobs: Blobs,
    tar: tarfile.TarFile,
    path: str,
    mode: int,
    sha: bytes,
    links: set[str],
    mtime: int,
    limits: ArchiveLimits,
) -> int:
    """Add one entry; the number of file bytes it added."""
    if stat.S_ISDIR(mode):
        tar.addfile(_info(path, tarfile.DIRTYPE, 0o755, mtime))
    elif stat.S_ISLNK(mode):
        raw = blobs.read(sha, MAX_LINK_TARGET)
        target = raw.decode("utf-8", "surrogateescape") if raw is not None else ""
        if not link_stays_inside(path, target, links):
            log.warning(
                "archive: leaving out symlink %r -> %r: it may point outside the archive",
                path,
                target[:200],
            )
            return 0
        info = _info(path, tarfile.SYMTYPE, 0o777, mtime)
        info.linkname = target
        tar.addfile(info)
    elif stat.S_ISREG(mode):
        size, stream = blobs.open(sha)
        if size > limits.max_file_size:
            blobs.skip(size)
            raise file_too_large(path, size, limits)
        info = _info(path, tarfile.REGTYPE, 0o755 if mode & 0o111 else 0o644, mtime)
        info.size = size
        tar.addfile(info, stream)
        blobs.done()
        return size
    # Anything else is a submodule (gitlink): its commit is not in this repository.
    return 0


class Blobs:
    """File contents streamed from one `git cat-file --batch`: each blob's size first, then its
    bytes in chunks, so that no file is ever held whole in memory. The blobs are asked for in
    the order given, all at once, and must be read in that order."""

    def __init__(self, git_dir: Path, shas: list[bytes]) -> None:
        self._process = subprocess.Popen(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=1 << 16,
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._in, self._out = self._process.stdin, self._process.stdout
        # A larger pipe than Linux's 64 KiB: git writes, and this process reads, in larger
        # pieces, each waking the other less often. Elsewhere, or refused: the default.
        with contextlib.suppress(AttributeError, OSError):
            fcntl.fcntl(self._out.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
        # A thread writes the requests: git answers as it reads them, and were this thread to
        # write them all before reading, both pipes would fill and each side wait on the other.
        self._asking = threading.Thread(
            target=self._ask, args=(shas,), name="gitreg-archive-blobs", daemon=True
        )
        self._asking.start()

    def _ask(self, shas: list[bytes]) -> None:
        try:
            for start in range(0, len(shas), 256):
                self._in.write(b"".join(sha + b"\n" for sha in shas[start : start + 256]))
            self._in.close()
        except (BrokenPipeError, ValueError):
            pass  # stopped early (a limit, a full disk): git was ended, see __exit__

    def open(self, sha: bytes) -> tuple[int, IO[bytes]]:
        """The blob's size, and the stream to read exactly that many bytes from; then done()."""
        header = self._out.readline().split()
        if len(header) != 3 or header[0] != sha or header[1] != b"blob":
            raise ArchiveError(f"object {sha.decode()} is missing or is no file")
        return int(header[2]), self._out

    def done(self) -> None:
        if self._out.read(1) != b"\n":
            raise ArchiveError("git cat-file sent more or less than the blob's size")

    def skip(self, size: int) -> None:
        while size > 0:
            chunk = self._out.read(min(size, 1 << 20))
            if not chunk:
                raise ArchiveError("git cat-file ended in the middle of a blob")
            size -= len(chunk)
        self.done()

    def read(self, sha: bytes, most: int) -> bytes | None:
        """A small blob whole; None when it is over `most` bytes (and then skipped)."""
        size, stream = self.open(sha)
        if size > most:
            self.skip(size)
            return None
        data = stream.read(size)
        self.done()
        return data

    def __enter__(self) -> Blobs:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc is not None:
            # Stopped mid-blob (a limit, a full disk): git may be blocked writing what nobody
            # reads any more, so it is ended at once rather than waited for.
            self._process.kill()
        self._asking.join()
        with contextlib.suppress(OSError):  # what a killed git did not read: nobody will
            self._in.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._out.close()


def size_text(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    scaled = size / 1024
    for unit in ("KiB", "MiB"):
        if scaled < 1024:
            return f"{scaled:.1f} {unit}"
        scaled /= 1024
    return f"{scaled:.1f} GiB"


def _info(path: str, kind: bytes, mode: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(path)
    info.type = kind
    info.mode = mode
    info.mtime = mtime
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _safe_name(name: str) -> bool:
    return (
        name not in ("", ".", "..")
        and "/" not in name
        and "\\" not in name
        and "\0" not in name
        and name.lower() != ".git"
    )


def link_stays_inside(path: str, target: str, links: set[str]) -> bool:
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
