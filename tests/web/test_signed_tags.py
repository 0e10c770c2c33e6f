"""`require_signed_tags` through a real server: a module held to SSH signers (its own), one to
OpenPGP keys (its namespace's). Only the tags whose signature verifies become versions; the others
are named with the reason by `/v1/status`, `gitreg list` and `gitreg check`; the signer shows on
the page, in the registry API and in MCP."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.mcp_checks import ok
from tests.support.servers import RegistryServer, run_gitreg, wait_until
from tests.support.site_snippets import block, claimed
from tests.support.tag_signing import allowed_signers, four_signers, ssh_signer


@dataclass(frozen=True)
class Served:
    server: RegistryServer
    config: Path
    bob_fingerprint: str


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("signed")
    with four_signers(root) as keys:
        vpc, dns = GitRepo(root / "vpc"), GitRepo(root / "dns")
        for version, signer in (("1.0.0", keys.alice), ("1.1.0", keys.mallory), ("1.2.0", None)):
            vpc.write(module_files(version)).commit()
            signer.sign(vpc, f"v{version}") if signer else vpc.tag(f"v{version}", annotated=True)
        for version, pgp in (("2.0.0", keys.bob), ("2.1.0", keys.eve), ("2.2.0", None)):
            dns.write(module_files(version)).commit()
            pgp.sign(dns, f"v{version}") if pgp else dns.tag(f"v{version}")
        allowed_signers(root / "allowed_signers", keys.alice)
        keys.bob.export(root / "release-keys.asc")
        config = root / "registry.yaml"
        config.write_text(_catalog(vpc.path, dns.path))
        with RegistryServer(load_catalog(config)) as server:
            yield Served(server, config, keys.bob.fingerprint())


_PAGE = "new-tags.md"
_VPC_URL = "https://git.example.com/infra/terraform-aws-vpc.git"
_DNS_URL = "https://git.example.com/net/terraform-aws-dns.git"


def _catalog(vpc: Path, dns: Path) -> str:
    """The page's catalog, its repositories the tests' own, with MCP on."""
    page = block(_PAGE, "yaml", "require_signed_tags:")
    served = page.replace(_VPC_URL, str(vpc)).replace(_DNS_URL, str(dns))
    return f"cache_dir: cache\nmcp: {{enabled: true}}\n{served}"


@pytest.fixture(scope="module")
def client(served: Served) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.server.url) as client:
        yield client


def _versions(client: httpx.Client, module: str) -> list[str]:
    body = client.get(f"/v1/modules/{module}/versions").json()
    return [v["version"] for v in body["modules"][0]["versions"]]


def test_the_page_s_catalog_is_the_one_served(client: httpx.Client) -> None:
    """Only the tags whose signature verifies are versions."""
    with claimed(_PAGE, "test_the_page_s_catalog_is_the_one_served") as blocks:
        blocks.take("yaml", "require_signed_tags:")
    assert _versions(client, "infra/vpc/aws") == ["1.0.0"]
    assert _versions(client, "net/dns/aws") == ["2.0.0"]
    assert client.get("/v1/modules/infra/vpc/aws/1.1.0/download").status_code == 404


def test_status_names_each_refused_tag_and_why(client: httpx.Client) -> None:
    repositories = client.get("/v1/status").json()["repositories"]
    refused = {
        (r["module"], r["tag"]): r["reason"] for rep in repositories for r in rep["refused_tags"]
    }
    assert refused.keys() == {
        ("infra/vpc/aws", "v1.1.0"),
        ("infra/vpc/aws", "v1.2.0"),
        ("net/dns/aws", "v2.1.0"),
        ("net/dns/aws", "v2.2.0"),
    }
    assert refused["infra/vpc/aws", "v1.1.0"].startswith("not published: signed by SSH key SHA256:")
    assert refused["infra/vpc/aws", "v1.1.0"].endswith("which allowed_signers does not list")
    assert refused["infra/vpc/aws", "v1.2.0"] == (
        "not published: missing signature (require_signed_tags wants an SSH signature)"
    )
    assert refused["net/dns/aws", "v2.1.0"].startswith("not published: signed by OpenPGP key ")
    assert refused["net/dns/aws", "v2.2.0"] == (
        "not published: missing signature (require_signed_tags wants an OpenPGP signature)"
    )


def test_the_signer_is_on_the_page_and_in_the_api(served: Served, client: httpx.Client) -> None:
    vpc = client.get("/v1/modules/infra/vpc/aws/1.0.0").json()
    assert vpc["signer"].startswith("alice@example.com (ED25519 key SHA256:")
    dns = client.get("/v1/modules/net/dns/aws/2.0.0").json()
    assert dns["signer"] == f"Bob <bob@example.com> (OpenPGP key {served.bob_fingerprint})"
    page = client.get("/modules/net/dns/aws/2.0.0").text
    assert 'id="signer"' in page and "Bob &lt;bob@example.com&gt; (OpenPGP key" in page


def test_mcp_module_details_name_the_signer(served: Served) -> None:
    async def run() -> tuple[str, dict[str, object]]:
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            Client(streamable_http_client(f"{served.server.url}/mcp", http_client=http)) as mcp,
        ):
            return await ok(mcp, "get_module_details", module_id="infra/vpc/aws/1.0.0")

    said, data = asyncio.run(run())
    assert "Tag v1.0.0 signed by alice@example.com (ED25519 key SHA256:" in said
    assert str(data["signer"]).startswith("alice@example.com")


def test_list_and_check_name_the_refused_tags(served: Served) -> None:
    listed = run_gitreg("list", "--config", str(served.config))
    assert listed.returncode == 0, listed.stderr
    assert "  tags must be signed: allowed_signers " in listed.stdout
    assert "signed by alice@example.com (ED25519 key SHA256:" in listed.stdout
    assert (
        "  ignored tag v1.2.0: not published: missing signature (require_signed_tags wants an"
        " SSH signature)"
    ) in listed.stdout
    checked = run_gitreg("check", "--config", str(served.config))
    assert (
        "warning: modules[1]: net/dns/aws: tag v2.2.0: not published: missing signature"
    ) in checked.stdout + checked.stderr


def test_a_changed_signers_file_publishes_what_it_lists_now_and_unpublishes_nothing(
    tmp_path: Path,
) -> None:
    """Read again at a reload: a tag refused before is checked again, and one published stays
    published, with the signer it had, though its key has left the file."""
    alice, mallory = (
        ssh_signer(tmp_path / "ssh", "alice@example.com"),
        ssh_signer(tmp_path / "ssh", "m@x"),
    )
    repo = GitRepo(tmp_path / "vpc")
    for version, signer in (("1.0.0", alice), ("1.1.0", mallory)):
        repo.write(module_files(version)).commit()
        signer.sign(repo, f"v{version}")
    allowed = allowed_signers(tmp_path / "allowed_signers", alice)
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nmodules:\n"
        f"  - {{namespace: infra, name: vpc, system: aws, repo: {repo.path},\n"
        "     require_signed_tags: {allowed_signers: allowed_signers}}\n"
    )
    with (
        RegistryServer(load_catalog(tmp_path / "registry.yaml")) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        assert _versions(client, "infra/vpc/aws") == ["1.0.0"]
        allowed_signers(allowed, mallory)
        assert server.reload()
        wait_until(lambda: _versions(client, "infra/vpc/aws") == ["1.1.0", "1.0.0"])
        signers = [
            client.get(f"/v1/modules/infra/vpc/aws/{v}").json()["signer"]
            for v in ("1.0.0", "1.1.0")
        ]
    assert signers[0].startswith("alice@example.com (ED25519 key SHA256:")
    assert signers[1].startswith("m@x (ED25519 key SHA256:")


def test_a_source_s_requirement_holds_every_module_it_finds(tmp_path: Path) -> None:
    alice = ssh_signer(tmp_path / "ssh", "alice@example.com")
    repo = GitRepo(tmp_path / "repos" / "terraform-aws-vpc")
    repo.write(module_files("1.0.0")).commit()
    alice.sign(repo, "v1.0.0")
    repo.write(module_files("1.1.0")).commit()
    repo.tag("v1.1.0", annotated=True)
    allowed_signers(tmp_path / "allowed_signers", alice)
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nsources:\n  - folder: {path: repos, namespace: local, interval: 1s,\n"
        "      require_signed_tags: {allowed_signers: allowed_signers}}\n"
    )
    with (
        RegistryServer(load_catalog(tmp_path / "registry.yaml"), refresh=True) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        wait_until(lambda: client.get("/v1/modules/local/vpc/aws/1.0.0").status_code == 200)
        assert _versions(client, "local/vpc/aws") == ["1.0.0"]
        vpc = client.get("/v1/modules/local/vpc/aws/1.0.0").json()
    assert vpc["signer"].startswith("alice@example.com (ED25519 key SHA256:")
