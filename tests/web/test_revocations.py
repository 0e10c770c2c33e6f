"""Revoked versions over real HTTP with tokens: left out of `versions` and refused (410, with the
reason) for a token that never installed them, kept for one that did, and for anonymous readers
of a public namespace as `downloads.revoked_for_anonymous` says, through providers.v1 and the
network mirror and OpenTofu's OCI API alike; providers' `warnings`, the pages, the registry API
and MCP say it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.mcp_checks import ok
from tests.support.revoked_registry import (
    EARLY,
    LATE,
    MODULES,
    REASON,
    TERRAFORM,
    WIDGET,
    bearer,
    write_revoked_registry,
)
from tests.support.servers import RegistryServer, run_gitreg

TEAM, OPEN = MODULES
MCP_ON = "mcp: {enabled: true}\noci: {enabled: true}\n"


def versions(answer: httpx.Response) -> list[str]:
    assert answer.status_code == 200, answer.text
    body = answer.json()
    listed = body["modules"][0]["versions"] if "modules" in body else body["versions"]
    return [v["version"] for v in listed]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RegistryServer, Path]]:
    root = tmp_path_factory.mktemp("revoked")
    path = write_revoked_registry(root, revoked=False, extra=MCP_ON)
    with RegistryServer(load_catalog(path)) as server, httpx.Client(base_url=server.url) as http:
        for where in (f"{TEAM}/1.0.0/download", f"{WIDGET}/1.0.0/download/linux/amd64"):
            assert http.get(where, headers=bearer(EARLY)).status_code == 200
        assert http.get(f"{OPEN}/1.0.0/download", headers=TERRAFORM).status_code == 200
        server.state.downloads.write()
        write_revoked_registry(root, revoked=True, extra=MCP_ON)
        assert server.reload()
        yield server, root


@pytest.fixture(scope="module")
def server(served: tuple[RegistryServer, Path]) -> RegistryServer:
    return served[0]


def get(server: RegistryServer, path: str, token: str | None = None) -> httpx.Response:
    headers = bearer(token) if token else TERRAFORM
    return httpx.get(f"{server.url}{path}", headers=headers, timeout=20)


def test_a_token_that_installed_the_version_still_gets_it(server: RegistryServer) -> None:
    for _ in range(2):  # the second from what is kept, if anything is
        assert versions(get(server, f"{TEAM}/versions", EARLY)) == ["2.0.0", "1.1.0", "1.0.0"]
        download = get(server, f"{TEAM}/1.0.0/download", EARLY)
        assert download.status_code == 200 and download.headers["x-terraform-get"]
    assert versions(get(server, f"{WIDGET}/versions", EARLY)) == ["1.1.0", "1.0.0"]
    assert get(server, f"{WIDGET}/1.0.0/download/linux/amd64", EARLY).status_code == 200


def test_a_token_that_never_did_is_refused_it_with_the_reason(server: RegistryServer) -> None:
    for _ in range(2):
        assert versions(get(server, f"{TEAM}/versions", LATE)) == ["2.0.0", "1.1.0"]
        refused = get(server, f"{TEAM}/1.0.0/download", LATE)
        assert refused.status_code == 410
        assert refused.json()["errors"] == [
            f"team/vpc/aws 1.0.0 is revoked: {REASON.rstrip('.')}. It installs only where it"
            " was installed before: choose another version"
        ]
    assert get(server, f"{TEAM}/1.1.0/download", LATE).status_code == 200
    assert versions(get(server, f"{WIDGET}/versions", LATE)) == ["1.1.0"]
    assert get(server, f"{WIDGET}/1.0.0/download/linux/amd64", LATE).status_code == 410
    # Kept answers are made for each reader from what they installed.
    assert versions(get(server, f"{TEAM}/versions", EARLY)) == ["2.0.0", "1.1.0", "1.0.0"]
    assert versions(get(server, f"{TEAM}/versions", LATE)) == ["2.0.0", "1.1.0"]
    for path in (f"{TEAM}/versions", f"{WIDGET}/versions"):
        kept = server.state.kept.get(server.state.current.world, path)
        assert kept is not None and kept.by_installs is not None
        made = set(kept.by_installs.made)
        assert made and made <= {frozenset(), frozenset({"1.0.0"})}  # each made once


def test_provider_warnings_say_revoked_not_deprecated(server: RegistryServer) -> None:
    for token in (EARLY, LATE):
        body = get(server, f"{WIDGET}/versions", token).json()
        assert body["warnings"] == [
            "Version 1.1.0 is deprecated: Use 2.x.",
            f"Version 1.0.0 is revoked: {REASON}",
        ]


def test_anonymous_readers_of_a_public_namespace_get_what_the_setting_says(
    served: tuple[RegistryServer, Path],
) -> None:
    server, root = served
    # Hidden by default, although an anonymous reader installed it before.
    assert versions(get(server, f"{OPEN}/versions")) == ["2.0.0", "1.1.0"]
    assert get(server, f"{OPEN}/1.0.0/download").status_code == 410
    kept = "  revoked_for_anonymous: kept\n"
    write_revoked_registry(root, revoked=True, downloads=kept, extra=MCP_ON)
    assert server.reload()
    try:
        assert versions(get(server, f"{OPEN}/versions")) == ["2.0.0", "1.1.0", "1.0.0"]
        assert get(server, f"{OPEN}/1.0.0/download").status_code == 200
        assert versions(get(server, f"{TEAM}/versions", LATE)) == ["2.0.0", "1.1.0"]
    finally:
        write_revoked_registry(root, revoked=True, extra=MCP_ON)
        assert server.reload()


def test_without_auth_every_reader_is_anonymous(tmp_path: Path) -> None:
    path = write_revoked_registry(tmp_path, revoked=True)
    text = path.read_text()
    path.write_text(text[: text.index("auth:")])
    with RegistryServer(load_catalog(path)) as server:
        for _ in range(2):  # kept: the same answer for everyone
            assert versions(get(server, f"{TEAM}/versions")) == ["2.0.0", "1.1.0"]
            assert get(server, f"{TEAM}/1.0.0/download").status_code == 410


def test_pages_say_a_version_is_revoked(server: RegistryServer) -> None:
    page = get(server, "/modules/team/vpc/aws/1.0.0", LATE).text
    assert 'id="banner-version-revoked"' in page and REASON in page
    assert 'id="banner-version-deprecated"' not in page  # revoked, not deprecated
    assert ">1.0.0 (revoked)</option>" in page and ">1.1.0 (deprecated)</option>" in page
    provider = get(server, "/providers/team/widget/1.0.0", LATE).text
    assert 'id="banner-version-revoked"' in provider and REASON in provider


def test_the_registry_api_says_so_and_lists_what_the_reader_may_install(
    server: RegistryServer,
) -> None:
    late = get(server, f"{TEAM}/1.0.0", LATE).json()
    assert late["revoked"] == REASON and "deprecated" not in late
    assert late["versions"] == ["2.0.0", "1.1.0"]
    assert get(server, f"{TEAM}/1.0.0", EARLY).json()["versions"] == ["2.0.0", "1.1.0", "1.0.0"]
    assert "revoked" not in get(server, f"{TEAM}/1.1.0", LATE).json()


def _mcp(server: RegistryServer, token: str, tool: str, **arguments: str) -> tuple[str, Any]:
    async def run() -> tuple[str, dict[str, Any]]:
        async with (
            httpx2.AsyncClient(headers=bearer(token), timeout=30) as http,
            Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client,
        ):
            return await ok(client, tool, **arguments)

    return asyncio.run(run())


def test_mcp_says_so(server: RegistryServer) -> None:
    said, data = _mcp(server, LATE, "get_module_details", module_id="team/vpc/aws/1.0.0")
    assert f"**Revoked**: {REASON}" in said
    assert data["revoked"] == REASON and data["versions"] == ["2.0.0", "1.1.0"]
    said, data = _mcp(server, LATE, "list_module_versions", module_id="team/vpc/aws")
    assert f"- 1.0.0 (revoked: {REASON})" in said
    said, data = _mcp(server, LATE, "get_provider_details", provider_id="team/widget/1.0.0")
    assert data["revoked"] == REASON
    assert f"Version 1.0.0 is revoked: {REASON}" in data["warnings"]


def test_the_network_mirror_revokes_the_hosted_providers_alike(server: RegistryServer) -> None:
    base = "/v1/mirror/registry.example.test/team/widget"
    for _ in range(2):
        early = get(server, f"{base}/index.json", EARLY)
        assert early.status_code == 200 and sorted(early.json()["versions"]) == ["1.0.0", "1.1.0"]
        assert list(get(server, f"{base}/index.json", LATE).json()["versions"]) == ["1.1.0"]
        assert get(server, f"{base}/1.0.0.json", EARLY).status_code == 200
        refused = get(server, f"{base}/1.0.0.json", LATE)
        assert refused.status_code == 410 and REASON.rstrip(".") in refused.text


def test_opentofu_s_oci_api_revokes_alike(server: RegistryServer) -> None:
    for repository in ("/v2/team/vpc/aws", "/v2/providers/team/widget"):
        early = get(server, f"{repository}/tags/list", EARLY).json()["tags"]
        late = get(server, f"{repository}/tags/list", LATE).json()["tags"]
        assert "1.0.0" in early and "1.0.0" not in late and "1.1.0" in late
        assert get(server, f"{repository}/manifests/1.0.0", EARLY).status_code == 200
        refused = get(server, f"{repository}/manifests/1.0.0", LATE)
        assert refused.status_code == 404 and REASON.rstrip(".") in refused.text
        assert refused.json()["errors"][0]["code"] == "MANIFEST_UNKNOWN"


def test_lists_and_gitreg_docs_say_a_revoked_newest_version(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "bad")
    repo.release("v1.0.0", module_files("1.0.0"))
    path = tmp_path / "registry.yaml"
    path.write_text(
        "cache_dir: cache\nmodules:\n"
        f"  - {{namespace: infra, name: bad, system: aws, repo: {repo.path},\n"
        "      revoked: [{versions: '1.0.0', reason: 'Deletes the VPC.'}]}\n"
        "downloads: {revoked_for_anonymous: kept}\n"
    )
    with RegistryServer(load_catalog(path)) as server:
        for listing in ("/?namespace=infra", "/?q=bad"):
            page = get(server, listing).text
            assert '<span class="badge warn" title="Deletes the VPC.">revoked</span>' in page
    done = run_gitreg("docs", "infra/bad/aws", "1.0.0", "--config", str(path))
    revoked = "Revoked: Deletes the VPC. (it installs only where it was installed before)"
    assert done.stdout.splitlines()[1] == revoked
