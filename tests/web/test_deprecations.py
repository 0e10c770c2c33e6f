"""Deprecated versions over real HTTP: providers.v1's `versions` carries `warnings`, the registry
API and the pages say which versions are deprecated and why, and a deprecated version still
downloads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.modules.persisted import decode
from tests.support.deprecated_catalog import MODULE_REASON, PROVIDER_REASON, deprecated_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, run_gitreg


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


def test_a_deprecated_line_in_a_version_s_own_file(tmp_path: Path) -> None:
    """`deprecated:` at the top of `.gitreg.yaml` in a tagged commit deprecates that version:
    its page, its details in the API and `gitreg docs` say so; the next version's file does
    not, and it is not."""
    repo = GitRepo(tmp_path / "vpc")
    line = "deprecated: The last 1.x release; 1.x ends in June, move to 2.x.\n"
    repo.release("v1.9.0", {**module_files("1.9.0"), ".gitreg.yaml": line})
    repo.release("v2.0.0", {**module_files("2.0.0"), ".gitreg.yaml": "modules: []\n"})
    (tmp_path / "registry.yaml").write_text(
        f"cache_dir: cache\nmodules:\n  - {{namespace: infra, name: vpc, system: aws, repo: {repo.path}}}\n"
    )
    reason = "The last 1.x release; 1.x ends in June, move to 2.x."
    with (
        RegistryServer(load_catalog(tmp_path / "registry.yaml")) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        assert client.get("/v1/modules/infra/vpc/aws/1.9.0").json()["deprecated"] == reason
        assert "deprecated" not in client.get("/v1/modules/infra/vpc/aws/2.0.0").json()
        page = client.get("/modules/infra/vpc/aws/1.9.0").text
        assert 'id="banner-version-deprecated"' in page and "1.x ends in June" in page
        assert 'id="banner-version-deprecated"' not in client.get("/modules/infra/vpc/aws").text
    done = run_gitreg("docs", "infra/vpc/aws", "1.9.0", "--config", str(tmp_path / "registry.yaml"))
    assert done.stdout.splitlines()[1] == f"Deprecated: {reason} (it still installs)"


def test_a_version_s_own_line_reaches_every_list(tmp_path: Path) -> None:
    """The line of a tag's `.gitreg.yaml` is read with the tags, not with the docs: the home
    page's lists, a search, `/v1/modules` and a module page's versions say so, as the version's
    own page does, without its docs built; registry.yaml's `deprecated:` list wins over it; and
    the persisted index keeps it for the next start."""
    retired = "Retired: use infra/vpc/aws."
    old = GitRepo(tmp_path / "old")
    old.release("v1.0.0", {**module_files("1.0.0"), ".gitreg.yaml": f"deprecated: '{retired}'\n"})
    vpc = GitRepo(tmp_path / "vpc")
    vpc.release("v1.9.0", {**module_files("1.9.0"), ".gitreg.yaml": "deprecated: Its own.\n"})
    vpc.release("v1.9.1", {".gitreg.yaml": "deprecated: The last 1.x.\n"})
    vpc.release("v2.0.0", {**module_files("2.0.0"), ".gitreg.yaml": "modules: []\n"})
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nmodules:\n"
        f"  - {{namespace: infra, name: old, system: aws, repo: {old.path}}}\n"
        f"  - {{namespace: infra, name: vpc, system: aws, repo: {vpc.path},\n"
        "      deprecated: [{versions: '1.9.0', reason: 'Registry says.'}]}\n"
    )
    catalog = load_catalog(tmp_path / "registry.yaml")
    badge = f'<span class="badge warn" title="{retired}">deprecated</span>'
    for fetch_first in (True, False):  # then a start from the persisted index
        with (
            RegistryServer(catalog, fetch_first=fetch_first) as server,
            httpx.Client(base_url=server.url) as client,
        ):
            listed = {m["name"]: m for m in client.get("/v1/modules/infra").json()["modules"]}
            assert listed["old"]["deprecated"] == retired
            assert "deprecated" not in listed["vpc"]  # 2.0.0, the newest, is not
            assert badge in client.get("/?namespace=infra").text
            assert badge in client.get("/?q=old").text
            assert client.get("/v1/modules/infra/vpc/aws/1.9.0").json()["deprecated"] == (
                "Registry says."
            )
            assert client.get("/v1/modules/infra/vpc/aws/1.9.1").json()["deprecated"] == (
                "The last 1.x."
            )
            page = client.get("/modules/infra/vpc/aws").text
            assert '<span class="badge warn" title="The last 1.x.">deprecated</span>' in page
            assert '<span class="badge warn" title="Registry says.">deprecated</span>' in page
            assert 'id="banner-version-deprecated"' not in page
    (line,) = [
        decode(text)
        for text in (tmp_path / "cache" / "index.jsonl").read_text().splitlines()
        if str(vpc.path) in text
    ]
    specs = [s for s in catalog.modules if s.address.name == "vpc"]
    ((entry,), _) = line.entries(specs, tmp_path / "clone")
    assert [(r.version, r.deprecated) for r in entry.versions.releases] == [
        ("2.0.0", ""),
        ("1.9.1", "The last 1.x."),
        ("1.9.0", "Its own."),
    ]
