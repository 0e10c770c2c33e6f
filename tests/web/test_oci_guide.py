"""docs/opentofu-oci.md, as a user follows it: its registry.yaml section loads, and the module
source, the oci_mirror and the oci_credentials it shows work against a real server, as the
conformance client (OpenTofu's checks, step by step) meets them."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from gitreg.process.tlscert import TlsMaterial
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.oci_client import Refused, TofuOci
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.site_snippets import claimed
from tests.support.tls_clients import served_over_tls

PAGE = "opentofu-oci.md"
HOST = "registry.example.com"


@dataclass
class Served:
    client: httpx.Client
    host: str  # 127.0.0.1:PORT, where the page says registry.example.com
    root: Path


def _hcl_string(text: str, key: str) -> str:
    found = re.search(rf'^\s*{key}\s*=\s*"([^"]*)"', text, re.MULTILINE)
    assert found, f"no {key} in {text}"
    return found[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("oci-guide")
    vpc = GitRepo(root / "vpc")
    vpc.release("v1.1.0", module_files("1.1.0"))
    vpc.release("v1.2.0", module_files("1.2.0"))
    GitRepo(root / "net").release("v1.0.0", module_files("net"))
    write_key(new_key("gitreg"), root / "gitreg.asc")
    write_release(root / "widget" / "1.0.0", "widget", "1.0.0", ("linux_amd64",))
    token = hashlib.sha256(b"the-gitreg-token").hexdigest()
    (root / "registry.yaml").write_text(f"""
hostname: {HOST}
cache_dir: cache
oci: {{enabled: true}}
modules:
  - {{namespace: infra, name: vpc, system: aws, repo: vpc}}
  - {{namespace: secret, name: net, system: aws, repo: net}}
signing: {{keys: [gitreg.asc]}}
providers:
  - {{namespace: acme, type: widget, artifacts: widget}}
auth:
  public: [infra, acme]
  tokens:
    - {{name: team, token_sha256: "{token}", read: [secret]}}
""")
    with served_over_tls(root / "registry.yaml", tls) as (server, client):
        yield Served(client, f"127.0.0.1:{server.port}", root)


def test_the_oci_section_loads(write_catalog: WriteCatalog) -> None:
    with claimed(PAGE, "test_the_oci_section_loads") as page:
        section = page.take("yaml", "oci:")
    module = "modules:\n  - {namespace: infra, name: vpc, system: aws, repo: https://git.example.com/x.git}\n"
    catalog = write_catalog(module + section)
    assert catalog.oci.enabled and not catalog.oci.module_locations
    assert yaml.safe_load(section) == {"oci": {"enabled": True, "module_locations": False}}


def test_the_module_source_installs(served: Served) -> None:
    with claimed(PAGE, "test_the_module_source_installs") as page:
        source = _hcl_string(page.take("hcl", 'module "vpc"'), "source")
    address, _, query = source.removeprefix("oci://").partition("?tag=")
    host, _, repository = address.partition("/")
    assert host == HOST
    package = TofuOci(served.client).module(repository, query)
    assert "1.2.0" in package.read("main.tf").decode()


def test_the_oci_mirror_installs(served: Served) -> None:
    with claimed(PAGE, "test_the_oci_mirror_installs") as page:
        config = page.take("hcl", "oci_mirror")
    template = _hcl_string(config, "repository_template")
    filled = template.replace("${namespace}", "acme").replace("${type}", "widget")
    host, _, repository = filled.partition("/")
    assert host == HOST
    tofu = TofuOci(served.client)
    assert tofu.provider_versions(repository) == ["1.0.0"]
    data = tofu.provider_zip(repository, "1.0.0", "linux", "amd64")
    release = served.root / "widget" / "1.0.0" / "terraform-provider-widget_1.0.0_linux_amd64.zip"
    assert data == release.read_bytes()


def test_oci_credentials_open_a_private_namespace(served: Served) -> None:
    with claimed(PAGE, "test_oci_credentials_open_a_private_namespace") as page:
        block = page.take("hcl", "oci_credentials")
    assert f'oci_credentials "{HOST}"' in block
    credentials = (_hcl_string(block, "username"), _hcl_string(block, "password"))
    with pytest.raises(Refused, match="401"):
        TofuOci(served.client).module("secret/net/aws", "1.0.0")
    package = TofuOci(served.client, credentials).module("secret/net/aws", "1.0.0")
    assert "net" in package.read("main.tf").decode()
