"""The OCI Distribution API over real HTTPS, met by a client making OpenTofu's checks step by
step (tests/support/oci_client.py): modules as `oci://` packages, hosted providers as an
`oci_mirror` reads them, tags/list paging, error bodies and refused writes."""

from __future__ import annotations

import asyncio
import hashlib
import io
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from tests.support.asgi import in_process
from tests.support.gitrepo import GitRepo, module_files
from tests.support.oci_client import INDEX, MANIFEST, NotInMirror, Refused, TofuOci
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.state import serving_state
from tests.support.tls_clients import served_over_tls

VERSIONS = ("1.0.0", "1.1.0", "1.2.0+meta.1", "2.0.0-rc.1")


@dataclass
class Served:
    client: httpx.Client
    root: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("oci")
    single = GitRepo(root / "single")
    for version in VERSIONS:
        single.release(f"v{version}", module_files(version))
    mono = GitRepo(root / "mono")
    mono.write(module_files("naming", "modules/naming"))
    mono.release("vpc/v1.0.0", module_files("vpc", "modules/vpc"))
    write_key(new_key("gitreg"), root / "gitreg.asc")
    for version in ("1.0.0", "1.1.0+build.7"):
        write_release(root / "widget" / version, "widget", version, ("linux_amd64", "darwin_arm64"))
    (root / "registry.yaml").write_text(f"""
cache_dir: cache
oci: {{enabled: true, module_locations: true}}
modules:
  - {{namespace: Infra, name: single, system: aws, repo: {single.path}}}
  - {{namespace: infra, name: vpc, system: aws, repo: {mono.path}, path: modules/vpc, tags: "vpc/v{{version}}"}}
  - {{namespace: infra, name: vpcgit, system: aws, repo: {mono.path}, path: modules/vpc,
      tags: "vpc/v{{version}}", download: git}}
signing: {{keys: [gitreg.asc]}}
providers:
  - {{namespace: acme, type: widget, artifacts: widget}}
""")
    catalog = load_catalog(root / "registry.yaml")
    with served_over_tls(catalog, tls) as (_, client):
        yield Served(client, root)


def test_base_answers_200_to_anyone(served: Served) -> None:
    answer = served.client.get("/v2/")
    assert answer.status_code == 200
    assert answer.json() == {}
    assert answer.headers["docker-distribution-api-version"] == "registry/2.0"


def test_module_pulled_as_opentofu_pulls_it(served: Served) -> None:
    tofu = TofuOci(served.client)
    package = tofu.module("infra/single/aws", "1.1.0")
    assert package.read("main.tf").decode().count("1.1.0")
    methods = [(method, path.split("/")[-2]) for method, path, _ in tofu.requests]
    assert methods == [("GET", "v2"), ("HEAD", "manifests"), ("GET", "manifests"), ("GET", "blobs")]


def test_latest_is_the_newest_stable_version(served: Served) -> None:
    package = TofuOci(served.client).module("infra/single/aws")
    assert "1.2.0+meta.1" in package.read("main.tf").decode()


def test_build_metadata_is_written_with_an_underscore(served: Served) -> None:
    package = TofuOci(served.client).module("infra/single/aws", "1.2.0_meta.1")
    assert "1.2.0+meta.1" in package.read("main.tf").decode()
    with pytest.raises(Refused):
        TofuOci(served.client).module("infra/single/aws", "1.2.0+meta.1")


def test_by_digest_and_by_tag_are_the_same_manifest(served: Served) -> None:
    tofu = TofuOci(served.client)
    by_tag = tofu.resolve("infra/single/aws", "1.0.0", MANIFEST)
    by_digest = tofu.resolve("infra/single/aws", by_tag.digest, MANIFEST)
    assert by_digest == by_tag
    document = tofu.fetch_manifest("infra/single/aws", by_tag)
    assert document["artifactType"] == "application/vnd.opentofu.modulepkg"
    assert document["config"]["digest"] == (
        "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    )
    config = served.client.get(f"/v2/infra/single/aws/blobs/{document['config']['digest']}")
    assert config.content == b"{}"


def test_the_zip_holds_the_module_folder_as_the_tarball_does(served: Served) -> None:
    package = TofuOci(served.client).module("infra/vpc/aws", "1.0.0")
    download = served.client.get("/v1/modules/infra/vpc/aws/1.0.0/download")
    location = download.headers["x-terraform-get"]
    tarball = served.client.get(location.split("//")[0])
    with tarfile.open(fileobj=io.BytesIO(tarball.content)) as tar:
        files = {
            m.name.removeprefix("modules/vpc/"): tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile() and m.name.startswith("modules/vpc/")
        }
    zipped = {i.filename: package.read(i) for i in package.infolist() if not i.is_dir()}
    assert zipped == files


def test_tags_listed_in_lexical_order_with_link_paging(served: Served) -> None:
    huge = served.client.get("/v2/infra/single/aws/tags/list", params={"n": "9" * 5000})
    assert huge.status_code == 400, huge.text
    assert huge.json()["errors"][0]["code"] == "PAGINATION_NUMBER_INVALID"
    first = served.client.get("/v2/infra/single/aws/tags/list", params={"n": 2})
    assert first.json() == {"name": "infra/single/aws", "tags": ["1.0.0", "1.1.0"]}
    link = first.headers["link"]
    assert link == '</v2/infra/single/aws/tags/list?n=2&last=1.1.0>; rel="next"'
    second = served.client.get(link[1 : link.index(">")])
    assert second.json()["tags"] == ["1.2.0_meta.1", "2.0.0-rc.1"]
    third = served.client.get(second.headers["link"].split(";")[0].strip("<>"))
    assert third.json()["tags"] == ["latest"]
    assert "link" not in third.headers
    assert TofuOci(served.client).provider_versions("infra/single/aws")[:3] == [
        "1.0.0",
        "1.1.0",
        "1.2.0+meta.1",
    ]


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/v2/infra/nothing/aws/tags/list", "NAME_UNKNOWN"),
        ("/v2/Infra/single/aws/tags/list", "NAME_UNKNOWN"),  # OCI names are lowercase
        ("/v2/infra/vpcgit/aws/tags/list", "NAME_UNKNOWN"),  # cloned with git: no package
        ("/v2/a/b/tags/list", "NAME_UNKNOWN"),
        ("/v2/infra/single/aws/manifests/9.9.9", "MANIFEST_UNKNOWN"),
        (f"/v2/infra/single/aws/manifests/sha256:{'0' * 64}", "MANIFEST_UNKNOWN"),
        ("/v2/infra/single/aws/manifests/not+a+tag", "MANIFEST_UNKNOWN"),
        (f"/v2/infra/single/aws/blobs/sha256:{'0' * 64}", "BLOB_UNKNOWN"),
        ("/v2/infra/single/aws/blobs/md5:abc", "BLOB_UNKNOWN"),
        ("/v2/providers/acme/nothing/tags/list", "NAME_UNKNOWN"),
    ],
)
def test_unknown_things_have_their_codes(served: Served, path: str, code: str) -> None:
    answer = served.client.get(path)
    assert answer.status_code == 404
    assert [e["code"] for e in answer.json()["errors"]] == [code]


def test_an_unknown_provider_falls_through_to_the_next_method(served: Served) -> None:
    with pytest.raises(NotInMirror):
        TofuOci(served.client).provider_versions("providers/acme/nothing")


@pytest.mark.parametrize("method", ["PUT", "POST", "PATCH", "DELETE"])
def test_writes_are_refused(served: Served, method: str) -> None:
    for path in ("/v2/infra/single/aws/manifests/3.0.0", "/v2/infra/single/aws/blobs/uploads/"):
        answer = served.client.request(method, path, content=b"{}")
        assert answer.status_code == 405, path
        assert answer.json()["errors"][0]["code"] == "UNSUPPORTED"


def test_provider_installed_as_the_oci_mirror_installs_it(served: Served) -> None:
    tofu = TofuOci(served.client)
    assert tofu.provider_versions("providers/acme/widget") == ["1.0.0", "1.1.0+build.7"]
    for version in ("1.0.0", "1.1.0+build.7"):
        for os, arch in (("linux", "amd64"), ("darwin", "arm64")):
            data = tofu.provider_zip("providers/acme/widget", version, os, arch)
            name = f"terraform-provider-widget_{version}_{os}_{arch}.zip"
            assert data == (served.root / "widget" / version / name).read_bytes()
            sums = (served.root / "widget" / version).glob("*_SHA256SUMS")
            assert f"{hashlib.sha256(data).hexdigest()}  {name}" in next(sums).read_text()
    with pytest.raises(Refused, match="0 manifests"):
        tofu.provider_zip("providers/acme/widget", "1.0.0", "windows", "amd64")


def test_a_provider_index_is_no_module_package(served: Served) -> None:
    with pytest.raises(Refused, match=r"not application/vnd\.oci\.image\.manifest"):
        TofuOci(served.client).module("providers/acme/widget", "1.0.0")
    found = TofuOci(served.client).resolve("providers/acme/widget", "1.0.0", INDEX)
    assert found.media_type == INDEX


@pytest.mark.parametrize(
    ("agent", "oci"),
    [
        ("OpenTofu/1.10.0", True),
        ("OpenTofu/1.12.6 (+https://www.opentofu.org)", True),
        ("OpenTofu/2.0.0", True),
        ("OpenTofu/1.9.1", False),
        ("OpenTofu/" + "9" * 5000 + ".1", False),  # past int()'s digits: not a version, no 500
        ("Terraform/1.11.4 (+https://www.terraform.io)", False),
        ("python-httpx", False),
    ],
)
def test_module_locations_for_opentofu_1_10_and_later(
    served: Served, agent: str, oci: bool
) -> None:
    answer = served.client.get(
        "/v1/modules/infra/vpc/aws/1.0.0/download", headers={"User-Agent": agent}
    )
    location = answer.json()["location"]
    assert answer.headers["x-terraform-get"] == location
    if not oci:
        assert location.startswith("/v1/archives/")
        return
    host = f"127.0.0.1:{served.client.base_url.port}"
    assert location.startswith(f"oci://{host}/infra/vpc/aws?digest=sha256:")
    digest = location.partition("?digest=")[2]
    package = TofuOci(served.client).module("infra/vpc/aws", digest)
    assert package.read("main.tf") == TofuOci(served.client).module("infra/vpc/aws").read("main.tf")


def test_a_module_cloned_with_git_keeps_its_git_location(served: Served) -> None:
    answer = served.client.get(
        "/v1/modules/infra/vpcgit/aws/1.0.0/download", headers={"User-Agent": "OpenTofu/1.11.0"}
    )
    assert answer.json()["location"].startswith("git::")


def test_a_zip_the_cache_lost_is_built_again(served: Served) -> None:
    tofu = TofuOci(served.client)
    first = tofu.module("infra/single/aws", "1.0.0").read("main.tf")
    for built in (served.root / "cache" / "zips").rglob("*.zip"):
        built.unlink()
    assert TofuOci(served.client).module("infra/single/aws", "1.0.0").read("main.tf") == first


@pytest.mark.parametrize(
    "path",
    ["/v2/", "/v2/token", "/v2/infra/single/aws/tags/list", "/v2/infra/nothing/aws/tags/list"],
)
def test_head_answers_what_get_answers_without_a_body(served: Served, path: str) -> None:
    got, head = served.client.get(path), served.client.head(path)
    assert head.status_code == got.status_code and head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]


def test_without_oci_enabled_v2_is_not_served(tmp_path: Path) -> None:
    GitRepo(tmp_path / "vpc").release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nmodules:\n  - {namespace: infra, name: vpc, system: aws, repo: vpc}\n"
    )
    app = in_process(serving_state(load_catalog(tmp_path / "registry.yaml")))

    async def ask() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gitreg.test") as client:
            paths = ("/v2/", "/v2/token", "/v2/infra/vpc/aws/tags/list")
            return [await client.get(path) for path in paths]

    for answer in asyncio.run(ask()):
        assert answer.status_code == 404
        assert answer.json()["errors"][0]["code"] == "UNSUPPORTED"
