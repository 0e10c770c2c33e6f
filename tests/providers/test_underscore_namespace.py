"""A provider under a namespace with '_' (`acme_corp/widget`, as Terraform ≥ 1.16 allows) at
every protocol step, against the real app over TLS: discovery, providers.v1 with its signed
SHA256SUMS, the network mirror (hosted and read through), OCI, the pages, MCP, `check` and
`list`; and a type with '_' refused, saying why. Terraform 1.11.4 refuses such an address itself,
before it asks a registry: the e2e runs with a terraform that takes it."""

from __future__ import annotations

import asyncio
import hashlib
import html
import json
import re
import shutil
import subprocess
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import httpx2
import pgpy
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gitreg.process.tlscert import TlsMaterial
from gitreg.providers.hashes import zip_hashes
from tests.support.mcp_checks import ok
from tests.support.oci_client import TofuOci
from tests.support.origin_server import ScriptedOrigin
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.servers import run_gitreg
from tests.support.terraform_cli import run_terraform
from tests.support.tls_clients import served_over_tls, trusting

HOST = "registry.example.test"
ORIGIN = "origin.example.test"
PROVIDER = "/v1/providers/acme_corp/widget"


@dataclass
class Served:
    root: Path
    url: str
    client: httpx.Client
    key: pgpy.PGPKey
    origin: ScriptedOrigin
    tls: TlsMaterial


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("underscore")
    key = new_key("gitreg")
    write_key(key, root / "gitreg.asc")
    platforms = ("linux_amd64", "darwin_arm64")
    write_release(root / "releases" / "1.0.0", "widget", "1.0.0", platforms, signer=key)
    with ScriptedOrigin(tls) as origin:
        (root / "registry.yaml").write_text(
            f"hostname: {HOST}\ncache_dir: cache\nmcp: {{enabled: true}}\n"
            "oci: {enabled: true}\nsigning: {keys: [gitreg.asc]}\n"
            "providers:\n  - {namespace: acme_corp, type: widget, artifacts: releases}\n"
            f"mirror: {{read_through: true, origins: {{{ORIGIN}: '{origin.url}'}},"
            f" ca_file: {tls.ca_cert}}}\n"
        )
        with served_over_tls(root / "registry.yaml", tls, timeout=30) as (server, client):
            yield Served(root, server.url, client, key, origin, tls)
            server.state.current.world.side.mirror.close()


def test_providers_v1_versions_download_and_signature(served: Served) -> None:
    client = served.client
    assert client.get("/.well-known/terraform.json").json()["providers.v1"] == "/v1/providers/"
    for path in (PROVIDER, "/v1/providers/ACME_Corp/widget"):  # folded, as Terraform folds it
        listed = client.get(f"{path}/versions")
        assert listed.status_code == 200, listed.text
        assert [v["version"] for v in listed.json()["versions"]] == ["1.0.0"]
    answer = client.get(f"{PROVIDER}/1.0.0/download/linux/amd64")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    data = client.get(body["download_url"]).content
    assert hashlib.sha256(data).hexdigest() == body["shasum"]
    assert data == (served.root / "releases" / "1.0.0" / body["filename"]).read_bytes()
    sums = client.get(body["shasums_url"]).content
    assert f"{body['shasum']}  {body['filename']}" in sums.decode()
    with warnings.catch_warnings():  # PGPy's warnings about what it does not check
        warnings.simplefilter("ignore")
        signature = pgpy.PGPSignature.from_blob(client.get(body["shasums_signature_url"]).content)
        assert served.key.pubkey.verify(sums, signature)
    keys = body["signing_keys"]["gpg_public_keys"]
    assert keys[0]["key_id"] == served.key.fingerprint.keyid.upper()


def test_the_network_mirror_serves_it(served: Served) -> None:
    base = f"/v1/mirror/{HOST}/acme_corp/widget"
    assert served.client.get(f"{base}/index.json").json() == {"versions": {"1.0.0": {}}}
    archives = served.client.get(f"{base}/1.0.0.json").json()["archives"]
    archive = archives["linux_amd64"]
    path = served.root / "releases" / "1.0.0" / archive["url"]
    assert archive["hashes"] == [zip_hashes(path).h1, zip_hashes(path).zh]
    assert served.client.get(f"{base}/{archive['url']}").content == path.read_bytes()


def test_the_mirror_reads_it_through_from_its_origin(served: Served) -> None:
    zips = served.origin.publish(
        new_key("origin"), "thing", {"2.0.0": ("linux_amd64",)}, namespace="acme_corp"
    )
    base = f"/v1/mirror/{ORIGIN}/acme_corp/thing"
    assert served.client.get(f"{base}/index.json").json() == {"versions": {"2.0.0": {}}}
    archive = served.client.get(f"{base}/2.0.0.json").json()["archives"]["linux_amd64"]
    got = served.client.get(f"{base}/{archive['url']}")
    assert got.content == zips["terraform-provider-thing_2.0.0_linux_amd64.zip"]
    repository = f"mirror/{ORIGIN}/acme_corp/thing"  # and over OCI, as an oci_mirror asks
    assert TofuOci(served.client).provider_versions(repository) == ["2.0.0"]


def test_oci_serves_it_at_providers_acme_corp(served: Served) -> None:
    tofu = TofuOci(served.client)
    release = next((served.root / "releases" / "1.0.0").glob("*linux_amd64.zip")).read_bytes()
    for repository in ("providers/acme_corp/widget", f"mirror/{HOST}/acme_corp/widget"):
        assert tofu.provider_versions(repository) == ["1.0.0"]
        assert tofu.provider_zip(repository, "1.0.0", "linux", "amd64") == release
    # '_' beside '-' is a Terraform namespace but no OCI name: unknown by its shape.
    beside = served.client.get("/v2/providers/acme_-corp/widget/tags/list")
    assert beside.status_code == 404 and "NAME_UNKNOWN" in beside.text


def test_the_pages_show_it(served: Served) -> None:
    page = served.client.get("/providers/acme_corp/widget")
    assert page.status_code == 200, page.text
    assert f'source  = "{HOST}/acme_corp/widget"' in html.unescape(page.text)
    assert "acme_corp/widget" in served.client.get("/").text


def test_mcp_lists_it(served: Served) -> None:
    async def run() -> None:
        async with (
            httpx2.AsyncClient(verify=trusting(served.tls.ca_cert), timeout=30) as http,
            Client(streamable_http_client(f"{served.url}/mcp", http_client=http)) as client,
        ):
            _, found = await ok(client, "search_providers", provider_query="widget")
            assert [p["provider_id"] for p in found["providers"]] == ["acme_corp/widget"]
            _, details = await ok(client, "get_provider_details", provider_id="acme_corp/widget")
            assert f'"{HOST}/acme_corp/widget"' in details["required_providers"]

    asyncio.run(run())


def test_check_and_list_accept_it(served: Served) -> None:
    config = str(served.root / "registry.yaml")
    checked = run_gitreg("check", "--config", config)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    listed = run_gitreg("list", "--config", config)
    assert listed.returncode == 0, listed.stderr
    assert "acme_corp/widget" in listed.stdout


def test_a_type_with_an_underscore_is_refused_saying_why(served: Served, tmp_path: Path) -> None:
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nproviders:\n  - {namespace: acme, type: my_type, artifacts: releases}\n"
    )
    checked = run_gitreg("check", "--config", str(tmp_path / "registry.yaml"))
    assert checked.returncode != 0
    said = checked.stdout + checked.stderr
    assert "provider type 'my_type' may not contain '_': only a provider's namespace may" in said
    for path in (
        "/v1/providers/acme/my_type/versions",
        "/v1/providers/acme/my_type/1.0.0/download/linux/amd64",
        f"/v1/mirror/{HOST}/acme/my_type/index.json",
        "/providers/acme/my_type",
    ):
        answer = served.client.get(path)
        assert answer.status_code == 400, (path, answer.status_code)
        assert "may not contain '_'" in html.unescape(answer.text), path
    for path in ("/v1/providers/_acme/widget/versions", "/v1/providers/acme--corp/x/versions"):
        answer = served.client.get(path)
        assert answer.status_code == 400, (path, answer.status_code)


def _terraform_version() -> tuple[int, ...] | None:
    """The terraform on PATH's version, None when there is none."""
    if shutil.which("terraform") is None:
        return None
    done = subprocess.run(["terraform", "version", "-json"], capture_output=True, text=True)
    found = re.match(r"(\d+)\.(\d+)", json.loads(done.stdout)["terraform_version"])
    return tuple(int(n) for n in found.groups()) if found else None


def _init(served: Served, workdir: Path) -> subprocess.CompletedProcess[str]:
    source = served.url.removeprefix("https://") + "/acme_corp/widget"
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "main.tf").write_text(
        "terraform {\n  required_providers {\n"
        f'    widget = {{ source = "{source}", version = "1.0.0" }}\n  }}\n}}\n'
    )
    (workdir / "cli.tfrc").write_text("")
    return run_terraform(workdir, served.tls.ca_cert, "init", "-input=false")


TERRAFORM = _terraform_version()
_SEEN = ".".join(map(str, TERRAFORM)) if TERRAFORM else "absent"


@pytest.mark.skipif(
    TERRAFORM is None or TERRAFORM < (1, 16),
    reason=f"terraform {_SEEN} on PATH: '_' in a provider namespace needs terraform ≥ 1.16",
)
def test_terraform_installs_it(served: Served, tmp_path: Path) -> None:
    done = _init(served, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lock = (tmp_path / ".terraform.lock.hcl").read_text()
    assert "/acme_corp/widget" in lock


@pytest.mark.skipif(
    TERRAFORM is None or TERRAFORM >= (1, 16), reason=f"terraform {_SEEN} takes '_' in namespaces"
)
def test_an_older_terraform_refuses_it_before_asking(served: Served, tmp_path: Path) -> None:
    done = _init(served, tmp_path)
    assert done.returncode != 0
    said = " ".join((done.stdout + done.stderr).split())
    assert "must contain only letters, digits, and dashes" in said
