"""Tag refs compared at the cost of `git ls-remote`.

The remote's are listed by one plain `git` subprocess, the clone's read from packed-refs and
loose ref files (no Git object opened), and a poll that finds both as they were at the last match
answers from one byte comparison. A polling round over unchanged repositories then costs the
`ls-remote` calls themselves (bench/RESULTS.md: bench.polling). See
docs/how-it-works/internals.md."""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import NamedTuple

from gitreg.git.git_command import run_git

TAGS = "refs/tags/"
PEELED = "^{}"


class RemoteTags(NamedTuple):
    """What `git ls-remote --tags` printed, kept as bytes: a poll compares it whole."""

    raw: bytes

    def tags(self, *, peeled: bool = False) -> dict[str, str]:
        """Tag ref → object id; with `peeled`, the `ref^{}` lines of annotated tags too."""
        refs = {}
        for line in self.raw.decode("utf-8", "replace").splitlines():
            sha, _, ref = line.partition("\t")
            if ref and (peeled or not ref.endswith(PEELED)):
                refs[ref] = sha
        return refs


def ls_remote(url: str, env: dict[str, str], timeout: float) -> RemoteTags:
    return RemoteTags(run_git(["ls-remote", "--tags", url], env, timeout))


# What changes whenever a tag ref does: packed-refs' stat, and each loose tag ref's.
_RefsKey = tuple[object, tuple[tuple[str, str, object], ...]]


class LocalTags:
    """A clone's tag refs (refs/tags/NAME → object id), and the last ls-remote found equal
    to them while packed-refs and the loose tag refs stayed the same (by stat: git and dulwich
    replace both by a rename, so a rewrite is a new inode). Only digests are kept: with 1,000
    clones of 500 tags, the refs parsed and the ls-remote output held a lot of memory for
    good (bench/RESULTS.md: bench.polling), to spare a parse a poll makes only when something
    changed."""

    def __init__(self, clone_path: Path) -> None:
        self.path = clone_path
        self._matched: tuple[_RefsKey, bytes] | None = None  # (refs' key, ls-remote's digest)
        self._digest: tuple[_RefsKey, str] | None = None

    def matches(self, remote: RemoteTags) -> bool:
        """Whether the clone holds exactly the remote's tags."""
        key = self._key()
        digest = hashlib.sha256(remote.raw).digest()
        if self._matched == (key, digest):
            return True
        if not (self._packed_lists(key, remote) or self._tags() == remote.tags()):
            return False
        self._matched = (key, digest)
        return True

    def _packed_lists(self, key: _RefsKey, remote: RemoteTags) -> bool:
        """Whether packed-refs, with no loose tag ref beside it (as a fetch leaves a clone),
        holds exactly the remote's tags: compared as bytes, an eighth of the cost of parsing both
        (a start compares 1,000 clones). Both are sorted by name, one `ID NAME` line a tag,
        with a line for what an annotated tag points at (`^ID`; `ID\tNAME^{}`). False also
        when they differ only in form: the parsed comparison then decides."""
        if key[1]:  # loose tag refs
            return False
        try:
            packed = (self.path / "packed-refs").read_bytes()
        except FileNotFoundError:
            return False
        first = packed.find(b" " + TAGS.encode())
        if first < 0:
            return False
        packed = packed[packed.rfind(b"\n", 0, first) + 1 :]
        if packed.startswith(b"^") or b"\n^" in packed:
            packed = b"\n".join(line for line in packed.split(b"\n") if not line.startswith(b"^"))
        printed = remote.raw
        peeled = PEELED.encode()
        if peeled + b"\n" in printed:
            printed = b"\n".join(line for line in printed.split(b"\n") if not line.endswith(peeled))
        return packed == printed.replace(b"\t", b" ")

    def read(self) -> dict[str, str]:
        return self._tags()

    def digest(self) -> str:
        """A digest of the tag refs as written: the tags' part of packed-refs and the loose tag
        refs, bytes as they are (no parsing: a start checks 1,000 clones with it). Any change
        of a tag ref gives another digest; so may a rewrite that changes no tag (refs of other
        kinds sorted among them), and a persisted read is then only not used."""
        key = self._key()
        if self._digest is not None and self._digest[0] == key:
            return self._digest[1]
        digest = hashlib.sha256()
        with contextlib.suppress(FileNotFoundError):
            packed = (self.path / "packed-refs").read_bytes()
            # Sorted by name, so the tags come last (after refs/gitreg/published/, which `keep`
            # writes and a fetch packs): from the first tag's line on, whatever else moves.
            first = packed.find(b" " + TAGS.encode())
            if first >= 0:
                digest.update(packed[packed.rfind(b"\n", 0, first) + 1 :])
        root = self.path / TAGS
        for folder, _, files in sorted(os.walk(root)):
            for name in sorted(files):
                path = Path(folder, name)
                if not name.endswith(".lock"):
                    ref = os.fsencode(path.relative_to(root).as_posix())
                    digest.update(b"\0" + ref + b"\0" + path.read_bytes())
        self._digest = (key, digest.hexdigest())
        return self._digest[1]

    def _tags(self) -> dict[str, str]:
        tags = self._packed()
        tags.update(self._loose())
        return tags

    def _key(self) -> _RefsKey:
        """What changes whenever a tag ref does."""
        packed = _stat(self.path / "packed-refs")
        loose = []
        for folder, _, files in os.walk(self.path / TAGS):
            loose += [(folder, name, _stat(Path(folder, name))) for name in files]
        return packed, tuple(sorted(loose))

    def _packed(self) -> dict[str, str]:
        try:
            text = (self.path / "packed-refs").read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            return {}
        tags = {}
        for line in text.splitlines():
            if line.startswith(("#", "^")):
                continue
            sha, _, ref = line.partition(" ")
            if ref.startswith(TAGS):
                tags[ref] = sha
        return tags

    def _loose(self) -> dict[str, str]:
        tags = {}
        root = self.path / TAGS
        for folder, _, files in os.walk(root):
            for name in files:
                path = Path(folder, name)
                if name.endswith(".lock"):
                    continue  # a ref being written: its old value (packed or loose) stands
                try:
                    value = path.read_bytes().decode("utf-8", "replace").strip()
                except OSError:
                    continue  # removed meanwhile: the next key differs, and the next read sees it
                if value.startswith("ref: "):
                    raise ValueError(f"{path}: a symbolic tag ref")  # never written by a fetch
                ref = os.fsencode(path.relative_to(root).as_posix()).decode("utf-8", "replace")
                tags[TAGS + ref] = value
        return tags


def _stat(path: Path) -> tuple[int, int, int, int] | None:
    try:
        s = path.stat()
    except OSError:
        return None
    return s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns
