"""The folder source: the Git repositories, bare or not, under a folder whose path matches its
glob; nothing else, and nothing a symlink leads to outside the folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.sources.folder import FolderLister
from gitreg.sources.found import SourceUnavailable
from tests.support.gitrepo import GitRepo, git


def test_bare_and_work_tree_repositories_matching_the_glob(tmp_path: Path) -> None:
    root = tmp_path / "srv"
    GitRepo(root / "team-a" / "terraform-aws-vpc").release("v1.0.0", {"main.tf": "\n"})
    git(
        tmp_path,
        "clone",
        "-q",
        "--bare",
        str(root / "team-a/terraform-aws-vpc"),
        str(root / "team-b/terraform-aws-dns.git"),
    )
    (root / "team-b" / "notes").mkdir()  # a folder, not a repository
    (root / "team-b" / "terraform-aws-plain").mkdir()  # matches the glob, no Git in it
    listed = FolderLister(root, "*/terraform-*").repositories()
    assert [(r.name, r.path, r.default_branch) for r in listed] == [
        ("terraform-aws-vpc", "team-a/terraform-aws-vpc", "main"),
        ("terraform-aws-dns", "team-b/terraform-aws-dns.git", "main"),
    ]
    assert listed[0].clone_local == str(root / "team-a/terraform-aws-vpc")
    assert (listed[0].clone_https, listed[0].clone_ssh, listed[0].archived) == ("", "", False)


def test_a_symlink_out_of_the_folder_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "srv"
    root.mkdir()
    GitRepo(tmp_path / "elsewhere" / "terraform-aws-secret").commit()
    (root / "terraform-aws-secret").symlink_to(tmp_path / "elsewhere" / "terraform-aws-secret")
    GitRepo(root / "real" / "terraform-aws-vpc").commit()
    (root / "terraform-aws-inside").symlink_to(root / "real" / "terraform-aws-vpc")
    names = [r.path for r in FolderLister(root, "terraform-*").repositories()]
    assert names == ["terraform-aws-inside"]


def test_a_folder_that_is_gone_is_unavailable_not_empty(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailable, match="cannot be read"):
        FolderLister(tmp_path / "gone", "*").repositories()
