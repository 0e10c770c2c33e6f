"""Archive locations carry their digest: the download answer's `?checksum=sha256:` is the
SHA-256 of the bytes the archive route serves, recorded once in the ledger; a build whose bytes
differ from the record is a 503 that names it, listed in /v1/status, never served; so with the
zips OpenTofu pulls over OCI; a HEAD of an archive answers as its GET does, without the body."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer

DOWNLOAD = "/v1/modules/infra/net/aws/1.0.0/download"


def _catalog(tmp_path: Path, extra: str = "") -> Path:
    if not (tmp_path / "repo").exists():
        repo = GitRepo(tmp_path / "repo")
        repo.release("v1.0.0", module_files("1.0.0", "modules/net"))
    (tmp_path / "registry.yaml").write_text(
        f"cache_dir: cache\narchives: {{memory_budget: 0}}\n{extra}"
        "modules:\n  - {namespace: infra, name: net, system: aws,"
        f" repo: {tmp_path / 'repo'}, path: modules/net}}\n"
    )
    return tmp_path / "registry.yaml"


def _digests_file(tmp_path: Path) -> Path:
    (found,) = (tmp_path / "cache" / "ledgers").glob("*.digests.json")
    return found


def test_the_location_names_the_digest_of_the_bytes_served_recorded_once(tmp_path: Path) -> None:
    with RegistryServer(load_catalog(_catalog(tmp_path))) as server:
        location = httpx.get(server.url + DOWNLOAD).headers["x-terraform-get"]
        package, _, checksum = location.partition("//modules/net?checksum=sha256:")
        served = httpx.get(server.url + package).content  # as go-getter asks: no query
        assert checksum == hashlib.sha256(served).hexdigest()
    recorded = json.loads(_digests_file(tmp_path).read_text())
    assert recorded == {package.rsplit("/", 1)[1]: checksum}
    # Built again from nothing (a new cache, the same ledger): the same bytes, the same digest.
    for built in (tmp_path / "cache" / "archives").rglob("*.tar.gz"):
        built.unlink()
    with RegistryServer(load_catalog(_catalog(tmp_path))) as server:
        assert httpx.get(server.url + DOWNLOAD).headers["x-terraform-get"] == location
        assert httpx.get(server.url + package).content == served


def test_a_build_the_ledger_does_not_record_is_a_503_never_its_bytes(tmp_path: Path) -> None:
    with RegistryServer(load_catalog(_catalog(tmp_path))) as server:
        location = httpx.get(server.url + DOWNLOAD).headers["x-terraform-get"]
    package = location.partition("//")[0]
    name = package.rsplit("/", 1)[1]
    # Another build recorded first (another replica's zlib, say); this one's bytes are not it.
    _digests_file(tmp_path).write_text(json.dumps({name: "0" * 64}))
    for built in (tmp_path / "cache" / "archives").rglob("*.tar.gz"):
        built.unlink()
    with RegistryServer(load_catalog(_catalog(tmp_path))) as server:
        for path in (DOWNLOAD, package, DOWNLOAD, package):  # the second time from memory
            refused = httpx.get(server.url + path)
            assert refused.status_code == 503, (path, refused.text)
            error = refused.json()["errors"][0]
            assert f"archive {name} built here has sha256:" in error
            assert f"the ledger records sha256:{'0' * 64}" in error
        assert httpx.head(server.url + package).status_code == 503
        status = httpx.get(server.url + "/v1/status").json()
        assert [m["archive"] for m in status["archives_mismatched"]] == [
            name.removesuffix(".tar.gz")
        ]
    assert not list((tmp_path / "cache" / "archives").rglob("*.tar.gz"))  # never put in place


def test_a_head_of_an_archive_is_its_get_without_the_body(tmp_path: Path) -> None:
    with RegistryServer(load_catalog(_catalog(tmp_path))) as server:
        package = httpx.get(server.url + DOWNLOAD).headers["x-terraform-get"].partition("//")[0]
        cold = server.url + package.replace(package.rsplit("/", 1)[1], "f" * 40 + ".tar.gz")
        assert httpx.head(cold).status_code == httpx.get(cold).status_code == 404
        for _ in range(2):  # from its file, then as a kept answer
            head, get = httpx.head(server.url + package), httpx.get(server.url + package)
            assert head.status_code == get.status_code == 200
            assert head.content == b""
            assert head.headers["content-length"] == str(len(get.content))
            for name in ("etag", "content-type", "cache-control"):
                assert head.headers[name] == get.headers[name]


def test_the_zip_of_an_oci_package_is_recorded_and_compared_too(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path, "oci: {enabled: true}\n")
    with RegistryServer(load_catalog(catalog)) as server:
        manifest = httpx.get(server.url + "/v2/infra/net/aws/manifests/1.0.0").json()
    (layer,) = manifest["layers"]
    recorded = json.loads(_digests_file(tmp_path).read_text())
    (zip_name,) = [name for name in recorded if name.endswith(".zip")]
    assert f"sha256:{recorded[zip_name]}" == layer["digest"]
    _digests_file(tmp_path).write_text(json.dumps({zip_name: "0" * 64}))
    for built in (tmp_path / "cache" / "zips").rglob("*.zip"):
        built.unlink()
    with RegistryServer(load_catalog(catalog)) as server:
        refused = httpx.get(server.url + "/v2/infra/net/aws/manifests/1.0.0")
        assert refused.status_code == 503 and "the ledger records" in refused.text
        blob = httpx.get(server.url + "/v2/infra/net/aws/blobs/" + layer["digest"])
        assert blob.status_code == 503  # never the bytes of another zip
