"""The `provenance:` section: the key the registry signs each version's provenance with.

A PEM private key (PKCS#8, as `openssl genpkey` writes it), Ed25519 or ECDSA P-256, read and
checked at load: a file that is no such key is refused with its path and why. Without the
section, no provenance is signed (docs/verifying.md)."""

from __future__ import annotations

import hashlib

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from gitreg.catalog import yamldoc
from gitreg.catalog.settings import ProvenanceSettings

_MAKE = "openssl genpkey -algorithm ed25519 -out FILE"


class ProvenanceSection(yamldoc.Reader):
    def provenance(self, top: yamldoc.Mapping) -> ProvenanceSettings | None:
        """`provenance: {key: FILE}`; None without the section (no provenance signed)."""
        m = self.section(top, "provenance", "", {"key"}, {"key"})
        if m is None:
            return None
        file = self.file(m, "key", "provenance", "provenance")
        if file is None or "provenance" not in self.secrets:
            return None if file is None else ProvenanceSettings(file)
        try:
            data = file.read_bytes()
        except OSError:
            return None  # the reader said why
        why = key_problem(data)
        if why is not None:
            self.problem("provenance.key", m.key_lines["key"], f"{file}: {why}")
            return None
        return ProvenanceSettings(file, hashlib.sha256(data).hexdigest())


def key_problem(data: bytes) -> str | None:
    """Why `data` is no key provenance can be signed with; None when it is one."""
    if b"PUBLIC KEY-----" in data and b"PRIVATE KEY-----" not in data:
        return f"a public key: give the private key (made with `{_MAKE}`)"
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        return "the key is encrypted: give it unencrypted, kept as a secret file"
    except (ValueError, UnsupportedAlgorithm):
        return f"not a PEM private key (make one with `{_MAKE}`)"
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return None
    if isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1):
        return None
    if isinstance(key, ec.EllipticCurvePrivateKey):
        kind = f"an ECDSA {key.curve.name} key"
    else:
        name = type(key).__name__.removesuffix("PrivateKey")  # RSA, Ed448, DSA, X25519
        kind = f"{'an' if name[0] in 'AEIORSX' else 'a'} {name} key"
    return f"{kind}: provenance is signed with Ed25519 (recommended) or ECDSA P-256"
