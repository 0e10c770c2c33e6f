"""A module version's real provenance and bill of materials as OCI referrers, over real HTTP:
the same bytes `…/provenance` serves and its key verifies, a bill the CycloneDX schema accepts
naming the same archive digest, and the same referrer digests after a restart (Ed25519)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from cryptography.hazmat.primitives import serialization
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from securesystemslib.signer import SSlibKey

from gitreg.attestations.envelopes import verified_payload
from gitreg.catalog.load import load_catalog
from gitreg.oci.referrers import CYCLONEDX, IN_TOTO
from tests.support.provenance_keys import KeyKind, signing_registry
from tests.support.servers import RegistryServer

REPOSITORY = "/v2/infra/net/aws"
OCI = "oci: {enabled: true}\n"


def _referrers(client: httpx.Client) -> list[dict[str, Any]]:
    subject = client.head(f"{REPOSITORY}/manifests/1.0.0").headers["docker-content-digest"]
    answer = client.get(f"{REPOSITORY}/referrers/{subject}")
    assert answer.status_code == 200, answer.text
    manifests: list[dict[str, Any]] = answer.json()["manifests"]
    return manifests


def _layer(client: httpx.Client, descriptor: dict[str, Any]) -> bytes:
    manifest = client.get(f"{REPOSITORY}/manifests/{descriptor['digest']}").json()
    (layer,) = manifest["layers"]
    return client.get(f"{REPOSITORY}/blobs/{layer['digest']}").content


def _served(registry: Path) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """The referrers of infra/net/aws 1.0.0, and what `…/provenance`, `…/sbom` and the key
    serve."""
    with (
        RegistryServer(load_catalog(registry)) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        referrers = _referrers(client)
        layers = {str(r["artifactType"]): _layer(client, r) for r in referrers}
        version = "/v1/modules/infra/net/aws/1.0.0"
        served = {
            "provenance": client.get(f"{version}/provenance").content,
            "key": client.get("/v1/provenance/key.pem").content,
        }
    return referrers, layers | served


def test_provenance_and_bill_are_the_versions_referrers(tmp_path: Path) -> None:
    referrers, got = _served(signing_registry(tmp_path, extra=OCI))
    assert [r["artifactType"] for r in referrers] == [IN_TOTO, CYCLONEDX]
    assert got[IN_TOTO] == got["provenance"]
    key = SSlibKey.from_crypto(serialization.load_pem_public_key(got["key"]))
    statement = json.loads(verified_payload(got[IN_TOTO], key))
    text = got[CYCLONEDX].decode()
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    (hashed,) = json.loads(text)["metadata"]["component"]["hashes"]
    assert hashed == {"alg": "SHA-256", "content": statement["subject"][0]["digest"]["sha256"]}


def test_without_a_provenance_key_the_bill_alone(tmp_path: Path) -> None:
    referrers, _ = _served(signing_registry(tmp_path, kind=None, extra=OCI))
    assert [r["artifactType"] for r in referrers] == [CYCLONEDX]


def test_the_same_digests_after_a_restart(tmp_path: Path) -> None:
    """Ed25519 signs alike each time and the bill is made of the commit: a restarted replica
    (its archives built again) names the same referrers."""
    kind: KeyKind = "ed25519"
    registry = signing_registry(tmp_path, kind=kind, extra=OCI)
    first, _ = _served(registry)
    for built in (tmp_path / "cache").rglob("*.tar.gz"):
        built.unlink()
    again, _ = _served(registry)
    assert [r["digest"] for r in again] == [r["digest"] for r in first]


def test_an_archive_over_a_limit_has_the_bill_alone(tmp_path: Path) -> None:
    """A version whose archive an `archives:` limit refuses is attested by nothing, and its
    referrers still list (not a 413): its bill names no digest."""
    extra = OCI + "archives: {max_entries: 2}\n"
    referrers, got = _served(signing_registry(tmp_path, extra=extra))
    assert [r["artifactType"] for r in referrers] == [CYCLONEDX]
    assert "hashes" not in json.loads(got[CYCLONEDX])["metadata"]["component"]
