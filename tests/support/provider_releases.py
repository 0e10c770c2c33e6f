"""Provider release folders as goreleaser writes them, and OpenPGP keys, for tests."""

from __future__ import annotations

import hashlib
import io
import json
import stat
import zipfile
from pathlib import Path

import pgpy
from pgpy.constants import EllipticCurveOID, HashAlgorithm, KeyFlags, PubKeyAlgorithm


def new_key(name: str) -> pgpy.PGPKey:
    key = pgpy.PGPKey.new(PubKeyAlgorithm.EdDSA, EllipticCurveOID.Ed25519)
    key.add_uid(
        pgpy.PGPUID.new(name, email=f"{name}@example.invalid"),
        usage={KeyFlags.Sign},
        hashes=[HashAlgorithm.SHA256],
    )
    return key


def write_key(key: pgpy.PGPKey, path: Path, public: bool = False) -> Path:
    path.write_text(str(key.pubkey if public else key))
    return path


def provider_zip(provider_type: str, version: str, marker: str = "") -> bytes:
    """A zip holding a stand-in provider executable (terraform init does not run it)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        info = zipfile.ZipInfo(
            f"terraform-provider-{provider_type}_v{version}", date_time=(2026, 1, 1, 0, 0, 0)
        )
        info.external_attr = (stat.S_IFREG | 0o755) << 16
        z.writestr(info, f"#!/bin/sh\n# {provider_type} {version} {marker}\nexit 1\n")
    return out.getvalue()


def write_release(
    folder: Path,
    provider_type: str,
    version: str,
    platforms: tuple[str, ...] = ("linux_amd64", "darwin_arm64"),
    signer: pgpy.PGPKey | None = None,
    manifest_in_sums: bool = False,
    protocols: tuple[str, ...] = ("6.0",),
) -> Path:
    """The files of one release; returns the SHA256SUMS path."""
    folder.mkdir(parents=True, exist_ok=True)
    prefix = f"terraform-provider-{provider_type}_{version}"
    lines = []
    for platform in platforms:
        name = f"{prefix}_{platform}.zip"
        data = provider_zip(provider_type, version, platform)
        (folder / name).write_bytes(data)
        lines.append(f"{hashlib.sha256(data).hexdigest()}  {name}\n")
    manifest = json.dumps(
        {"version": 1, "metadata": {"protocol_versions": list(protocols)}}
    ).encode()
    (folder / f"{prefix}_manifest.json").write_bytes(manifest)
    if manifest_in_sums:
        lines.append(f"{hashlib.sha256(manifest).hexdigest()}  {prefix}_manifest.json\n")
    sums = folder / f"{prefix}_SHA256SUMS"
    sums.write_text("".join(sorted(lines, key=lambda line: line.split()[1])))
    if signer is not None:
        (folder / f"{prefix}_SHA256SUMS.sig").write_bytes(bytes(signer.sign(sums.read_bytes())))
    return sums


def provider_zip_with_docs(
    provider_type: str, version: str, directory_entries: bool = True
) -> bytes:
    """A provider zip that also holds docs/README.md: with a `docs/` directory entry before it,
    as `zip -r` writes one, or without (`directory_entries=False`), as `zip -r -D` does."""
    entries = [
        (f"terraform-provider-{provider_type}_v{version}", b"#!/bin/sh\nexit 1\n"),
        *([("docs/", b"")] if directory_entries else []),
        ("docs/README.md", f"# {provider_type}\n".encode()),
    ]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, content in entries:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            kind = stat.S_IFDIR if name.endswith("/") else stat.S_IFREG
            info.external_attr = (kind | 0o755) << 16
            z.writestr(info, content)
    return out.getvalue()
