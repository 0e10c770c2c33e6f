"""A registry with a monorepo of several modules, a single-module repository, and a hosted
provider, read from real Git repositories."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.modules.sync import ModuleSync
from gitreg.providers.hosted import Providers
from tests.support.gitrepo import GitRepo, module_files
from tests.support.provider_releases import new_key, write_key, write_release


@dataclass
class Served:
    sync: ModuleSync
    providers: Providers


def write_catalog(root: Path) -> Path:
    mono = GitRepo(root / "mono")
    mono.write(module_files("naming", "modules/naming"))
    mono.release("vpc/v1.0.0", module_files("vpc", "modules/vpc"))
    mono.release("vpc/v1.1.0", module_files("vpc 1.1", "modules/vpc"))
    mono.release("vpc/v2.0.0-rc.1", module_files("vpc 2 rc", "modules/vpc"))
    mono.release("naming/v0.3.0", module_files("naming 0.3", "modules/naming"))
    mono.release("dns/v1.0.0-beta.1", module_files("dns", "modules/dns"))
    single = GitRepo(root / "single")
    single.release("v3.2.1", module_files("3.2.1"))
    GitRepo(root / "empty").commit("nothing tagged yet")
    write_key(new_key("gitreg"), root / "gitreg.asc")
    write_release(root / "widget" / "1.0.0", "widget", "1.0.0", ("linux_amd64",))
    write_release(root / "widget" / "1.2.0", "widget", "1.2.0", ("linux_amd64",))
    path = root / "registry.yaml"
    path.write_text(f"""
hostname: registry.example.test
cache_dir: cache
modules:
  - {{namespace: Infra, name: vpc, system: aws, repo: {root / "mono"}, path: modules/vpc, tags: "vpc/v{{version}}"}}
  - {{namespace: infra, name: naming, system: generic, repo: {root / "mono"}, path: modules/naming, tags: "naming/v{{version}}"}}
  - {{namespace: infra, name: dns, system: aws, repo: {root / "mono"}, path: modules/dns, tags: "dns/v{{version}}"}}
  - {{namespace: apps, name: web-vpc, system: azurerm, repo: {root / "single"}}}
  - {{namespace: apps, name: pending, system: aws, repo: {root / "empty"}}}
signing: {{keys: [gitreg.asc]}}
providers:
  - {{namespace: acme, type: widget, artifacts: widget}}
mirror: {{read_through: false}}
""")
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Served:
    catalog = load_catalog(write_catalog(tmp_path_factory.mktemp("directory")))
    sync = ModuleSync(catalog)
    sync.refresh()
    providers = Providers(catalog, sync)
    providers.refresh()
    return Served(sync, providers)
