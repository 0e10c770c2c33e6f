"""Pending versions as each reader meets them, over real HTTP: left out of `versions` and
downloads for everyone but a `preview` token, which installs them; named with when they publish
in the registry API, MCP, the module page, `/v1/status` (a warning past `warn_after`) and
`/metrics`."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import httpx

from gitreg.catalog.load import load_catalog
from tests.support import mcp_checks
from tests.support.clock import Clock
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer

TAGGED = 1_700_000_000.0  # the tagger date of the helper's annotated tags
HOUR = 3600.0
CI, READER, OPS = "ci-token-0123456789", "reader-token-0123456789", "ops-token-0123456789"
MODULE = "/v1/modules/infra/vpc/aws"


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _server(tmp_path: Path) -> RegistryServer:
    repo = GitRepo(tmp_path / "vpc")
    repo.release("v1.0.0", module_files("1.0.0"))
    repo.release("v1.1.0", module_files("1.1.0"), annotated=True)  # tagged at TAGGED
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nmcp: {enabled: true}\n"
        "publish_when:\n  - {namespaces: [infra], min_age: 1d, warn_after: 2h}\n"
        "auth:\n  tokens:\n"
        f"    - {{name: ci, token_sha256: '{_sha(CI)}', read: [infra], preview: true}}\n"
        f"    - {{name: reader, token_sha256: '{_sha(READER)}', read: [infra]}}\n"
        f"    - {{name: ops, token_sha256: '{_sha(OPS)}', ops: true}}\n"
        f"modules:\n  - {{namespace: infra, name: vpc, system: aws, repo: {repo.path}}}\n"
    )
    # v1.0.0 (lightweight) was first seen a day before: published; v1.1.0 is 3 h old.
    clock = Clock(TAGGED - 25 * HOUR)
    server = RegistryServer(load_catalog(tmp_path / "registry.yaml"), clock=clock)
    clock.now = TAGGED + 3 * HOUR
    server.sync.refresh()
    return server


def _get(client: httpx.Client, path: str, token: str) -> httpx.Response:
    return client.get(path, headers={"Authorization": f"Bearer {token}"})


def _listed(client: httpx.Client, token: str) -> list[str]:
    answer = _get(client, f"{MODULE}/versions", token)
    assert answer.status_code == 200, answer.text
    return [v["version"] for v in answer.json()["modules"][0]["versions"]]


def test_a_preview_token_sees_and_installs_what_others_do_not(tmp_path: Path) -> None:
    with _server(tmp_path) as server, httpx.Client(base_url=server.url) as client:
        for _ in range(2):  # the second answer of each is a kept one, for the reader
            assert _listed(client, READER) == ["1.0.0"]
            assert _listed(client, CI) == ["1.1.0", "1.0.0"]
        assert _get(client, f"{MODULE}/1.1.0/download", READER).status_code == 404
        download = _get(client, f"{MODULE}/1.1.0/download", CI)
        assert download.status_code == 200, download.text
        archive = client.get(download.headers["x-terraform-get"])
        assert archive.status_code == 200 and archive.content[:2] == b"\x1f\x8b"


def test_pending_is_named_with_when_it_publishes(tmp_path: Path) -> None:
    with _server(tmp_path) as server, httpx.Client(base_url=server.url) as client:
        details = _get(client, f"{MODULE}/1.0.0", READER).json()
        (pending,) = details["pending"]
        assert pending["version"] == "1.1.0" and pending["tag"] == "v1.1.0"
        assert pending["since"] == "2023-11-14T22:13:20Z"  # the tagger date
        assert pending["publishes_at"] == "2023-11-15T22:13:20Z"
        page = _get(client, "/modules/infra/vpc/aws", READER).text
        assert "1.1.0" in page and "pending" in page
        status = _get(client, "/v1/status", OPS).json()
        (held,) = status["pending_versions"]
        assert (held["version"], held["age_seconds"]) == ("1.1.0", 3 * 3600)
        assert held["warning"] and "warn_after" in held["warning"]
        metrics = _get(client, "/metrics", OPS).text
        assert 'gitreg_module_versions_pending{module="infra/vpc/aws"} 1.0' in metrics
        assert 'gitreg_module_pending_age_seconds{module="infra/vpc/aws"} 10800.0' in metrics

        async def mcp(mcp_client: Any) -> None:
            said, data = await mcp_checks.ok(
                mcp_client, "get_module_details", module_id="infra/vpc/aws/1.0.0"
            )
            assert data["pending"][0]["version"] == "1.1.0"
            assert "Version 1.1.0 is pending: it publishes at 2023-11-15T22:13:20Z." in said

        mcp_checks.over_http(server.url, READER, mcp)
