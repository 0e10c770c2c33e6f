"""auth.git in registry.yaml: whether a module's own Git server may open it to a token."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.model import GitCheck
from gitreg.errors import ConfigError
from tests.conftest import WriteCatalog


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ("  git:\n", GitCheck()),
        ("  git: {}\n", GitCheck()),
        ("  git: {check: repo, cache: 5m}\n", GitCheck()),
        (
            "  git: {check: git_url, username: x-token-auth, cache: 30s, timeout: 3s}\n",
            GitCheck(check="git_url", username="x-token-auth", cache=30.0, timeout=3.0),
        ),
        ("  git: {cache: 5s}\n", GitCheck(cache=5.0)),
        ("  git: {cache: 1h, timeout: 60}\n", GitCheck(cache=3600.0, timeout=60.0)),
    ],
)
def test_good_sections(write_catalog: WriteCatalog, section: str, expected: GitCheck) -> None:
    catalog = write_catalog(f"mirror: {{}}\nauth:\n{section}")
    assert catalog.auth is not None and catalog.auth.git == expected


def test_ca_file_is_resolved_against_the_catalog(
    write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    (tmp_path / "git-ca.pem").write_text("x")
    catalog = write_catalog("mirror: {}\nauth:\n  git: {ca_file: git-ca.pem}\n")
    assert catalog.auth is not None and catalog.auth.git is not None
    assert catalog.auth.git.ca_file == tmp_path / "git-ca.pem"


def test_without_git_no_one_asks_a_git_server(write_catalog: WriteCatalog) -> None:
    catalog = write_catalog("mirror: {}\nauth:\n  public: [open]\n")
    assert catalog.auth is not None and catalog.auth.git is None


@pytest.mark.parametrize(
    ("section", "path", "line", "reason"),
    [
        ("  git: true\n", "auth.git", 4, "must be a mapping, not a boolean"),
        ("  git: {colour: blue}\n", "auth.git.colour", 4, "unknown key"),
        ("  git: {check: ssh}\n", "auth.git.check", 4, "must be one of repo, git_url, not 'ssh'"),
        ("  git: {check: ~}\n", "auth.git.check", 4, "is ~"),
        ("  git: {username: 'a:b'}\n", "auth.git.username", 4, "without ':'"),
        ("  git: {username: 'a b'}\n", "auth.git.username", 4, "without ':'"),
        ("  git: {username: 7}\n", "auth.git.username", 4, "must be a non-empty string"),
        ("  git: {cache: 1s}\n", "auth.git.cache", 4, "must be from 5s to 1h"),
        ("  git: {cache: 2h}\n", "auth.git.cache", 4, "must be from 5s to 1h"),
        ("  git: {cache: 0}\n", "auth.git.cache", 4, "positive duration"),
        ("  git: {cache: soon}\n", "auth.git.cache", 4, "positive duration"),
        ("  git: {timeout: 500ms}\n", "auth.git.timeout", 4, "must be from 1s to 60s"),
        ("  git: {timeout: 2m}\n", "auth.git.timeout", 4, "must be from 1s to 60s"),
        ("  git: {ca_file: nope.pem}\n", "auth.git.ca_file", 4, "not a readable file"),
        ("  git:\n    cache: 10s\n    cache: 20s\n", "(document)", 6, "given twice"),
    ],
)
def test_bad_sections(
    write_catalog: WriteCatalog, section: str, path: str, line: int, reason: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        write_catalog(f"mirror: {{}}\nauth:\n{section}")
    found = [(p.path, p.line) for p in caught.value.problems if reason in p.reason]
    assert found == [(path, line)], caught.value.problems


def test_every_problem_of_the_section_at_once(write_catalog: WriteCatalog) -> None:
    with pytest.raises(ConfigError) as caught:
        write_catalog("mirror: {}\nauth:\n  git: {check: both, cache: 1d, timeout: 0s}\n")
    paths = sorted(p.path for p in caught.value.problems)
    assert paths == ["auth.git.cache", "auth.git.check", "auth.git.timeout"]
