"""`provenance:`: the key is read and checked at load; a file that is no Ed25519 or P-256
private key is refused with the key's path, its line and why; the commands that sign nothing
(`list`, `docs`, ...) do not read it."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from gitreg.catalog.load import load_catalog
from tests.support.provenance_keys import KeyKind, private_key_file
from tests.support.refused_catalogs import assert_refused, refused, registry_yaml

MODULE = "modules:\n  - {namespace: infra, name: net, system: aws, repo: .}\n"


def _written(tmp_path: Path, key: Path | str) -> Path:
    return registry_yaml(tmp_path, f"{MODULE}provenance:\n  key: {key}\n")


@pytest.mark.parametrize("kind", ["ed25519", "p256"])
def test_an_ed25519_or_p256_key_is_read_with_its_digest(tmp_path: Path, kind: KeyKind) -> None:
    key = private_key_file(tmp_path / "key.pem", kind)
    catalog = load_catalog(_written(tmp_path, key))
    assert catalog.provenance is not None
    assert catalog.provenance.key == key
    assert len(catalog.provenance.digest) == 64


def test_without_the_section_no_provenance_is_signed(tmp_path: Path) -> None:
    assert load_catalog(registry_yaml(tmp_path, MODULE)).provenance is None


def _pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey, password: bytes = b"") -> bytes:
    encryption: serialization.KeySerializationEncryption = serialization.NoEncryption()
    if password:
        encryption = serialization.BestAvailableEncryption(password)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"not a key\n", "not a PEM private key (make one with `openssl genpkey"),
        (
            _pem(rsa.generate_private_key(65537, 2048)),
            "an RSA key: provenance is signed with Ed25519 (recommended) or ECDSA P-256",
        ),
        (
            _pem(ec.generate_private_key(ec.SECP384R1())),
            "an ECDSA secp384r1 key: provenance is signed with Ed25519",
        ),
        (
            _pem(ec.generate_private_key(ec.SECP256R1()), b"secret"),
            "the key is encrypted: give it unencrypted",
        ),
        (
            ec.generate_private_key(ec.SECP256R1())
            .public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            ),
            "a public key: give the private key",
        ),
    ],
    ids=["garbage", "rsa", "p384", "encrypted", "public"],
)
def test_a_file_that_is_no_usable_key_is_refused_with_its_path_and_line(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    key = tmp_path / "key.pem"
    key.write_bytes(content)
    error = refused(_written(tmp_path, key))
    assert_refused(error, "provenance.key", 5, f"{key}: {reason}")


def test_a_missing_key_file_is_refused(tmp_path: Path) -> None:
    error = refused(_written(tmp_path, "absent.pem"))
    assert_refused(error, "provenance.key", 5, "'absent.pem' is not a readable file")


def test_the_section_needs_its_key(tmp_path: Path) -> None:
    error = refused(registry_yaml(tmp_path, f"{MODULE}provenance: {{}}\n"))
    assert_refused(error, "provenance.key", 4, "is required")


def test_commands_that_sign_nothing_do_not_read_the_key(tmp_path: Path) -> None:
    """`gitreg list` and `docs` load the catalog with the secrets they use only."""
    key = tmp_path / "key.pem"
    key.write_bytes(b"not a key\n")
    catalog = load_catalog(_written(tmp_path, key), frozenset({"git", "state"}))
    assert catalog.provenance is not None and catalog.provenance.digest == ""
