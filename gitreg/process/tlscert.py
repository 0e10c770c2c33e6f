"""A local CA kept in a folder, and the server certificates it signs (`gitreg cert`, the demo).

The folder holds ca.pem (what clients trust), ca.key (0600: whoever holds it can make
certificates those clients accept), server.pem and server.key (0600, what `serve` is given).
"""

from __future__ import annotations

import datetime
import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from gitreg.atomic import write_atomically

CA_DAYS = 3650
SERVER_DAYS = 365  # under the 398 days that some clients allow a server certificate
_RENEW_BEFORE = datetime.timedelta(days=30)  # the demo makes a new one when this close to expiry
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_DNS_NAME = re.compile(rf"(?:\*\.)?{_LABEL}(?:\.{_LABEL})*")

_CaKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


@dataclass(frozen=True)
class TlsMaterial:
    ca_cert: Path
    certfile: Path
    keyfile: Path

    @property
    def ca_key(self) -> Path:
        return self.ca_cert.with_name("ca.key")


@dataclass(frozen=True)
class Issued:
    """What `issue_certificate` made: the files, and whether the CA is new."""

    material: TlsMaterial
    hosts: tuple[str, ...]
    not_after: datetime.datetime
    new_ca: bool


def tls_material(directory: Path) -> TlsMaterial:
    return TlsMaterial(directory / "ca.pem", directory / "server.pem", directory / "server.key")


def parse_host(text: str) -> str:
    """A host a certificate can name: an IP address or a DNS name (`*.` allowed), lower-cased."""
    try:
        return str(ipaddress.ip_address(text.strip("[]")))
    except ValueError:
        pass
    name = text.lower().rstrip(".")
    if len(name) > 253 or not _DNS_NAME.fullmatch(name):
        raise ValueError(
            f"{text!r} must be a host name or an IP address, without scheme, port or path "
            "(like registry.example.com or 127.0.0.1)"
        )
    return name


def ensure_local_tls(
    directory: Path, hosts: tuple[str, ...] = ("localhost", "127.0.0.1")
) -> TlsMaterial:
    """Reuse the material in `directory` while it is whole, valid and names `hosts`; otherwise
    issue a server certificate, from the CA there or, when it cannot be used, from a new one."""
    material = tls_material(directory)
    try:
        ca = LocalCA.load(material)
    except ValueError:
        ca = None  # throwaway material: a new CA replaces a broken one
    if ca is not None and ca.signed_for(material, hosts):
        return material
    if ca is None:
        ca = LocalCA.create(material)
    ca.issue(material, hosts)
    return material


def issue_certificate(directory: Path, hosts: tuple[str, ...]) -> Issued:
    """A new server key and certificate for `hosts` in `directory`, signed by the CA kept there
    (made first when there is none). Raise ValueError when the CA there cannot be used."""
    material = tls_material(directory)
    ca = LocalCA.load(material)
    new_ca = ca is None
    if ca is None:
        ca = LocalCA.create(material)
    certificate = ca.issue(material, hosts)
    return Issued(material, hosts, certificate.not_valid_after_utc, new_ca)


class LocalCA:
    def __init__(self, certificate: x509.Certificate, key: _CaKey) -> None:
        self.certificate = certificate
        self.key = key

    @classmethod
    def load(cls, material: TlsMaterial) -> LocalCA | None:
        """The CA in the folder; None when it has none; ValueError when it cannot sign."""
        if not material.ca_cert.exists() and not material.ca_key.exists():
            return None
        if not material.ca_key.exists():
            raise ValueError(
                f"{material.ca_cert} has no key beside it ({material.ca_key.name}), so it cannot "
                "sign: give another folder, or move ca.pem away to make a new CA"
            )
        try:
            certificate = x509.load_pem_x509_certificate(material.ca_cert.read_bytes())
            key = serialization.load_pem_private_key(material.ca_key.read_bytes(), None)
        except (OSError, ValueError, TypeError) as exc:
            raise ValueError(f"the CA in {material.ca_cert.parent} cannot be read: {exc}") from exc
        if not isinstance(key, _CaKey) or not _same_key(key, certificate):
            raise ValueError(f"{material.ca_key} is not the key of {material.ca_cert}")
        if certificate.not_valid_after_utc < _now() + _RENEW_BEFORE:
            raise ValueError(
                f"{material.ca_cert} expires on {certificate.not_valid_after_utc:%Y-%m-%d}: "
                "move ca.pem and ca.key away to make a new CA"
            )
        return cls(certificate, key)

    @classmethod
    def create(cls, material: TlsMaterial) -> LocalCA:
        key = ec.generate_private_key(ec.SECP256R1())
        now = _now()
        name = x509.Name(
            [x509.NameAttribute(NameOID.COMMON_NAME, f"gitreg local CA {now:%Y-%m-%d %H:%M:%S}")]
        )
        certificate = (
            _builder(name, name, key.public_key(), now, CA_DAYS)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
            .sign(key, hashes.SHA256())
        )
        material.ca_cert.parent.mkdir(parents=True, exist_ok=True)
        # The key first: a CA certificate without its key could never issue again.
        write_atomically(material.ca_key, _private_bytes(key), mode=0o600)
        write_atomically(material.ca_cert, certificate.public_bytes(serialization.Encoding.PEM))
        return cls(certificate, key)

    def issue(self, material: TlsMaterial, hosts: tuple[str, ...]) -> x509.Certificate:
        """Write a new server key and a certificate for `hosts` signed by this CA."""
        key = ec.generate_private_key(ec.SECP256R1())
        names: list[x509.GeneralName] = []
        for host in hosts:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        # Clients read the names from subjectAltName; the common name is only a label.
        subject = x509.Name(
            [x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])] if len(hosts[0]) <= 64 else []
        )
        certificate = (
            _builder(subject, self.certificate.subject, key.public_key(), _now(), SERVER_DAYS)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
            .add_extension(
                x509.KeyUsage(True, False, False, False, False, False, False, False, False),
                critical=True,
            )
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), False
            )
            .sign(self.key, hashes.SHA256())
        )
        write_atomically(material.keyfile, _private_bytes(key), mode=0o600)
        write_atomically(material.certfile, certificate.public_bytes(serialization.Encoding.PEM))
        return certificate

    def signed_for(self, material: TlsMaterial, hosts: tuple[str, ...]) -> bool:
        """Whether the server certificate there is this CA's, names `hosts`, is not about to
        expire, and matches its key."""
        try:
            certificate = x509.load_pem_x509_certificate(material.certfile.read_bytes())
            key = serialization.load_pem_private_key(material.keyfile.read_bytes(), None)
            certificate.verify_directly_issued_by(self.certificate)
            names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        except (OSError, ValueError, TypeError, InvalidSignature, x509.ExtensionNotFound):
            return False
        named = {str(n) for n in names.value.get_values_for_type(x509.DNSName)}
        named |= {str(n) for n in names.value.get_values_for_type(x509.IPAddress)}
        return (
            set(hosts) <= named
            and certificate.not_valid_after_utc > _now() + _RENEW_BEFORE
            and isinstance(key, _CaKey)
            and _same_key(key, certificate)
        )


def _same_key(key: _CaKey, certificate: x509.Certificate) -> bool:
    return key.public_key() == certificate.public_key()


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _private_bytes(key: _CaKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _builder(
    subject: x509.Name,
    issuer: x509.Name,
    public_key: ec.EllipticCurvePublicKey,
    now: datetime.datetime,
    days: int,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=days))
    )
