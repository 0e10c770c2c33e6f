"""Deprecated versions over real HTTP: providers.v1's `versions` carries `warnings`, the registry
API and the pages say which versions are deprecated and why, and a deprecated version still
downloads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from tests.support.deprecated_catalog import MODULE_REASON, PROVIDER_REASON, deprecated_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    catalog = deprecated_catalog(tmp_path_factory.mktemp("deprecated"))
    with RegistryServer(catalog) as server, httpx.Client(base_url=server.url) as client:
        yield client


def test_provider_versions_carry_a_warning_naming_the_deprecated_versions(
    client: httpx.Client,
) -> None:
    body = client.get("/v1/providers/infra/widget/versions").json()
    assert [v["version"] for v in body["versions"]] == ["1.0.0", "0.9.0"]
    assert body["warnings"] == [f"Version 0.9.0 is deprecated: {PROVIDER_REASON}"]
    download = client.get("/v1/providers/infra/widget/0.9.0/download/linux/amd64")
    assert download.status_code == 200 and download.json()["filename"].endswith(".zip")


def test_the_registry_api_says_a_version_is_deprecated(client: httpx.Client) -> None:
    old = client.get("/v1/modules/infra/vpc/aws/1.1.0").json()
    assert old["deprecated"] == MODULE_REASON
    assert "deprecated" not in client.get("/v1/modules/infra/vpc/aws/2.0.0").json()
    assert "deprecated" not in client.get("/v1/modules/infra/vpc/aws").json()  # the newest
    download = client.get("/v1/modules/infra/vpc/aws/1.0.0/download")
    assert download.status_code == 200 and download.headers["x-terraform-get"]


def test_the_pages_say_so(client: httpx.Client) -> None:
    old = client.get("/modules/infra/vpc/aws/1.0.0").text
    assert 'id="banner-version-deprecated"' in old and MODULE_REASON in old
    assert ">1.1.0 (deprecated)</option>" in old
    newest = client.get("/modules/infra/vpc/aws").text
    assert 'id="banner-version-deprecated"' not in newest
    assert 'title="1.x keeps its state' in newest  # the versions table's badge
    provider = client.get("/providers/infra/widget/0.9.0").text
    assert 'id="banner-version-deprecated"' in provider and PROVIDER_REASON in provider
    assert 'id="banner-version-deprecated"' not in client.get("/providers/infra/widget").text


def test_a_retired_module_is_marked_in_the_lists(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "old")
    repo.release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nmodules:\n"
        f"  - {{namespace: infra, name: old, system: aws, repo: {repo.path},\n"
        "      deprecated: [{versions: '>= 0.0.0', reason: 'Retired: use infra/vpc/aws.'}]}\n"
    )
    with (
        RegistryServer(load_catalog(tmp_path / "registry.yaml")) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        home = client.get("/?namespace=infra").text
        search = client.get("/?q=old").text
    for page in (home, search):
        assert (
            '<span class="badge warn" title="Retired: use infra/vpc/aws.">deprecated</span>' in page
        )
