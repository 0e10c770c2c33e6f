"""A Git server that moves (another port, scheme or host spelling for the same repository) does
not make its clone cold: the new clone is seeded from the old one on disk, and the tags it serves
come from the new URL alone."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gitreg.git.clone import BareClone
from gitreg.git.location import RepoLocation
from gitreg.git.seeding import INDEX, INDEXED, SEED_REFS
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import bare_clone, git_daemon


def _clone(url: str, cache: Path) -> BareClone:
    return BareClone(RepoLocation.parse(url, cache), cache, None, 30.0)


def _refs(clone: BareClone) -> list[str]:
    listed = subprocess.run(
        ["git", "-C", str(clone.path), "for-each-ref", "--format=%(refname)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return listed.stdout.split()


def _links(cache: Path) -> dict[str, str]:
    """The index's entries (a link each), as the names of the clones they name."""
    index = cache / "git" / INDEX
    entries = [entry for entry in index.iterdir() if not entry.name.startswith(".")]
    return {entry.name: os.readlink(entry).removeprefix("../") for entry in entries}


@pytest.mark.parametrize("made_by", ["this version", "the previous version"])
def test_a_moved_server_seeds_the_new_clone_from_the_old_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, made_by: str
) -> None:
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1"))
    work.release("v1.1.0", module_files("2"))
    bare_clone(work.path, tmp_path / "server" / "org" / "repo.git")
    cache = tmp_path / "cache"
    with git_daemon(tmp_path / "server") as old_base:
        old = _clone(f"{old_base}/org/repo.git", cache)
        old.fetch()
    assert list(_links(cache).values()) == [old.path.name]  # the index names the clone
    if made_by == "the previous version":  # its clones have their marker file, and no index
        shutil.rmtree(cache / "git" / INDEX)
    # Meanwhile at the server: v1.0.0 deleted, v1.2.0 added; then it answers on another port.
    work.release("v1.2.0", module_files("3"))
    bare_clone(work.path, tmp_path / "server" / "org" / "repo.git")
    subprocess.run(
        ["git", "-C", str(tmp_path / "server/org/repo.git"), "tag", "-d", "v1.0.0"],
        check=True,
        capture_output=True,
    )
    caplog.set_level(logging.INFO, logger="gitreg.git.seeding")
    with git_daemon(tmp_path / "server") as new_base:
        new = _clone(f"{new_base}/org/repo.git", cache)
        assert new.path != old.path  # another URL, another clone
        assert new.fetch()
    assert "starts from" in caplog.text and old.path.name in caplog.text
    assert sorted(t.name for t in new.tags()) == ["v1.1.0", "v1.2.0"]  # the new URL's alone
    assert not [ref for ref in _refs(new) if ref.startswith(SEED_REFS)]  # the seed is gone
    assert sorted(t.name for t in old.tags()) == ["v1.0.0", "v1.1.0"]  # the donor untouched
    assert list(_links(cache).values()) == [new.path.name]  # the newest clone: the next donor
    assert (cache / "git" / INDEX / INDEXED).is_file()  # the old clones entered, once


def test_a_clone_of_another_repository_is_no_seed(tmp_path: Path) -> None:
    for name in ("one", "two"):
        work = GitRepo(tmp_path / name)
        work.release("v1.0.0", module_files(name))
        bare_clone(work.path, tmp_path / "server" / f"{name}.git")
    cache = tmp_path / "cache"
    with git_daemon(tmp_path / "server") as base:
        _clone(f"{base}/one.git", cache).fetch()
        two = _clone(f"{base}/two.git", cache)
        two.fetch()
    assert not (two.path / "refs" / "gitreg" / "seed").exists()
    assert [t.name for t in two.tags()] == ["v1.0.0"]
