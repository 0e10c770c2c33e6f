"""A registry whose installs are counted, for the download counts' tests: a public namespace
(`open`) and a private one (`secret`), a module and a hosted provider in each, the network mirror,
and tokens: `reader` reads `secret`, `other` reads `elsewhere`, `ops` reads `secret` and the ops
pages, `mirror` uses the mirror."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.support.gitrepo import GitRepo, module_files
from tests.support.provider_releases import new_key, write_key, write_release

HOSTNAME = "registry.example.test"
READER, OTHER, OPS, MIRROR = "reader-token", "other-token", "ops-token", "mirror-token"
TERRAFORM = {"User-Agent": "Terraform/1.11.4 (+https://www.terraform.io)"}
TOFU = {"User-Agent": "OpenTofu/1.10.0"}
WIDGET_ZIP = "terraform-provider-widget_1.0.0_linux_amd64.zip"


def bearer(token: str, agent: dict[str, str] = TERRAFORM) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **agent}


def _token(name: str, token: str, rest: str) -> str:
    digest = hashlib.sha256(token.encode()).hexdigest()
    return f'    - {{name: {name}, token_sha256: "{digest}", {rest}}}\n'


def write_counted_registry(root: Path, downloads: str = "") -> Path:
    """Its repositories and releases under `root` (made once), and its registry.yaml, with
    `downloads` as the `downloads:` section's lines (indented); returns the registry.yaml path."""
    single = root / "single"
    if not single.exists():
        repo = GitRepo(single)
        repo.release("v1.0.0", module_files("1.0.0"))
        repo.release("v1.1.0", module_files("1.1.0"))
        write_key(new_key("gitreg"), root / "gitreg.asc")
        for namespace in ("secret", "open"):
            write_release(root / namespace / "1.0.0", "widget", "1.0.0", ("linux_amd64",))
    section = f"downloads:\n{downloads}" if downloads else ""
    path = root / "registry.yaml"
    path.write_text(
        f"""
hostname: {HOSTNAME}
cache_dir: cache
modules:
  - {{namespace: open, name: single, system: generic, repo: {single}}}
  - {{namespace: secret, name: single, system: generic, repo: {single}}}
signing: {{keys: [gitreg.asc]}}
providers:
  - {{namespace: secret, type: widget, artifacts: secret}}
  - {{namespace: open, type: widget, artifacts: open}}
mirror: {{read_through: false}}
auth:
  public: [open]
  tokens:
{_token("reader", READER, "read: [secret]")}{_token("other", OTHER, "read: [elsewhere]")}\
{_token("ops", OPS, "read: [secret], ops: true")}{_token("mirror", MIRROR, "mirror: true, read: [open]")}\
{section}"""
    )
    return path
