"""Deterministic zips of real repositories, as OpenTofu's OCI module packages hold them: the
tarball's entries, modes and contents, the same bytes for the same commit in another process,
and the same limits."""

from __future__ import annotations

import asyncio
import hashlib
import io
import stat
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from dulwich.repo import Repo

from gitreg.errors import ArchiveTooLarge
from gitreg.git.archive import write_archive
from gitreg.git.archive_limits import ArchiveLimits
from gitreg.git.zip_archive import zip_of_clone
from gitreg.modules.archive_cache import ZIP, ArchiveCache, ArchiveKey
from tests.support.gitrepo import GitRepo, git


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write(
        {
            "modules/vpc/main.tf": 'module "name" { source = "./sub" }\n',
            "modules/vpc/sub/main.tf": 'output "x" { value = 1 }\n',
            "modules/vpc/scripts/run.sh": "#!/bin/sh\necho hi\n",
            "modules/vpc/big.txt": "x" * 300_000,
            "README.md": "hello\n",
        }
    )
    (repo.path / "modules/vpc/scripts/run.sh").chmod(0o755)
    (repo.path / "modules/vpc/link.tf").symlink_to("sub/main.tf")
    (repo.path / "modules/vpc/escape").symlink_to("../../../outside")
    repo.commit("tree")
    return repo


def _zip(
    repo: GitRepo, commit: str, folder: str = "", limits: ArchiveLimits | None = None
) -> bytes:
    out = io.BytesIO()
    zip_of_clone(repo.path / ".git", commit, folder, out, limits or ArchiveLimits())
    return out.getvalue()


def _tarball(repo: GitRepo, commit: str, folder: str) -> dict[str, tuple[int, bytes]]:
    out = io.BytesIO()
    with Repo(str(repo.path)) as dulwich_repo:
        write_archive(dulwich_repo, commit, folder, out)
    with tarfile.open(fileobj=io.BytesIO(out.getvalue()), mode="r:gz") as tar:
        found = {}
        for member in tar.getmembers():
            data = tar.extractfile(member).read() if member.isfile() else b""  # type: ignore[union-attr]
            if member.issym():
                data = member.linkname.encode()
            name = f"{member.name}/" if member.isdir() else member.name
            found[name] = (member.mode, data)
        return found


def test_the_zip_holds_what_the_tarball_holds(repo: GitRepo) -> None:
    commit = git(repo.path, "rev-parse", "HEAD")
    with zipfile.ZipFile(io.BytesIO(_zip(repo, commit, "modules/vpc"))) as package:
        assert package.testzip() is None
        zipped = {
            i.filename: (stat.S_IMODE(i.external_attr >> 16), package.read(i))
            for i in package.infolist()
        }
        link = package.getinfo("link.tf")
        assert stat.S_ISLNK(link.external_attr >> 16)
        assert {i.date_time for i in package.infolist()} == {(2023, 11, 14, 22, 13, 20)}
    assert zipped == _tarball(repo, commit, "modules/vpc")
    assert "escape" not in zipped  # it points outside the archive, as the tarball leaves it out
    assert zipped["scripts/run.sh"][0] == 0o755 and zipped["main.tf"][0] == 0o644


def test_same_commit_same_bytes_across_processes(repo: GitRepo) -> None:
    commit = git(repo.path, "rev-parse", "HEAD")
    first = _zip(repo, commit, "modules/vpc")
    assert first == _zip(repo, commit, "modules/vpc")
    script = (
        "import io, sys\nfrom pathlib import Path\n"
        "from gitreg.git.archive_limits import ArchiveLimits\n"
        "from gitreg.git.zip_archive import zip_of_clone\n"
        "out = io.BytesIO()\n"
        "zip_of_clone(Path(sys.argv[1]), sys.argv[2], 'modules/vpc', out, ArchiveLimits())\n"
        "sys.stdout.buffer.write(out.getvalue())\n"
    )
    other = subprocess.run(
        [sys.executable, "-c", script, str(repo.path / ".git"), commit],
        capture_output=True,
        check=True,
    ).stdout
    assert hashlib.sha256(other).hexdigest() == hashlib.sha256(first).hexdigest()


def test_limits_refuse_as_for_the_tarball(repo: GitRepo) -> None:
    commit = git(repo.path, "rev-parse", "HEAD")
    with pytest.raises(ArchiveTooLarge, match=r"archives\.max_file_size"):
        _zip(repo, commit, "", ArchiveLimits(max_file_size=100_000))
    with pytest.raises(ArchiveTooLarge, match=r"archives\.max_size"):
        _zip(repo, commit, "", ArchiveLimits(max_size=200_000))
    with pytest.raises(ArchiveTooLarge, match=r"archives\.max_entries"):
        _zip(repo, commit, "", ArchiveLimits(max_entries=3))


def test_the_cache_keeps_zips_beside_the_tarballs(repo: GitRepo, tmp_path: Path) -> None:
    commit = git(repo.path, "rev-parse", "HEAD")
    cache = ArchiveCache(tmp_path / "cache", form=ZIP)
    path = asyncio.run(cache.get(repo.path / ".git", ArchiveKey(commit, "modules/vpc")))
    assert path.suffix == ".zip" and "zips" in path.parts
    assert path.read_bytes() == _zip(repo, commit, "modules/vpc")
