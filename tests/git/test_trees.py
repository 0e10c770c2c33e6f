"""What docs read of a commit: a folder's `*.tf` and README files, its submodules' and
examples' one level down, nothing else; large files left out and said so; commit times; a
release's tree and tag object."""

from __future__ import annotations

import gc
import os
import shutil
from pathlib import Path

import pytest

from gitreg.errors import SourceError
from gitreg.git.trees import DocFile, commit_times, doc_files, release_objects, root_files
from tests.support.gitrepo import GitRepo, git


def test_doc_files_of_a_folder(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write(
        {
            "mod/main.tf": "a",
            "mod/README.md": "r",
            "mod/notes.txt": "no",
            "mod/main.tf.json": "no",
            "mod/big.tf": "x" * 101,
            "mod/nested/deeper.tf": "no: only modules/ and examples/ are entered",
            "mod/modules/one/main.tf": "m1",
            "mod/modules/one/inner/deep.tf": "no: one level down only",
            "mod/modules/README.md": "no: not a submodule",
            "mod/examples/basic/readme.md": "e",
            "mod/examples/basic/main.tf": "e1",
            "other/main.tf": "no: another folder",
        }
    )
    os.symlink("/etc/passwd", repo.path / "mod" / "link.tf")
    commit = repo.commit()
    files = doc_files(repo.path / ".git", commit, "mod", most=100)
    assert files == [
        DocFile("README.md", b"r"),
        DocFile("big.tf", None, "larger than 100 bytes: not read"),
        DocFile("main.tf", b"a"),
        DocFile("modules/one/main.tf", b"m1"),
        DocFile("examples/basic/main.tf", b"e1"),
        DocFile("examples/basic/readme.md", b"e"),
    ]
    root = doc_files(repo.path / ".git", commit, "")
    assert root == []  # the repository's root holds no .tf of its own


def test_a_module_in_a_folder_reads_the_repository_root_examples_too(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write(
        {
            "modules/net/main.tf": "n",
            "modules/dns/main.tf": "no: another module",
            "examples/net-basic/main.tf": "e1",
            "examples/net-basic/deeper/main.tf": "no: one level down only",
            "examples/README.md": "no: not an example",
            "examples/dns/main.tf": "e2",
        }
    )
    commit = repo.commit()
    assert doc_files(repo.path / ".git", commit, "modules/net") == [
        DocFile("main.tf", b"n"),
        DocFile("../../examples/dns/main.tf", b"e2"),
        DocFile("../../examples/net-basic/main.tf", b"e1"),
    ]
    # At the root, they are the module's own examples (and modules/ its submodules); in
    # examples/, the folder is one of them.
    assert [f.path for f in doc_files(repo.path / ".git", commit, "")] == [
        "modules/dns/main.tf",
        "modules/net/main.tf",
        "examples/dns/main.tf",
        "examples/net-basic/main.tf",
    ]
    assert doc_files(repo.path / ".git", commit, "examples/dns") == [DocFile("main.tf", b"e2")]


def test_a_missing_folder_commit_or_clone_is_a_source_error(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    commit = repo.release("v1", {"main.tf": ""})
    with pytest.raises(SourceError, match="has no folder nope"):
        doc_files(repo.path / ".git", commit, "nope")
    with pytest.raises(SourceError, match="has no folder"):
        doc_files(repo.path / ".git", "0" * 40, "")
    with pytest.raises(SourceError, match="no clone"):
        doc_files(tmp_path / "absent.git", commit, "")


def test_commit_times(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    commit = repo.release("v1", {"main.tf": ""})
    assert commit_times(repo.path / ".git", [commit, "f" * 40]) == {commit: 1700000000}
    assert commit_times(tmp_path / "absent.git", [commit]) == {}


def test_a_root_file_at_many_commits_at_once(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    said = repo.release("v1", {"main.tf": "a", ".gitreg.yaml": "deprecated: Old.\n"})
    large = repo.release("v2", {".gitreg.yaml": "x" * 101})
    os.remove(repo.path / ".gitreg.yaml")
    (repo.path / ".gitreg.yaml").mkdir()
    folder = repo.release("v3", {".gitreg.yaml/inside": "a folder, not a file"})
    shutil.rmtree(repo.path / ".gitreg.yaml")
    none = repo.release("v4", {"main.tf": "b"})
    unknown = "0" * 40
    commits = [said, large, folder, none, unknown, said]
    found = root_files(repo.path / ".git", commits, ".gitreg.yaml", most=100)
    assert found == {said: b"deprecated: Old.\n"}
    assert root_files(repo.path / ".git", [], ".gitreg.yaml", most=100) == {}
    with pytest.raises(SourceError):
        root_files(tmp_path / "nothing", [said], ".gitreg.yaml", most=100)


def test_a_release_is_read_as_its_tree_and_annotated_tag_object(tmp_path: Path) -> None:
    """The tag object only while the tag is annotated and points at the commit: a lightweight
    tag, one moved since or one deleted (its commit pinned) has none to name."""
    repo = GitRepo(tmp_path / "repo")
    first = repo.release("v1.0.0", {"main.tf": "# one\n"}, annotated=True)
    repo.release("v1.1.0", {"main.tf": "# two\n"})
    tree = git(repo.path, "rev-parse", "v1.0.0^{tree}")
    assert release_objects(repo.path / ".git", "v1.0.0", first) == (
        tree,
        git(repo.path, "rev-parse", "v1.0.0"),
    )
    second = git(repo.path, "rev-parse", "v1.1.0")
    assert release_objects(repo.path / ".git", "v1.1.0", second)[1] == ""  # lightweight
    repo.tag("v1.0.0", annotated=True, target=second, force=True)  # moved
    assert release_objects(repo.path / ".git", "v1.0.0", first) == (tree, "")
    git(repo.path, "tag", "-d", "v1.0.0")
    assert release_objects(repo.path / ".git", "v1.0.0", first) == (tree, "")
    with pytest.raises(SourceError, match="missing from the clone"):
        release_objects(repo.path / ".git", "v1.0.0", "0" * 40)


def test_a_read_leaves_nothing_for_the_collector(tmp_path: Path) -> None:
    """A dulwich Repo is a reference cycle holding the refs it read: left to the collector,
    the start-up's reads and a cold docs warming (the collector off) kept every one of them.
    Parted as it closes, nothing of a read waits for the collector (the repository packed, as
    clones are, and its refs too)."""
    repo = GitRepo(tmp_path / "repo")
    commits = [
        repo.release(f"v1.{n}.0", {"main.tf": f'output "n" {{ value = {n} }}\n'}) for n in range(3)
    ]
    git(repo.path, "gc", "-q")
    read = [
        commit_times(repo.path / ".git", commits),
        doc_files(repo.path / ".git", commits[0], ""),
    ]
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        assert commit_times(repo.path / ".git", commits) == read[0]
        assert doc_files(repo.path / ".git", commits[0], "") == read[1]
        gc.collect()
        left = {type(o).__name__ for o in gc.garbage}
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not left & {"Repo", "DiskRefsContainer", "DiskObjectStore"}
