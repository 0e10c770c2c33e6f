"""The local CA and its server certificates: kept, reused, and made anew only when they must be."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography import x509

from gitreg.process.tlscert import ensure_local_tls, issue_certificate, parse_host


def _names(certfile: Path) -> set[str]:
    certificate = x509.load_pem_x509_certificate(certfile.read_bytes())
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {str(n) for n in names.get_values_for_type(x509.DNSName)} | {
        str(n) for n in names.get_values_for_type(x509.IPAddress)
    }


def test_the_demo_material_is_kept_with_its_ca_key(tmp_path: Path) -> None:
    material = ensure_local_tls(tmp_path / "demo")
    assert material.ca_key == tmp_path / "demo" / "ca.key"
    assert stat.S_IMODE(material.ca_key.stat().st_mode) == 0o600
    assert stat.S_IMODE(material.keyfile.stat().st_mode) == 0o600
    before = {p.name: p.read_bytes() for p in (tmp_path / "demo").iterdir()}
    assert ensure_local_tls(tmp_path / "demo") == material
    assert {p.name: p.read_bytes() for p in (tmp_path / "demo").iterdir()} == before


def test_new_hosts_get_a_new_server_certificate_from_the_same_ca(tmp_path: Path) -> None:
    material = ensure_local_tls(tmp_path / "demo")
    ca, server = material.ca_cert.read_bytes(), material.certfile.read_bytes()
    ensure_local_tls(tmp_path / "demo", ("localhost", "127.0.0.1", "192.0.2.7"))
    assert material.ca_cert.read_bytes() == ca
    assert material.certfile.read_bytes() != server
    assert _names(material.certfile) == {"localhost", "127.0.0.1", "192.0.2.7"}
    certificate = x509.load_pem_x509_certificate(material.certfile.read_bytes())
    certificate.verify_directly_issued_by(x509.load_pem_x509_certificate(ca))


def test_a_demo_folder_from_before_the_ca_key_was_kept_gets_a_new_ca(tmp_path: Path) -> None:
    material = ensure_local_tls(tmp_path / "demo")
    ca = material.ca_cert.read_bytes()
    material.ca_key.unlink()
    ensure_local_tls(tmp_path / "demo")
    assert material.ca_key.is_file() and material.ca_cert.read_bytes() != ca
    material.ca_key.write_bytes(material.keyfile.read_bytes())  # the server's key, not the CA's
    with pytest.raises(ValueError, match="is not the key of"):
        issue_certificate(tmp_path / "demo", ("localhost",))


def test_the_demo_ca_signs_what_cert_asks_for(tmp_path: Path) -> None:
    material = ensure_local_tls(tmp_path / "demo")
    issued = issue_certificate(tmp_path / "demo", ("registry.example.test",))
    assert not issued.new_ca and issued.material == material
    assert _names(material.certfile) == {"registry.example.test"}


@pytest.mark.parametrize(
    ("text", "host"),
    [
        ("Registry.Example.COM", "registry.example.com"),
        ("registry.example.com.", "registry.example.com"),
        ("*.example.com", "*.example.com"),
        ("localhost", "localhost"),
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]", "::1"),
        ("2001:DB8::1", "2001:db8::1"),
    ],
)
def test_hosts_a_certificate_can_name(text: str, host: str) -> None:
    assert parse_host(text) == host


@pytest.mark.parametrize(
    "text",
    [
        "",
        "registry.example.com:8443",
        "https://registry.example.com",
        "registry.example.com/v1",
        "under_score.example.com",
        "-dash.example.com",
        "a..b",
        "*",
        "a.*.example.com",
        "x" * 64 + ".example.com",
        "bücher.example",
    ],
)
def test_what_is_no_host(text: str) -> None:
    with pytest.raises(ValueError, match="must be a host name or an IP address"):
        parse_host(text)
