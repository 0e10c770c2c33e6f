"""The auth: section of registry.yaml: what it holds when right, and each mistake refused with
its key path and line."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from gitreg.catalog.secrets import SecretRef
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import assert_refused, refusal

MODULE = "modules:\n  - {namespace: infra, name: vpc, system: aws, repo: https://git.example.com/x.git}\n"
DIGEST = hashlib.sha256(b"s3cret").hexdigest()


def test_a_full_auth_section(
    write_catalog: WriteCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITREG_TEST_TOKEN", "t")
    monkeypatch.setenv("GITREG_TEST_URL_KEY", "k")
    (tmp_path / "old.key").write_text("old\n")
    (tmp_path / "ops.token").write_text("o\n")
    catalog = write_catalog(
        MODULE
        + f"""
auth:
  public: [examples, "shared-*"]
  tokens:
    - name: ci-platform
      token_sha256: "{DIGEST.upper()}"
      read: ["platform", "team-*"]
      mirror: true
    - {{name: from-env, token_env: GITREG_TEST_TOKEN, read: ["*"]}}
    - {{name: ops.scraper, token_file: ops.token, ops: true}}
  signing_key_env: GITREG_TEST_URL_KEY
  previous_signing_key_file: old.key
  download_ttl: 2m
"""
    )
    auth = catalog.auth
    assert auth is not None
    assert auth.public == ("examples", "shared-*")
    platform, env, ops = auth.tokens
    assert (platform.name, platform.sha256, platform.read) == (
        "ci-platform",
        DIGEST,
        ("platform", "team-*"),
    )
    assert platform.mirror and not platform.ops
    assert env.source == SecretRef(env="GITREG_TEST_TOKEN") and env.read == ("*",)
    assert ops.source == SecretRef(file=tmp_path / "ops.token") and ops.ops and not ops.read
    assert auth.url_keys == (
        SecretRef(env="GITREG_TEST_URL_KEY"),
        SecretRef(file=tmp_path / "old.key"),
    )
    assert auth.download_ttl == 120


def test_no_auth_section_is_open(write_catalog: WriteCatalog) -> None:
    assert write_catalog(MODULE).auth is None


def test_an_empty_auth_section_is_private_to_all(write_catalog: WriteCatalog) -> None:
    auth = write_catalog(MODULE + "auth:\n").auth
    assert auth is not None and auth.public == () and auth.tokens == ()


@pytest.mark.parametrize(
    ("section", "path", "reason"),
    [
        ("auth: {colour: blue}", "auth.colour", "unknown key"),
        ("auth: {public: examples}", "auth.public", "must be a list"),
        ("auth: {public: ['a/b']}", "auth.public[0]", "must be a namespace or a pattern"),
        ("auth: {tokens: [{read: [x]}]}", "auth.tokens[0].name", "is required"),
        (
            "auth: {tokens: [{name: 'a b', token_sha256: 'DIGEST'}]}",
            "auth.tokens[0].name",
            "letters, digits",
        ),
        ("auth: {tokens: [{name: a}]}", "auth.tokens[0]", "give one of token_sha256"),
        (
            "auth: {tokens: [{name: a, token_sha256: 'DIGEST', token_env: X}]}",
            "auth.tokens[0]",
            "give one of token_sha256",
        ),
        (
            "auth: {tokens: [{name: a, token_sha256: abc}]}",
            "auth.tokens[0].token_sha256",
            "64 hex digits",
        ),
        (
            "auth: {tokens: [{name: a, token_env: GITREG_TEST_UNSET}]}",
            "auth.tokens[0].token_env",
            "is not set",
        ),
        (
            "auth: {tokens: [{name: a, token_file: absent}]}",
            "auth.tokens[0].token_file",
            "not a readable file",
        ),
        (
            "auth: {tokens: [{name: a, token_sha256: 'ZERO'}, {name: a, token_sha256: 'DIGEST'}]}",
            "auth.tokens[1]",
            "already listed",
        ),
        (
            "auth: {tokens: [{name: a, token_sha256: 'DIGEST'}, {name: b, token_sha256: 'DIGEST'}]}",
            "auth.tokens[1]",
            "the same token as auth.tokens[0]",
        ),
        (
            "auth: {tokens: [{name: a, token_sha256: 'DIGEST', mirror: yes-please}]}",
            "auth.tokens[0].mirror",
            "true or false",
        ),
        (
            "auth: {tokens: [{name: a, token_sha256: 'DIGEST', read: ['../x']}]}",
            "auth.tokens[0].read[0]",
            "pattern",
        ),
        ("auth: {download_ttl: 1s}", "auth.download_ttl", "from 10s to 24h"),
        ("auth: {download_ttl: soon}", "auth.download_ttl", "positive duration"),
        ("auth: {signing_key_env: GITREG_TEST_UNSET}", "auth.signing_key_env", "is not set"),
        (
            "auth: {previous_signing_key_file: absent}",
            "auth.previous_signing_key_file",
            "not a readable file",
        ),
    ],
)
def test_a_bad_auth_section_is_refused_with_its_path_and_line(
    tmp_path: Path, section: str, path: str, reason: str
) -> None:
    assert_refused(
        refusal(
            tmp_path, MODULE + section.replace("DIGEST", DIGEST).replace("ZERO", "0" * 64) + "\n"
        ),
        path,
        4,
        reason,
    )


def test_a_previous_key_needs_a_current_one(tmp_path: Path) -> None:
    (tmp_path / "old.key").write_text("old")
    refused = refusal(tmp_path, MODULE + "auth: {previous_signing_key_file: old.key}\n")
    assert "needs a current one" in str(refused)


def test_a_token_secret_never_shows_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = refusal(
        tmp_path, MODULE + "auth: {tokens: [{name: a, token_sha256: s3cret-in-clear}]}\n"
    )
    assert "s3cret-in-clear" not in str(refused)
