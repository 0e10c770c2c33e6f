"""A registry with deprecated versions, for the tests of deprecations: a module `infra/vpc/aws`
(1.0.0, 1.1.0, 2.0.0; `< 2.0.0` deprecated) and a hosted provider `infra/widget` (0.9.0, 1.0.0;
`< 1.0.0` deprecated), both in registry.yaml."""

from __future__ import annotations

from pathlib import Path

from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.provider_releases import new_key, write_key, write_release

MODULE_REASON = "1.x keeps its state in the retired bucket; move to 2.x (see UPGRADING.md)."
PROVIDER_REASON = "0.9 mangles tags on update; use 1.0.0 or later."


def deprecated_catalog(root: Path, platforms: tuple[str, ...] = ("linux_amd64",)) -> Catalog:
    repo = GitRepo(root / "vpc")
    for version in ("1.0.0", "1.1.0", "2.0.0"):
        repo.release(f"v{version}", module_files(version))
    key = new_key("gitreg")
    write_key(key, root / "signing.asc")
    for version in ("0.9.0", "1.0.0"):
        write_release(root / "widget" / version, "widget", version, platforms, signer=key)
    path = root / "registry.yaml"
    path.write_text(
        f"""\
hostname: registry.example.test
cache_dir: cache
modules:
  - namespace: infra
    name: vpc
    system: aws
    repo: {repo.path}
    deprecated:
      - versions: "< 2.0.0"
        reason: "{MODULE_REASON}"
signing: {{keys: [signing.asc]}}
providers:
  - namespace: infra
    type: widget
    artifacts: widget
    deprecated:
      - {{versions: "< 1.0.0", reason: "{PROVIDER_REASON}"}}
mirror: {{read_through: false}}
"""
    )
    return load_catalog(path)
