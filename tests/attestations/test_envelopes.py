"""DSSE envelopes signed with the registry's key verify with securesystemslib's own
`Envelope.verify` from the public PEM alone; a changed payload or another key does not. Ed25519
gives the same bytes each time, so replicas sharing a key serve one envelope."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import SSlibKey

from gitreg.attestations.envelopes import PAYLOAD_TYPE, signed, verified_payload
from gitreg.attestations.keys import registry_key
from gitreg.catalog.settings import ProvenanceSettings
from gitreg.errors import KeyUnavailable
from tests.support.provenance_keys import KeyKind, private_key_file

PAYLOAD = b'{"_type":"https://in-toto.io/Statement/v1"}'


def _public(pem: bytes) -> SSlibKey:
    """The key as a verifier holds it: from the PEM the registry serves, nothing else."""
    return SSlibKey.from_crypto(serialization.load_pem_public_key(pem))


@pytest.mark.parametrize("kind", ["ed25519", "p256"])
def test_an_envelope_verifies_with_the_public_key_alone(tmp_path: Path, kind: KeyKind) -> None:
    key = registry_key(ProvenanceSettings(private_key_file(tmp_path / "k.pem", kind), kind))
    envelope = signed(PAYLOAD, key)
    document = json.loads(envelope)
    assert document["payloadType"] == PAYLOAD_TYPE
    assert base64.b64decode(document["payload"]) == PAYLOAD
    assert document["signatures"][0]["keyid"] == key.keyid
    public = _public(key.public_pem)
    assert public.keyid == key.keyid
    verified = Envelope.from_dict(document).verify([public], 1)
    assert list(verified) == [key.keyid]
    assert verified_payload(envelope, public) == PAYLOAD


@pytest.mark.parametrize("kind", ["ed25519", "p256"])
def test_a_changed_payload_or_another_key_fails(tmp_path: Path, kind: KeyKind) -> None:
    key = registry_key(ProvenanceSettings(private_key_file(tmp_path / "k.pem", kind), "1"))
    other = registry_key(ProvenanceSettings(private_key_file(tmp_path / "o.pem", kind), "2"))
    document = json.loads(signed(PAYLOAD, key))
    document["payload"] = base64.b64encode(PAYLOAD.replace(b"v1", b"v2")).decode()
    with pytest.raises(VerificationError):
        verified_payload(json.dumps(document).encode(), _public(key.public_pem))
    with pytest.raises(VerificationError):
        verified_payload(signed(PAYLOAD, key), _public(other.public_pem))


def test_ed25519_signs_the_same_bytes_each_time(tmp_path: Path) -> None:
    file = private_key_file(tmp_path / "k.pem")
    first = signed(PAYLOAD, registry_key(ProvenanceSettings(file, "a")))
    again = signed(PAYLOAD, registry_key(ProvenanceSettings(file, "b")))  # read anew
    assert first == again


def test_a_key_file_gone_since_load_is_unavailable_saying_why_not_where(tmp_path: Path) -> None:
    with pytest.raises(KeyUnavailable) as caught:
        registry_key(ProvenanceSettings(tmp_path / "gone.pem", "x"))
    assert "No such file" in str(caught.value) and str(tmp_path) not in str(caught.value)
