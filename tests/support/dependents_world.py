"""A registry whose modules call each other, and consumers that call them, for the dependents'
tests: real Git repositories under one folder, and its registry.yaml.

- `mono` (namespace platform): modules/vpc (tags vpc/v1.0.0, vpc/v1.1.0; 1.0.x deprecated),
  modules/app calling vpc by registry address (`~> 1.0`), modules/dns calling it by
  `git::file://…//modules/vpc?ref=vpc/v1.0.0`;
- `team` (namespace secret): calls vpc by registry address `>= 1.1.0`;
- `live`, a consumer in platform: prod/main.tf calls vpc (`~> 1.0`), its committed
  modules.json recorded 1.0.0; broken/main.tf does not parse; a lock file;
- `hush`, a consumer in secret: calls vpc, `= 1.0.0`.
Readers: no token reads platform (public); READER reads secret too; OTHER reads elsewhere."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.support.gitrepo import GitRepo, module_files

HOST = "registry.example.test"
READER = "reader-token"
OTHER = "other-token"


def _call(name: str, source: str, version: str = "") -> str:
    pinned = f'\n  version = "{version}"' if version else ""
    return f'module "{name}" {{\n  source = "{source}"{pinned}\n}}\n'


def write_world(root: Path, mcp: bool = False) -> Path:
    """The repositories under `root` and its registry.yaml (with `mcp`, MCP enabled); returns
    that file's path."""
    mono = GitRepo(root / "mono")
    mono.release("vpc/v1.0.0", module_files("1.0.0", "modules/vpc"))
    mono.release("vpc/v1.1.0", module_files("1.1.0", "modules/vpc"))
    app = module_files("app", "modules/app", _call("net", f"{HOST}/platform/vpc/aws", "~> 1.0"))
    mono.release("app/v1.0.0", app)
    by_git = f"git::file://{mono.path}//modules/vpc?ref=vpc/v1.0.0"
    mono.release("dns/v1.0.0", module_files("dns", "modules/dns", _call("net", by_git)))
    team = GitRepo(root / "team")
    team.release(
        "v2.0.0", module_files("team", "", _call("vpc", f"{HOST}/platform/vpc/aws", ">= 1.1.0"))
    )
    live = GitRepo(root / "live")
    recorded = {
        "Modules": [
            {"Key": "", "Source": "", "Dir": "."},
            {
                "Key": "vpc",
                "Source": f"{HOST}/platform/vpc/aws",
                "Version": "1.0.0",
                "Dir": ".terraform/modules/vpc",
            },
        ]
    }
    live.write(
        {
            "prod/main.tf": _call("vpc", f"{HOST}/platform/vpc/aws", "~> 1.0")
            + _call("elsewhere", "hashicorp/consul/aws", "0.1.0"),
            "prod/.terraform/modules/modules.json": json.dumps(recorded),
            "prod/.terraform.lock.hcl": 'provider "registry.terraform.io/hashicorp/null" {\n  version = "3.2.2"\n}\n',
            "broken/main.tf": 'module "vpc" {\n  source = \n',
        }
    )
    live.commit("infrastructure")
    hush = GitRepo(root / "hush")
    hush.write({"main.tf": _call("vpc", f"{HOST}/platform/vpc/aws", "= 1.0.0")})
    hush.commit("secret infrastructure")
    path = root / "registry.yaml"
    path.write_text(
        f"""
hostname: {HOST}
cache_dir: cache
mirror: {{read_through: false}}
mcp: {{enabled: {"true" if mcp else "false"}}}
modules:
  - {{namespace: platform, name: vpc, system: aws, repo: {mono.path}, path: modules/vpc,
      tags: "vpc/v{{version}}",
      deprecated: [{{versions: "< 1.1.0", reason: "1.0 leaks routes: take 1.1"}}]}}
  - {{namespace: platform, name: app, system: aws, repo: {mono.path}, path: modules/app,
      tags: "app/v{{version}}"}}
  - {{namespace: platform, name: dns, system: aws, repo: {mono.path}, path: modules/dns,
      tags: "dns/v{{version}}"}}
  - {{namespace: secret, name: team, system: aws, repo: {team.path}}}
{consumers_and_readers(live.path, hush.path)}"""
    )
    return path


def consumers_and_readers(live: Path, hush: Path) -> str:
    """registry.yaml's `consumers:` (`live` in platform, `hush` in secret) and `auth:` (no token
    reads platform, READER reads secret too, OTHER reads elsewhere)."""
    return f"""consumers:
  - {{repo: {live}, namespace: platform}}
  - {{repo: {hush}, namespace: secret}}
auth:
  public: [platform]
  tokens:
    - {{name: reader, token_sha256: "{hashlib.sha256(READER.encode()).hexdigest()}",
        read: [secret]}}
    - {{name: other, token_sha256: "{hashlib.sha256(OTHER.encode()).hexdigest()}",
        read: [elsewhere]}}
"""
