"""Throwaway TLS material: a local CA and a server certificate for 127.0.0.1 and localhost.

For `gitreg demo` and the tests only; production deployments bring their own certificate.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class TlsMaterial:
    ca_cert: Path
    certfile: Path
    keyfile: Path


def ensure_local_tls(
    directory: Path, hosts: tuple[str, ...] = ("localhost", "127.0.0.1")
) -> TlsMaterial:
    """Reuse the material in `directory`, or create a CA and a server certificate signed by it."""
    material = TlsMaterial(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    if all(p.is_file() for p in (material.ca_cert, material.certfile, material.keyfile)):
        return material
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gitreg throwaway local CA")])
    ca = (
        _builder(ca_name, ca_name, ca_key.public_key(), now)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    server = (
        _builder(
            x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]),
            ca_name,
            key.public_key(),
            now,
        )
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    material.ca_cert.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    material.certfile.write_bytes(server.public_bytes(serialization.Encoding.PEM))
    material.keyfile.touch(mode=0o600)
    material.keyfile.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return material


def _builder(
    subject: x509.Name,
    issuer: x509.Name,
    public_key: ec.EllipticCurvePublicKey,
    now: datetime.datetime,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=365))
    )
