"""The statement: in-toto Statement v1 with a SLSA provenance v1 predicate, written one way
(compact, keys sorted, no time), never carrying a credential of the repository's URL."""

from __future__ import annotations

import dataclasses
import json

import pytest

from gitreg.attestations.statement import ReleaseFacts, payload, statement, without_credentials

FACTS = ReleaseFacts(
    address="infra/net/aws",
    version="1.2.0",
    archive_sha256="ab" * 32,
    repository="https://oauth2:TOKEN@git.example.com/infra/net.git",
    tag="v1.2.0",
    path="modules/net",
    commit="c" * 40,
    tree="d" * 40,
    tag_object="e" * 40,
    signer="alice@example.com (ED25519 key SHA256:abc)",
    signer_kind="ssh",
    builder="https://registry.example.com/",
    gitreg_version="0.1.0",
)


@pytest.mark.parametrize(
    ("url", "clean"),
    [
        ("https://oauth2:TOKEN@git.example.com/a/b.git", "https://git.example.com/a/b.git"),
        ("https://TOKEN@git.example.com:8443/a/b", "https://git.example.com:8443/a/b"),
        ("https://git.example.com/a/b.git?x=1", "https://git.example.com/a/b.git?x=1"),
        ("ssh://git@git.example.com:2222/a/b.git", "ssh://git.example.com:2222/a/b.git"),
        ("git@github.com:acme/vpc.git", "ssh://github.com/acme/vpc.git"),
        ("https://user:pw@[::1]:3000/a.git", "https://[::1]:3000/a.git"),
        ("/srv/git/net", "file:///srv/git/net"),
    ],
)
def test_the_repository_url_never_carries_credentials(url: str, clean: str) -> None:
    assert without_credentials(url) == clean


def test_the_statement_names_the_archive_and_where_it_came_from() -> None:
    made = statement(FACTS)
    assert made["_type"] == "https://in-toto.io/Statement/v1"
    assert made["predicateType"] == "https://slsa.dev/provenance/v1"
    assert made["subject"] == [
        {"name": "infra/net/aws/1.2.0.tar.gz", "digest": {"sha256": "ab" * 32}}
    ]
    predicate = made["predicate"]
    assert isinstance(predicate, dict)
    build = predicate["buildDefinition"]
    assert build["externalParameters"] == {
        "repository": "https://git.example.com/infra/net.git",
        "tag": "v1.2.0",
        "path": "modules/net",
    }
    assert build["resolvedDependencies"] == [
        {
            "uri": "git+https://git.example.com/infra/net.git@refs/tags/v1.2.0",
            "digest": {"gitCommit": "c" * 40, "gitTree": "d" * 40, "gitTag": "e" * 40},
        }
    ]
    assert build["internalParameters"] == {
        "download": "archive",
        "signer": {"kind": "ssh", "identity": "alice@example.com (ED25519 key SHA256:abc)"},
    }
    assert predicate["runDetails"]["builder"] == {
        "id": "https://registry.example.com/",
        "version": {"gitreg": "0.1.0"},
    }
    assert "TOKEN" not in payload(FACTS).decode()


def test_a_git_download_names_the_commit_a_lightweight_tag_no_tag_object() -> None:
    facts = dataclasses.replace(FACTS, archive_sha256="", tag_object="", signer="", signer_kind="")
    made = statement(facts)
    assert made["subject"] == [{"name": "infra/net/aws/1.2.0", "digest": {"gitCommit": "c" * 40}}]
    build = made["predicate"]["buildDefinition"]  # type: ignore[index]
    assert build["internalParameters"] == {"download": "git"}
    assert build["resolvedDependencies"][0]["digest"] == {
        "gitCommit": "c" * 40,
        "gitTree": "d" * 40,
    }


def test_the_payload_is_written_one_way() -> None:
    written = payload(FACTS)
    assert (
        written
        == json.dumps(
            json.loads(written), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()
    )
    assert payload(dataclasses.replace(FACTS)) == written
