"""A repository's identity: every spelling of one repository shares it, so that modules of one
repository are never taken for modules of two (their archives would mix readers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.git.location import RepoLocation
from tests.support.gitrepo import GitRepo


@pytest.mark.parametrize(
    "spellings",
    [
        ["https://git.example.com/infra/mono.git", "https://git.example.com/infra/mono",
         "https://Git.Example.com:443/infra/mono/", "https://git.example.com/Infra/Mono.git",
         "ssh://git@git.example.com:2222/infra/mono.git", "git@git.example.com:infra/mono.git",
         "git://git.example.com/infra/mono", "http://user@git.example.com/infra/mono.git/"],
        ["https://git.example.com/a%20b/c", "git@git.example.com:a b/c.git"],
    ],
)  # fmt: skip
def test_every_spelling_of_a_forge_repository_is_one_identity(
    tmp_path: Path, spellings: list[str]
) -> None:
    identities = {RepoLocation.parse(text, tmp_path).identity for text in spellings}
    assert len(identities) == 1, identities


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("https://git.example.com/infra/mono", "https://git.example.com/infra/mono2"),
        ("https://git.example.com/infra/mono", "https://git.other.example/infra/mono"),
        ("https://git.example.com/infra/mono", "https://git.example.com/platform/mono"),
    ],
)
def test_other_repositories_are_other_identities(tmp_path: Path, one: str, other: str) -> None:
    assert (
        RepoLocation.parse(one, tmp_path).identity != RepoLocation.parse(other, tmp_path).identity
    )


def test_a_working_tree_its_git_folder_and_its_file_url_are_one_repository(
    tmp_path: Path,
) -> None:
    GitRepo(tmp_path / "mono")
    (tmp_path / "link").symlink_to(tmp_path / "mono")
    spellings = ["mono", "mono/.git", "./link/.git", (tmp_path / "mono").as_uri() + "/.git"]
    identities = {RepoLocation.parse(text, tmp_path).identity for text in spellings}
    assert identities == {str((tmp_path / "mono").resolve())}
    GitRepo(tmp_path / "mono2")
    assert RepoLocation.parse("mono2", tmp_path).identity not in identities


def test_a_token_given_as_the_user_name_is_never_shown(tmp_path: Path) -> None:
    """`https://TOKEN@host/...` is accepted (GitHub and GitLab take a token as the user name),
    and what logs, status and errors show of the repository hides it."""
    location = RepoLocation.parse("https://glpat-s3cr3t@git.example.com/infra/mono.git", tmp_path)
    assert str(location) == "https://***@git.example.com/infra/mono.git"
    assert "s3cr3t" not in str(location)
