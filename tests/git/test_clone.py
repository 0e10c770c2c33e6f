"""A bare clone read across fetches: packed refs, and what it remembers between scans."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from gitreg.errors import SourceError
from gitreg.git import clone as clone_module
from gitreg.git.clone import BareClone, TagRef
from gitreg.git.git_command import run_git
from gitreg.git.location import RepoLocation
from tests.support.gitrepo import GitRepo, git


def _clone(work: GitRepo, tmp_path: Path) -> BareClone:
    location = RepoLocation.parse(str(work.path), tmp_path)
    return BareClone(location, tmp_path / "cache", None, 60.0)


def test_fetch_packs_the_refs_it_wrote(tmp_path: Path) -> None:
    work = GitRepo(tmp_path / "work")
    work.write({"mod/main.tf": "# one\n"})
    commit = work.commit()
    for n in range(5):
        work.tag(f"mod/v1.{n}.0")
    clone = _clone(work, tmp_path)
    clone.fetch()
    loose = [p for p in (clone.path / "refs").rglob("*") if p.is_file()]
    assert loose == []
    assert clone.tags() == [TagRef(f"mod/v1.{n}.0", commit) for n in range(5)]
    assert clone.local_tags() == {f"refs/tags/mod/v1.{n}.0": commit for n in range(5)}


def test_tags_read_again_when_they_change(tmp_path: Path) -> None:
    work = GitRepo(tmp_path / "work")
    work.write({"mod/main.tf": "# one\n"})
    first = work.commit()
    work.tag("v1.0.0")
    work.tag("v1.1.0", annotated=True)
    clone = _clone(work, tmp_path)
    clone.fetch()
    tags = clone.tags()
    assert tags == [TagRef("v1.0.0", first), TagRef("v1.1.0", first)]
    assert tags[0].commit is tags[1].commit  # one string per commit, however many tags
    assert clone.tags() == tags

    work.write({"mod/main.tf": "# two\n"})
    second = work.commit()
    work.tag("v1.0.0", force=True)  # moved
    work.tag("v1.2.0")
    clone.fetch()
    assert clone.tags() == [
        TagRef("v1.0.0", second),
        TagRef("v1.1.0", first),
        TagRef("v1.2.0", second),
    ]


def test_has_folder_across_scans(tmp_path: Path) -> None:
    work = GitRepo(tmp_path / "work")
    work.write({"mod/main.tf": "# one\n"})
    with_folder = work.commit()
    (work.path / "mod" / "main.tf").unlink()
    work.write({"other/main.tf": "# two\n"})
    without = work.commit()
    work.tag("v1.0.0", target=with_folder)
    work.tag("v2.0.0", target=without)
    clone = _clone(work, tmp_path)
    clone.fetch()
    with clone.open() as view:
        for _ in range(2):  # the second time from what the first one found
            assert view.has_folder(with_folder, folder="mod")
            assert not view.has_folder(without, folder="mod")
            assert view.has_folder(without, folder="other")


def test_a_fetch_from_a_stalled_remote_is_given_up_on_and_says_so(tmp_path: Path) -> None:
    with socket.socket() as silent:  # accepts connections (the kernel does), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"git://127.0.0.1:{silent.getsockname()[1]}/r.git"
        clone = BareClone(RepoLocation.parse(url, tmp_path), tmp_path / "cache", None, 0.5)
        with pytest.raises(SourceError, match=r"failed: git fetch did not complete in 0\.5 s"):
            clone.fetch()
    assert clone.exists()  # made, and kept for the next fetch


def test_a_fetch_that_fails_says_what_git_said(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.git"
    missing.mkdir()  # a folder, not a repository
    clone = BareClone(RepoLocation.parse(str(missing), tmp_path), tmp_path / "cache", None, 60.0)
    with pytest.raises(
        SourceError, match=r"fetch from .*nowhere\.git failed: .*Could not read from remote"
    ):
        clone.fetch()
    with pytest.raises(SourceError, match=r"fetch of HEAD from .*nowhere\.git failed"):
        clone.fetch_branch(None)


def test_fetch_changed_fetches_only_when_the_remote_tags_differ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = GitRepo(tmp_path / "work")
    work.write({"mod/main.tf": "# one\n"})
    first = work.commit()
    work.tag("v1.0.0", annotated=True)  # listed with its peeled line: still "unchanged"
    work.tag("v1.1.0")
    clone = _clone(work, tmp_path)
    assert clone.fetch_changed()  # no clone yet: fetched
    commands: list[list[str]] = []

    def recorded(args: list[str], env: dict[str, str], timeout: float) -> bytes:
        commands.append(args)
        return run_git(args, env, timeout)

    monkeypatch.setattr(clone_module, "run_git", recorded)
    assert not clone.fetch_changed()
    assert not any("fetch" in args for args in commands)

    work.write({"mod/main.tf": "# two\n"})
    second = work.commit()
    work.tag("v1.2.0")
    git(work.path, "tag", "-d", "v1.1.0")
    assert clone.fetch_changed()
    assert sum("fetch" in args for args in commands) == 1
    assert clone.tags() == [TagRef("v1.0.0", first), TagRef("v1.2.0", second)]  # pruned too
