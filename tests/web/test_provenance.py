"""A version's provenance over real HTTP: the envelope verifies with the public key the registry
serves; its subject is the digest the download's `?checksum=` names and the archive's bytes have;
its commit, tree and tag object are Git's. Through the download's gate: no existence leak. Off
without `provenance:`, saying which key to set; a build the ledger does not record is a 503."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import httpx
from cryptography.hazmat.primitives import serialization
from securesystemslib.signer import SSlibKey

from gitreg.attestations.envelopes import MEDIA_TYPE, verified_payload
from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.provenance_keys import signing_registry
from tests.support.servers import RegistryServer
from tests.support.tag_signing import allowed_signers, ssh_signer

VERSION = "/v1/modules/infra/net/aws/1.0.0"
PROVENANCE = f"{VERSION}/provenance"
KEY = "/v1/provenance/key.pem"


def _statement(client: httpx.Client) -> dict[str, Any]:
    """The statement, once the envelope verifies with the key the registry serves."""
    answer = client.get(PROVENANCE)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == MEDIA_TYPE
    served = client.get(KEY)
    public = SSlibKey.from_crypto(serialization.load_pem_public_key(served.content))
    assert served.headers["x-key-id"] == public.keyid
    statement: dict[str, Any] = json.loads(verified_payload(answer.content, public))
    return statement


def test_the_provenance_names_the_served_archive_and_its_git_objects(tmp_path: Path) -> None:
    with (
        RegistryServer(load_catalog(signing_registry(tmp_path))) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        location = client.get(f"{VERSION}/download").headers["x-terraform-get"]
        archive, _, checksum = location.partition("//modules/net?checksum=sha256:")
        served = hashlib.sha256(client.get(archive).content).hexdigest()
        statement = _statement(client)
        head = client.head(PROVENANCE)
        assert head.status_code == 200 and head.content == b""
        assert int(head.headers["content-length"]) == len(client.get(PROVENANCE).content)
    assert statement["subject"] == [
        {"name": "infra/net/aws/1.0.0.tar.gz", "digest": {"sha256": checksum}}
    ]
    assert checksum == served
    build = statement["predicate"]["buildDefinition"]
    repo = tmp_path / "repo"
    assert build["resolvedDependencies"][0]["digest"] == {
        "gitCommit": git(repo, "rev-parse", "v1.0.0^{commit}"),
        "gitTree": git(repo, "rev-parse", "v1.0.0^{tree}"),
        "gitTag": git(repo, "rev-parse", "v1.0.0"),  # annotated: the tag object
    }
    assert build["externalParameters"] == {
        "repository": f"file://{repo}",
        "tag": "v1.0.0",
        "path": "modules/net",
    }
    assert statement["predicate"]["runDetails"]["builder"]["id"] == "https://127.0.0.1:8443/"


def test_a_cold_version_builds_its_archive_first(tmp_path: Path) -> None:
    """Asked before any download: the archive is built, and its digest recorded, as a download's."""
    with (
        RegistryServer(load_catalog(signing_registry(tmp_path))) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        statement = _statement(client)
        location = client.get(f"{VERSION}/download").headers["x-terraform-get"]
    assert location.endswith(f"?checksum=sha256:{statement['subject'][0]['digest']['sha256']}")


def test_a_git_download_names_the_commit(tmp_path: Path) -> None:
    with (
        RegistryServer(load_catalog(signing_registry(tmp_path, download="git"))) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        statement = _statement(client)
    commit = git(tmp_path / "repo", "rev-parse", "v1.0.0^{commit}")
    assert statement["subject"] == [
        {"name": "infra/net/aws/1.0.0", "digest": {"gitCommit": commit}}
    ]
    assert not list((tmp_path / "cache").rglob("*.tar.gz")), "no archive built for it"


def test_unknown_versions_and_modules_are_404s_that_say_so(tmp_path: Path) -> None:
    with (
        RegistryServer(load_catalog(signing_registry(tmp_path))) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        version = client.get("/v1/modules/infra/net/aws/9.9.9/provenance")
        module = client.get("/v1/modules/infra/absent/aws/1.0.0/provenance")
        malformed = client.get("/v1/modules/infra/net/aws/not-a-version/provenance")
    assert version.status_code == 404
    assert version.json() == {"errors": ["infra/net/aws has no version 9.9.9"]}
    assert module.status_code == 404
    assert module.json() == {"errors": ["no module infra/absent/aws on this registry"]}
    assert malformed.status_code == 400


def test_without_a_key_both_urls_say_which_to_set(tmp_path: Path) -> None:
    with (
        RegistryServer(load_catalog(signing_registry(tmp_path, kind=None))) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        answers = [client.get(PROVENANCE), client.get(KEY)]
    for answer in answers:
        assert answer.status_code == 404
        assert answer.headers["content-type"] == "application/json"
        (error,) = answer.json()["errors"]
        assert error.startswith("this registry signs no provenance") and "provenance.key" in error


def test_outside_its_namespaces_a_reader_learns_nothing(tmp_path: Path) -> None:
    """The download's gate: 401 without a token, 403 with one that does not open the namespace,
    said alike for a module that exists and one that does not. The public key is anyone's."""
    token = "reader-token-0123456789"
    auth = (
        "auth:\n  tokens:\n"
        f"    - {{name: other, token_sha256: {hashlib.sha256(token.encode()).hexdigest()},"
        " read: [other]}\n"
    )
    with (
        RegistryServer(load_catalog(signing_registry(tmp_path, extra=auth))) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        anonymous = client.get(PROVENANCE)
        bearer = {"Authorization": f"Bearer {token}"}
        there = client.get(PROVENANCE, headers=bearer)
        absent = client.get("/v1/modules/infra/absent/aws/1.0.0/provenance", headers=bearer)
        key = client.get(KEY)
    assert anonymous.status_code == 401
    assert there.status_code == absent.status_code == 403
    assert there.json()["errors"][0].replace("net", "X") == absent.json()["errors"][0].replace(
        "absent", "X"
    )
    assert key.status_code == 200 and key.text.startswith("-----BEGIN PUBLIC KEY-----")


def test_a_build_the_ledger_does_not_record_is_a_503(tmp_path: Path) -> None:
    config = signing_registry(tmp_path)
    with RegistryServer(load_catalog(config)) as server:
        assert httpx.get(server.url + f"{VERSION}/download").status_code == 200
    (digests,) = (tmp_path / "cache" / "ledgers").glob("*.digests.json")
    (name,) = json.loads(digests.read_text())
    digests.write_text(json.dumps({name: "0" * 64}))  # another replica's build, recorded first
    for built in (tmp_path / "cache" / "archives").rglob("*.tar.gz"):
        built.unlink()
    with RegistryServer(load_catalog(config)) as server:
        answer = httpx.get(server.url + PROVENANCE)
    assert answer.status_code == 503
    assert "ledger records sha256:" + "0" * 64 in answer.json()["errors"][0]


def test_a_verified_signer_is_named(tmp_path: Path) -> None:
    """Under `require_signed_tags`, the signer `git verify-tag` read, with the kind of key."""
    alice = ssh_signer(tmp_path / "ssh", "alice@example.com")
    repo = GitRepo(tmp_path / "repo")
    repo.write(module_files("1.0.0", "modules/net")).commit()
    alice.sign(repo, "v1.0.0")
    allowed = allowed_signers(tmp_path / "allowed_signers", alice)
    config = signing_registry(
        tmp_path, module=f", require_signed_tags: {{allowed_signers: {allowed}}}"
    )
    with (
        RegistryServer(load_catalog(config)) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        statement = _statement(client)
        listed = client.get(VERSION).json()["signer"]
    internal = statement["predicate"]["buildDefinition"]["internalParameters"]
    assert internal == {"download": "archive", "signer": {"kind": "ssh", "identity": listed}}
    assert listed.startswith("alice@example.com (ED25519 key SHA256:")


def test_the_version_page_links_to_its_provenance_when_signed(tmp_path: Path) -> None:
    link = f'<a id="provenance" href="{PROVENANCE}"'
    for kind in ("ed25519", None):
        root = tmp_path / str(kind)
        root.mkdir()
        with (
            RegistryServer(load_catalog(signing_registry(root, kind=kind))) as server,
            httpx.Client(base_url=server.url) as client,
        ):
            page = client.get("/modules/infra/net/aws/1.0.0")
            followed = client.get(PROVENANCE)
        assert page.status_code == 200
        assert (link in page.text) is (kind is not None)
        assert followed.status_code == (200 if kind else 404)
