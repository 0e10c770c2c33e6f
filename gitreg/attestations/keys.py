"""The registry's attestation key: its PEM file read, with the public half and key id it shows.

The catalog checked the file at load (`catalog/provenance.py`); here it becomes a signer, once
per file content. The key id is securesystemslib's: the SHA-256 of the public key's canonical
JSON, as each DSSE signature names it."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from securesystemslib.signer import CryptoSigner, SSlibKey

from gitreg.catalog.settings import ProvenanceSettings
from gitreg.errors import KeyUnavailable

PUBLIC_KEY_PATH = "/v1/provenance/key.pem"  # where anyone reads the public key


@dataclass(frozen=True)
class RegistryKey:
    """A signer, and what anyone may read of it: the public key (PEM) and its key id."""

    signer: CryptoSigner
    public: SSlibKey
    public_pem: bytes

    @property
    def keyid(self) -> str:
        return self.public.keyid


_loaded: dict[tuple[str, str], RegistryKey] = {}  # (file, content digest) → the key it holds
_lock = threading.Lock()


def registry_key(settings: ProvenanceSettings) -> RegistryKey:
    """The key `settings` names, read once per content; KeyUnavailable when its file is no
    longer one the catalog would accept (removed or replaced since it was loaded)."""
    cached = (str(settings.key), settings.digest)
    with _lock:
        known = _loaded.get(cached)
    if known is not None:
        return known
    try:
        private = serialization.load_pem_private_key(settings.key.read_bytes(), password=None)
    except OSError as exc:
        raise _unusable(exc.strerror or "cannot be read") from exc
    except (ValueError, TypeError) as exc:
        raise _unusable("not an unencrypted PEM private key") from exc
    if not isinstance(private, ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey):
        raise _unusable("not an Ed25519 or ECDSA P-256 key")
    public = private.public_key()
    key = RegistryKey(
        CryptoSigner(private),
        SSlibKey.from_crypto(public),
        public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
    )
    with _lock:
        _loaded[cached] = key
    return key


def _unusable(why: str) -> KeyUnavailable:
    """Said to clients too: why, never where the file is."""
    return KeyUnavailable(f"the registry's provenance key (provenance.key) is unusable: {why}")
