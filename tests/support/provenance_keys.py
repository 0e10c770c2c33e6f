"""Provenance keys for tests: Ed25519 and ECDSA P-256 private keys, as `openssl genpkey` writes
them (PEM, PKCS#8), and a registry.yaml that signs with one."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from tests.support.gitrepo import GitRepo, module_files

KeyKind = Literal["ed25519", "p256"]


def private_key_file(path: Path, kind: KeyKind = "ed25519") -> Path:
    """A new private key of `kind` written to `path` as PKCS#8 PEM; returns `path`."""
    key = (
        ed25519.Ed25519PrivateKey.generate()
        if kind == "ed25519"
        else (ec.generate_private_key(ec.SECP256R1()))
    )
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def signing_registry(
    tmp_path: Path,
    kind: KeyKind | None = "ed25519",
    download: str = "archive",
    extra: str = "",
    module: str = "",
) -> Path:
    """registry.yaml serving `infra/net/aws` from a folder of `tmp_path/repo` (made with an
    annotated v1.0.0 unless it is there), signing provenance with a new key of `kind` (None: no
    provenance:); `extra` top-level keys, `module` keys of the module's entry (`, k: v`)."""
    repo = tmp_path / "repo"
    if not repo.exists():
        GitRepo(repo).release("v1.0.0", module_files("1.0.0", "modules/net"), annotated=True)
    section = ""
    if kind is not None:
        section = f"provenance:\n  key: {private_key_file(tmp_path / f'{kind}.pem', kind)}\n"
    (tmp_path / "registry.yaml").write_text(
        f"cache_dir: cache\n{section}{extra}"
        "modules:\n  - {namespace: infra, name: net, system: aws,"
        f" repo: {repo}, path: modules/net, download: {download}{module}}}\n"
    )
    return tmp_path / "registry.yaml"
