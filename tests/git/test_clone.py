"""A bare clone read across fetches: packed refs, and what it remembers between scans."""

from __future__ import annotations

from pathlib import Path

from gitreg.git.clone import BareClone, TagRef
from gitreg.git.location import RepoLocation
from tests.support.gitrepo import GitRepo


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
