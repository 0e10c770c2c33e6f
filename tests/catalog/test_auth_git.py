"""auth.git in registry.yaml: whether a module's own Git server may open it to a token."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitreg.catalog.auth_settings import GitCheck
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import refusal


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
        ("  git: {cache: 1h, timeout: 60s}\n", GitCheck(cache=3600.0, timeout=60.0)),
        (
            "  git: {token_pattern: 'glpat-[A-Za-z0-9_-]{20}', checks_per_minute: 3,"
            " failed_logins_per_minute: 20}\n",
            GitCheck(
                token_pattern="glpat-[A-Za-z0-9_-]{20}",
                checks_per_minute=3,
                failed_logins_per_minute=20,
            ),
        ),
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
        ("  git: {token_pattern: 'glpat-(['}\n", "auth.git.token_pattern", 4, "not a regular"),
        ("  git: {token_pattern: 'glpat-.*|'}\n", "auth.git.token_pattern", 4, "empty token"),
        ("  git: {token_pattern: 7}\n", "auth.git.token_pattern", 4, "non-empty string"),
        ("  git: {checks_per_minute: 0}\n", "auth.git.checks_per_minute", 4, "from 1 to 1000"),
        ("  git: {checks_per_minute: 1001}\n", "auth.git.checks_per_minute", 4, "1 to 1000"),
        ("  git: {failed_logins_per_minute: 0}\n", "auth.git.failed_logins_per_minute", 4, "1 to"),
    ],
)
def test_bad_sections(tmp_path: Path, section: str, path: str, line: int, reason: str) -> None:
    refused = refusal(tmp_path, f"mirror: {{}}\nauth:\n{section}")
    found = [(p.path, p.line) for p in refused.problems if reason in p.reason]
    assert found == [(path, line)], refused.problems


def test_every_problem_of_the_section_at_once(tmp_path: Path) -> None:
    refused = refusal(tmp_path, "mirror: {}\nauth:\n  git: {check: both, cache: 1d, timeout: 0s}\n")
    paths = sorted(p.path for p in refused.problems)
    assert paths == ["auth.git.cache", "auth.git.check", "auth.git.timeout"]


@pytest.mark.parametrize(
    ("token", "matches"),
    [
        ("glpat-" + "a1B_-" * 4, True),  # GitLab personal, project and group access tokens
        ("glpat-AbCdEfGhIjKlMnOpQrStUvWxYz0.01.0w1234567", True),  # GitLab's routable form
        ("gldt-" + "x" * 20, True),
        ("glcbt-" + "x" * 20, True),
        ("ghp_" + "A1b2" * 9, True),
        ("ghs_" + "A1b2" * 9, True),
        ("github_pat_" + "A1" * 11 + "_" + "b" * 59, True),
        ("0123456789abcdef0123456789abcdef01234567", True),  # Gitea, Forgejo
        ("glpat-short", False),
        ("ghp_" + "A1b2" * 8, False),
        ("0123456789ABCDEF0123456789ABCDEF01234567", False),
        ("gitreg_" + "x" * 43, False),  # this registry's own: never a Git server's to judge
        ("random-guess", False),
        ("", False),
    ],
)
def test_the_default_pattern_is_the_forges_tokens(token: str, matches: bool) -> None:
    assert (re.fullmatch(GitCheck().token_pattern, token) is not None) == matches
