"""A private registry for the HTTP-level auth tests: modules and a hosted provider in a private
namespace (`secret`) and a public one (`open`), client tokens, and the keys that sign URLs."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.tls_clients import served_over_tls

READER = "reader-token"  # reads `secret`
OTHER = "other-token"  # reads `elsewhere` only
MIRROR = "mirror-token"  # may use the network mirror, and reads `secret`
OLD_KEY = b"the-url-key-before-the-rotation"
NEW_KEY = b"the-url-key-after-the-rotation"
WIDGET_ZIP = "terraform-provider-widget_1.0.0_linux_amd64.zip"


@dataclass
class PrivateRegistry:
    root: Path
    client: httpx.Client  # sends no token unless told

    def reader(self) -> dict[str, str]:
        return bearer(READER)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def write_private_registry(root: Path, url_keys: str) -> Path:
    """The repositories, releases and key files under `root`, and its registry.yaml, whose auth:
    section ends with `url_keys` (the signing_key_* lines); returns the registry.yaml path."""
    if not (root / "single").exists():
        GitRepo(root / "single").release("v1.0.0", module_files("1.0.0"))
        mono = GitRepo(root / "mono")
        mono.write(module_files("naming", "modules/naming"))
        mono.release("vpc/v1.0.0", module_files("vpc", "modules/vpc"))
        write_key(new_key("gitreg"), root / "gitreg.asc")
        for namespace in ("secret", "open"):
            write_release(root / namespace / "1.0.0", "widget", "1.0.0", ("linux_amd64",))
        (root / "old.key").write_bytes(OLD_KEY + b"\n")
        (root / "new.key").write_bytes(NEW_KEY + b"\n")
    single, mono_path = root / "single", root / "mono"
    path = root / "registry.yaml"
    path.write_text(
        f"""
hostname: registry.example.test
cache_dir: cache
modules:
  - {{namespace: secret, name: single, system: generic, repo: {single}}}
  - {{namespace: secret, name: vpc, system: generic, repo: {mono_path}, path: modules/vpc,
      tags: "vpc/v{{version}}"}}
  - {{namespace: secret, name: vpcgit, system: generic, repo: {mono_path}, path: modules/vpc,
      tags: "vpc/v{{version}}", download: git, git_url: "https://git.example.com/infra/mono.git"}}
  - {{namespace: open, name: single, system: generic, repo: {single}}}
signing: {{keys: [gitreg.asc]}}
providers:
  - {{namespace: secret, type: widget, artifacts: secret}}
  - {{namespace: open, type: widget, artifacts: open}}
mirror: {{read_through: false}}
auth:
  public: [open]
  tokens:
    - {{name: reader, token_sha256: "{hashlib.sha256(READER.encode()).hexdigest()}",
        read: [secret]}}
    - {{name: other, token_sha256: "{hashlib.sha256(OTHER.encode()).hexdigest()}",
        read: [elsewhere]}}
    - {{name: mirror, token_sha256: "{hashlib.sha256(MIRROR.encode()).hexdigest()}",
        mirror: true, read: [secret]}}
{url_keys}"""
    )
    return path


@contextmanager
def private_registry(
    root: Path,
    tls: TlsMaterial,
    url_keys: str = "  signing_key_file: new.key\n  previous_signing_key_file: old.key\n",
) -> Iterator[PrivateRegistry]:
    """The registry served over HTTPS by the real app, in a thread, until the block ends."""
    with served_over_tls(write_private_registry(root, url_keys), tls) as (_, client):
        yield PrivateRegistry(root, client)
