"""A registry for the tests of revocation: a module in a private namespace (`team/vpc/aws`) and in
a public one (`open/vpc/aws`), 1.0.0, 1.1.0 and 2.0.0 of the same repository, and a hosted provider
`team/widget` (1.0.0, 1.1.0); tokens `early`, `late` and `third` read `team`. Written first without
`revoked:`, so that `early` installs 1.0.0 before it is revoked, then with it."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.support.gitrepo import GitRepo, module_files
from tests.support.provider_releases import new_key, write_key, write_release

EARLY, LATE, THIRD = "early-token", "late-token", "third-token"
REASON = "1.0.0 leaks the state bucket name in an output; use 1.1.0 or later."
TERRAFORM = {"User-Agent": "Terraform/1.11.4 (+https://www.terraform.io)"}
MODULES = ("/v1/modules/team/vpc/aws", "/v1/modules/open/vpc/aws")
WIDGET = "/v1/providers/team/widget"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **TERRAFORM}


def _token(name: str, token: str) -> str:
    digest = hashlib.sha256(token.encode()).hexdigest()
    return f'    - {{name: {name}, token_sha256: "{digest}", read: [team], mirror: true}}\n'


def write_revoked_registry(root: Path, revoked: bool, downloads: str = "", extra: str = "") -> Path:
    """Its repository and releases under `root` (made once), and its registry.yaml: with
    `revoked`, 1.0.0 revoked (and deprecated with the 1.x) everywhere; `downloads`: lines of the
    `downloads:` section; `extra`: more top-level keys. Returns the registry.yaml path."""
    vpc = root / "vpc"
    if not vpc.exists():
        repo = GitRepo(vpc)
        for version in ("1.0.0", "1.1.0", "2.0.0"):
            repo.release(f"v{version}", module_files(version))
        key = new_key("gitreg")
        write_key(key, root / "gitreg.asc")
        for version in ("1.0.0", "1.1.0"):
            write_release(root / "widget" / version, "widget", version, ("linux_amd64",), key)
    retired = (
        f', deprecated: [{{versions: "< 2.0.0", reason: "Use 2.x."}}]'
        f', revoked: [{{versions: "1.0.0", reason: "{REASON}"}}]'
        if revoked
        else ""
    )
    section = f"downloads:\n{downloads}" if downloads else ""
    path = root / "registry.yaml"
    path.write_text(
        f"""
hostname: registry.example.test
cache_dir: cache
modules:
  - {{namespace: team, name: vpc, system: aws, repo: {vpc}{retired}}}
  - {{namespace: open, name: vpc, system: aws, repo: {vpc}{retired}}}
signing: {{keys: [gitreg.asc]}}
providers:
  - {{namespace: team, type: widget, artifacts: widget{retired}}}
mirror: {{read_through: false}}
auth:
  public: [open]
  tokens:
{_token("early", EARLY)}{_token("late", LATE)}{_token("third", THIRD)}{section}{extra}"""
    )
    return path
