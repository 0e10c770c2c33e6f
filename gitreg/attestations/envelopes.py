"""DSSE envelopes: a statement signed with the registry's key, as `application/vnd.in-toto+json`.

The signature covers DSSE's pre-authentication encoding of the payload and its type, so anyone
with the public key can check it offline (docs/verifying.md gives the commands). The envelope is
written compact, keys sorted; with Ed25519, whose signatures are deterministic, the same
statement and key always give the same bytes."""

from __future__ import annotations

import json

from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey

from gitreg.attestations.keys import RegistryKey

PAYLOAD_TYPE = "application/vnd.in-toto+json"
MEDIA_TYPE = "application/vnd.in-toto.provenance+dsse"  # a lone envelope, as in-toto names it


def signed(payload: bytes, key: RegistryKey) -> bytes:
    """The envelope of `payload`, signed with `key`, as bytes."""
    envelope = Envelope(payload, PAYLOAD_TYPE, {})
    envelope.sign(key.signer)
    return json.dumps(envelope.to_dict(), sort_keys=True, separators=(",", ":")).encode()


def verified_payload(envelope: bytes, public: SSlibKey) -> bytes:
    """The payload of `envelope` once its signature by `public` verifies; raises
    securesystemslib's VerificationError when it does not, ValueError when it is malformed."""
    parsed = Envelope.from_dict(json.loads(envelope))
    if parsed.payload_type != PAYLOAD_TYPE:
        raise ValueError(f"payloadType {parsed.payload_type!r}, not {PAYLOAD_TYPE}")
    parsed.verify([public], 1)
    return parsed.payload
