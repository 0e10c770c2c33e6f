"""The network mirror's providers over OCI, at `mirror/HOSTNAME/NAMESPACE/TYPE`, as OpenTofu's
oci_mirror installs them: read through from a real origin registry (each zip fetched once,
verified, then named in the index byte for byte), and behind the gate as `/v1/mirror/` is."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.oci_client import INDEX, NotInMirror, TofuOci
from tests.support.origin_server import ScriptedOrigin
from tests.support.private_registry import MIRROR, READER, write_private_registry
from tests.support.provider_releases import new_key
from tests.support.site_snippets import claimed
from tests.support.tls_clients import served_over_tls

HOST = "origin.example.test"
REPOSITORY = f"mirror/{HOST}/acme/widget"
KEY = new_key("origin")


@pytest.fixture
def read_through(tls: TlsMaterial, tmp_path: Path) -> Iterator[tuple[ScriptedOrigin, httpx.Client]]:
    with ScriptedOrigin(tls) as origin:
        (tmp_path / "registry.yaml").write_text(
            "hostname: mirror.example.test\ncache_dir: cache\nmodules: []\noci: {enabled: true}\n"
            f"mirror: {{read_through: true, origins: {{{HOST}: '{origin.url}'}}, ca_file: {tls.ca_cert}}}\n"
        )
        with served_over_tls(tmp_path / "registry.yaml", tls, timeout=30) as (server, client):
            yield origin, client
            server.state.current.world.side.mirror.close()


def test_a_provider_read_through_installs_byte_for_byte(
    read_through: tuple[ScriptedOrigin, httpx.Client],
) -> None:
    origin, client = read_through
    zips = origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64", "darwin_arm64")})
    tofu = TofuOci(client)
    assert tofu.provider_versions(REPOSITORY) == ["1.0.0"]
    for platform in ("linux_amd64", "darwin_arm64"):
        os, arch = platform.split("_")
        data = tofu.provider_zip(REPOSITORY, "1.0.0", os, arch)
        assert data == zips[f"terraform-provider-widget_1.0.0_{platform}.zip"]
        assert origin.asked[f"/files/1.0.0/{platform}.zip"] == 1  # fetched once, then kept
    again = TofuOci(client).resolve(REPOSITORY, "1.0.0", INDEX)
    by_digest = client.get(f"/v2/{REPOSITORY}/manifests/{again.digest}")
    assert by_digest.status_code == 200 and len(by_digest.content) == again.size


def test_what_the_mirror_has_not_falls_through(
    read_through: tuple[ScriptedOrigin, httpx.Client],
) -> None:
    _, client = read_through
    for repository in (REPOSITORY, "mirror/elsewhere.example.test/acme/widget"):
        with pytest.raises(NotInMirror):
            TofuOci(client).provider_versions(repository)


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("oci-mirror-private")
    path = write_private_registry(root, "  signing_key_file: new.key\n")
    with path.open("a") as config:
        config.write("oci: {enabled: true}\n")
    with served_over_tls(path, tls) as (_, client):
        yield client


def test_the_mirror_needs_a_mirror_token(private: httpx.Client) -> None:
    repository = "mirror/registry.example.test/secret/widget"
    with_mirror = TofuOci(private, ("oauth2", MIRROR))
    assert with_mirror.provider_versions(repository) == ["1.0.0"]
    assert with_mirror.provider_zip(repository, "1.0.0", "linux", "amd64")[:2] == b"PK"
    refused = private.get(
        f"/v2/{repository}/tags/list", headers={"Authorization": f"Bearer {READER}"}
    )
    assert refused.status_code == 403
    assert refused.json()["errors"][0]["code"] == "DENIED"
    anonymous = private.get(f"/v2/{repository}/tags/list")
    assert anonymous.status_code == 401


def test_the_mirror_template_installs(read_through: tuple[ScriptedOrigin, httpx.Client]) -> None:
    origin, client = read_through
    zips = origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
    with claimed("opentofu-oci.md", "test_the_mirror_template_installs") as page:
        config = page.take("hcl", "oci_mirror")
    template = re.search(r'repository_template\s*=\s*"([^"]*)"', config)
    assert template is not None
    filled = (template[1].replace("${hostname}", HOST).replace("${namespace}", "acme")).replace(
        "${type}", "widget"
    )
    host, _, repository = filled.partition("/")
    assert host == "registry.example.com"
    data = TofuOci(client).provider_zip(repository, "1.0.0", "linux", "amd64")
    assert data == zips["terraform-provider-widget_1.0.0_linux_amd64.zip"]
