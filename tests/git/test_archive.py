"""Deterministic archives from real repositories, and the cache that builds each one once."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import io
import random
import subprocess
import sys
import tarfile
import tracemalloc
from pathlib import Path

import pytest
from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

from gitreg.errors import ArchiveError, ArchiveTooLarge, NotReadYet
from gitreg.git.archive import write_archive
from gitreg.git.archive_limits import ArchiveLimits
from gitreg.modules.archive_cache import TARBALL, ZIP, ArchiveCache, ArchiveFormat, ArchiveKey
from gitreg.state.ledger import TagLedger
from tests.support.gitrepo import GitRepo, git


def _archive(repo_path: Path, commit: str, folder: str = "") -> bytes:
    out = io.BytesIO()
    with Repo(str(repo_path)) as repo:
        write_archive(repo, commit, folder, out)
    return out.getvalue()


def _members(data: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: m for m in tar.getmembers()}


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write(
        {
            "modules/vpc/main.tf": 'module "name" { source = "../naming" }\n',
            "modules/vpc/scripts/run.sh": "#!/bin/sh\necho hi\n",
            "modules/naming/main.tf": 'output "x" { value = 1 }\n',
            "README.md": "hello\n",
        }
    )
    (repo.path / "modules/vpc/scripts/run.sh").chmod(0o755)
    (repo.path / "modules/vpc/link.tf").symlink_to("../naming/main.tf")
    (repo.path / "modules/vpc/escape").symlink_to("../../../outside")
    (repo.path / "modules/vpc/absolute").symlink_to("/etc/passwd")
    (repo.path / "modules/up").symlink_to("..")
    (repo.path / "through").symlink_to("modules/up/..")
    repo.commit("tree")
    return repo


def test_archive_contents(repo: GitRepo) -> None:
    commit = git(repo.path, "rev-parse", "HEAD")
    members = _members(_archive(repo.path, commit))
    assert list(members) == sorted(members)  # sorted, depth first
    run = members["modules/vpc/scripts/run.sh"]
    assert run.mode == 0o755 and members["README.md"].mode == 0o644
    assert (
        members["modules/vpc/link.tf"].issym()
        and members["modules/vpc/link.tf"].linkname == "../naming/main.tf"
    )
    assert members["modules/up"].issym()  # points at the root: inside
    for left_out in ("modules/vpc/escape", "modules/vpc/absolute", "through"):
        assert left_out not in members
    assert {(m.uid, m.gid, m.uname, m.gname) for m in members.values()} == {(0, 0, "", "")}
    assert {m.mtime for m in members.values()} == {1700000000}


def test_folder_archive_holds_only_the_folder(repo: GitRepo) -> None:
    commit = git(repo.path, "rev-parse", "HEAD")
    members = _members(_archive(repo.path, commit, "modules/vpc"))
    assert "main.tf" in members and "scripts/run.sh" in members
    assert "link.tf" not in members  # ../naming is outside this archive
    with pytest.raises(ArchiveError, match="no folder"):
        _archive(repo.path, commit, "modules/absent")


def test_same_commit_same_bytes_across_processes(repo: GitRepo) -> None:
    commit = git(repo.path, "rev-parse", "HEAD")
    first, second = _archive(repo.path, commit), _archive(repo.path, commit)
    assert first == second
    assert first[4:8] == b"\0\0\0\0"  # no gzip timestamp
    script = (
        "import io, sys\nfrom dulwich.repo import Repo\nfrom gitreg.git.archive import write_archive\n"
        "out = io.BytesIO()\nwrite_archive(Repo(sys.argv[1]), sys.argv[2], '', out)\n"
        "sys.stdout.buffer.write(out.getvalue())\n"
    )
    other = subprocess.run(
        [sys.executable, "-c", script, str(repo.path), commit], capture_output=True, check=True
    ).stdout
    assert hashlib.sha256(other).hexdigest() == hashlib.sha256(first).hexdigest()


def test_same_tree_in_a_fresh_clone_gives_same_bytes(repo: GitRepo, tmp_path: Path) -> None:
    commit = git(repo.path, "rev-parse", "HEAD")
    clone = tmp_path / "clone.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo.path), str(clone))
    assert _archive(clone, commit) == _archive(repo.path, commit)


def test_unsafe_names_are_left_out(tmp_path: Path) -> None:
    # git itself refuses to write such trees; a hostile server could still serve them.
    repo = Repo.init_bare(str(tmp_path / "hostile.git"), mkdir=True)
    blob = Blob.from_string(b"data\n")
    inner = Tree()
    inner.add(b"config", 0o100644, blob.id)
    tree = Tree()
    for name in (b"..", b".git", b".GIT", b"ok.tf"):
        tree.add(
            name,
            0o100644 if name != b".git" else 0o040000,
            blob.id if name != b".git" else inner.id,
        )
    commit = Commit()
    commit.tree, commit.author = tree.id, b"x <x@x>"
    commit.committer, commit.message = b"x <x@x>", b"hostile"
    commit.commit_time = commit.author_time = 1700000000
    commit.commit_timezone = commit.author_timezone = 0
    for obj in (blob, inner, tree, commit):
        repo.object_store.add_object(obj)
    out = io.BytesIO()
    write_archive(repo, commit.id.decode(), "", out)
    assert list(_members(out.getvalue())) == ["ok.tf"]


def test_cache_builds_once_for_concurrent_requests(repo: GitRepo, tmp_path: Path) -> None:
    commit = git(repo.path, "rev-parse", "HEAD")
    builds = []

    class CountingCache(ArchiveCache):
        def _build(
            self, clone_path: Path, key: ArchiveKey, path: Path, ledger: TagLedger | None
        ) -> None:
            builds.append(key)
            super()._build(clone_path, key, path, ledger)

    cache = CountingCache(tmp_path / "cache")

    async def many() -> list[Path]:
        return await asyncio.gather(
            *(cache.get(repo.path / ".git", ArchiveKey(commit)) for _ in range(20))
        )

    paths = asyncio.run(many())
    assert len(set(paths)) == 1 and len(builds) == 1
    assert paths[0].read_bytes() == _archive(repo.path, commit)
    assert not [p for p in paths[0].parent.iterdir() if p.name.endswith(".tmp")]
    asyncio.run(many())
    assert len(builds) == 1  # from disk now


def test_failed_build_leaves_nothing_behind(repo: GitRepo, tmp_path: Path) -> None:
    cache = ArchiveCache(tmp_path / "cache")
    key = ArchiveKey(git(repo.path, "rev-parse", "HEAD"), "modules/absent")
    with pytest.raises(ArchiveError):
        asyncio.run(cache.get(repo.path / ".git", key))
    assert not cache.path(key).exists()
    assert not list(cache.path(key).parent.iterdir())


@pytest.mark.parametrize("form", [TARBALL, ZIP], ids=["tar.gz", "zip"])
def test_a_clone_before_its_first_fetch_ends_is_not_read_yet(
    repo: GitRepo, tmp_path: Path, form: ArchiveFormat
) -> None:
    """A replica serving what another one read (gitreg.modules.warm_start) makes its clone, then
    fetches into it: an archive asked for in between waits for the fetch (a 503 to retry), as
    one asked for before the clone was made, and is built once the commit is there."""
    clone = tmp_path / "clone.git"
    git(tmp_path, "init", "-q", "--bare", str(clone))
    cache = ArchiveCache(tmp_path / "cache", form=form)
    key = ArchiveKey(git(repo.path, "rev-parse", "HEAD"))
    with pytest.raises(NotReadYet):
        asyncio.run(cache.get(tmp_path / "not-made-yet.git", key))
    with pytest.raises(NotReadYet):
        asyncio.run(cache.get(clone, key))
    git(clone, "fetch", "-q", str(repo.path), "+refs/heads/*:refs/heads/*")
    assert asyncio.run(cache.get(clone, key)).is_file()


def _commit_of(repo: Repo, tree: Tree) -> str:
    commit = Commit()
    commit.tree, commit.author = tree.id, b"x <x@x>"
    commit.committer, commit.message = b"x <x@x>", b"made by hand"
    commit.commit_time = commit.author_time = 1700000000
    commit.commit_timezone = commit.author_timezone = 0
    repo.object_store.add_object(commit)
    return commit.id.decode()


def test_a_tree_thousands_of_folders_deep_is_archived(tmp_path: Path) -> None:
    repo = Repo.init(str(tmp_path / "deep"), mkdir=True)
    blob = Blob.from_string(b"bottom\n")
    repo.object_store.add_object(blob)
    tree = Tree()
    tree.add(b"main.tf", 0o100644, blob.id)
    repo.object_store.add_object(tree)
    for _ in range(3000):  # far past Python's recursion limit
        parent = Tree()
        parent.add(b"d", 0o040000, tree.id)
        repo.object_store.add_object(parent)
        tree = parent
    out = io.BytesIO()
    write_archive(repo, _commit_of(repo, tree), "", out)
    members = _members(out.getvalue())
    assert len(members) == 3001
    assert "/".join(["d"] * 3000) + "/main.tf" in members


def test_a_large_file_streams_through_in_bounded_memory(repo: GitRepo) -> None:
    size = 64 * 2**20
    with (repo.path / "big.bin").open("wb") as big:
        big.truncate(size)  # zeros: a few kilobytes in Git, 64 MiB in the archive
    repo.commit("big file")
    commit = git(repo.path, "rev-parse", "HEAD")
    out = io.BytesIO()
    tracemalloc.start()
    try:
        with Repo(str(repo.path)) as dulwich_repo:
            write_archive(dulwich_repo, commit, "", out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert _members(out.getvalue())["big.bin"].size == size
    # The file's bytes never sit in memory whole: the peak is the compressed output and buffers.
    assert peak - len(out.getvalue()) < 8 * 2**20


@pytest.mark.parametrize(
    ("limits", "named"),
    [
        (ArchiveLimits(max_file_size=1000), "archives.max_file_size"),
        (ArchiveLimits(max_size=1500), "archives.max_size"),
        (ArchiveLimits(max_entries=3), "archives.max_entries"),
    ],
)
def test_a_tree_over_a_limit_is_refused_naming_it(
    repo: GitRepo, limits: ArchiveLimits, named: str
) -> None:
    (repo.path / "modules/vpc/data.json").write_text("x" * 1200)
    (repo.path / "modules/naming/data.json").write_text("y" * 800)
    repo.commit("data")
    commit = git(repo.path, "rev-parse", "HEAD")
    with Repo(str(repo.path)) as dulwich_repo, pytest.raises(ArchiveTooLarge, match=named):
        write_archive(dulwich_repo, commit, "", io.BytesIO(), limits)
    # Under the limits, the same tree is archived.
    assert "modules/vpc/data.json" in _members(_archive(repo.path, commit))


PINNED = "cd2fbdfaa92abcbca182ed3029a4b9cf2779aae479039ecf44c30f8ad60f805c"
# The tar inside, as FORMAT_VERSION 1 (one zlib stream) held it too: version 2 changed how it is
# compressed, not what it holds.
PINNED_TAR = "3fafff8a388900d5be1bee19dfa2f4355db3cdcaec2ce75f4264aef64665afd8"


def test_the_bytes_of_a_fixed_tree_are_pinned(repo: GitRepo) -> None:
    """The promise, pinned: this tree gives these bytes, on every machine whose Python has zlib's
    deflate, and every release (a change of them needs a new FORMAT_VERSION). A file of several
    MB crosses many of the blocks that are deflated apart; random bytes are stored as they are."""
    repo.write({"data/large.bin": random.Random(7).randbytes(3_000_000).hex()[:3_000_000]})
    (repo.path / "data/packed.zip").write_bytes(random.Random(8).randbytes(700_000))
    commit = repo.commit("large")
    data = _archive(repo.path, commit)
    assert hashlib.sha256(gzip.decompress(data)).hexdigest() == PINNED_TAR
    assert hashlib.sha256(data).hexdigest() == PINNED
