"""MCP at /mcp over streamable HTTP, with the SDK's own client against the real app on
127.0.0.1: every tool, what a token of another namespace and no token see, bad arguments as tool
errors, a foreign Host refused with 421, and /mcp absent unless `mcp: {enabled: true}`."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gitreg.catalog.load import load_catalog
from gitreg.freshness.catalog_file import read_at_restart
from tests.support.gitrepo import GitRepo, module_files
from tests.support.mcp_catalog import OTHER, READER, mcp_catalog
from tests.support.mcp_checks import (
    bad_arguments_are_tool_errors,
    outsider_sees_nothing_of_secret,
    over_http,
    reader_sees_every_tool,
    text,
)
from tests.support.servers import RegistryServer
from tests.support.site_snippets import claimed

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
_ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    catalog = load_catalog(mcp_catalog(tmp_path_factory.mktemp("mcp")))
    with RegistryServer(catalog) as served:
        yield served


def _with(
    server: RegistryServer, token: str | None, check: Callable[[Client], Awaitable[None]]
) -> None:
    over_http(server.url, token, check)


def test_a_reader_of_the_namespace_sees_every_tool_answer(server: RegistryServer) -> None:
    _with(server, READER, reader_sees_every_tool)


@pytest.mark.parametrize("token", [OTHER, None], ids=["another-namespace", "no-token"])
def test_who_may_not_read_a_namespace_sees_nothing_of_it(
    server: RegistryServer, token: str | None
) -> None:
    _with(server, token, outsider_sees_nothing_of_secret)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_clients_of_either_era_are_answered(server: RegistryServer, mode: str) -> None:
    """A client that initializes a session (2025-11-25 and before) and one that sends none:
    both are answered, statelessly."""

    async def run() -> None:
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            Client(streamable_http_client(f"{server.url}/mcp", http_client=http), mode=mode) as c,
        ):
            result = await c.call_tool("search_modules", {"module_query": "naming"})
            assert (result.structured_content or {})["total"] == 1, text(result)

    asyncio.run(run())


def test_bad_arguments_are_tool_errors(server: RegistryServer) -> None:
    _with(server, READER, bad_arguments_are_tool_errors)


def test_a_wrong_token_is_a_tool_error_not_a_500(server: RegistryServer) -> None:
    async def check(client: Client) -> None:
        result = await client.call_tool("search_modules", {"module_query": ""})
        assert result.is_error and "token" in text(result)
        assert "not-a-token-we-know" not in text(result)  # a secret is never said back

    _with(server, "not-a-token-we-know-0123456789", check)


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("evil.example", 421),
        ("evil.example:443", 421),
        ("registry.example.test", 200),
        ("registry.example.test:8443", 200),
        ("localhost", 200),
    ],
)
def test_only_the_registry_s_own_hosts_are_answered(
    server: RegistryServer, host: str, status: int
) -> None:
    answer = httpx.post(
        f"{server.url}/mcp",
        json=_INITIALIZE,
        headers={"Host": host, "Accept": _ACCEPT},
        timeout=30,
    )
    assert answer.status_code == status, answer.text


def test_a_page_of_another_origin_is_refused(server: RegistryServer) -> None:
    answer = httpx.post(
        f"{server.url}/mcp",
        json=_INITIALIZE,
        headers={"Origin": "https://evil.example", "Accept": _ACCEPT},
        timeout=30,
    )
    assert answer.status_code == 403


@pytest.mark.parametrize("method", ["GET", "HEAD", "DELETE", "PUT"])
def test_only_post_is_answered(server: RegistryServer, method: str) -> None:
    """Stateless: no event stream to GET (it would hold a connection open), no session to
    DELETE."""
    answer = httpx.request(method, f"{server.url}/mcp", headers={"Accept": _ACCEPT}, timeout=30)
    assert answer.status_code == 405


def test_malformed_requests_are_4xx(server: RegistryServer) -> None:
    for body, headers in (
        (b"{", {"Content-Type": "application/json", "Accept": _ACCEPT}),
        (b"{}", {"Content-Type": "text/plain", "Accept": _ACCEPT}),
        (b"[1, 2]", {"Content-Type": "application/json", "Accept": _ACCEPT}),
        (b"x" * (5 * 2**20), {"Content-Type": "application/json", "Accept": _ACCEPT}),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}',
            {"Content-Type": "application/json", "Accept": _ACCEPT},
        ),
    ):
        answer = httpx.post(f"{server.url}/mcp", content=body, headers=headers, timeout=30)
        assert answer.status_code < 500, answer.text


def test_without_mcp_enabled_there_is_no_mcp(tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("no-mcp")
    repo = GitRepo(root / "repo")
    repo.release("v1.0.0", module_files("1.0.0"))
    (root / "registry.yaml").write_text(
        f"cache_dir: cache\nmodules:\n  - {{namespace: a, name: b, system: c, repo: {repo.path}}}\n"
    )
    with RegistryServer(load_catalog(root / "registry.yaml")) as server:
        answer = httpx.post(f"{server.url}/mcp", json=_INITIALIZE, timeout=30)
    assert answer.status_code == 404


def test_the_page_s_catalog_serves_mcp(tmp_path: Path) -> None:
    with claimed("mcp.md", "test_the_page_s_catalog_serves_mcp") as page:
        text = page.take("yaml", "mcp:")
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "registry.yaml").write_text(
        f"cache_dir: cache\n{text}"
        f"modules:\n  - {{namespace: infra, name: vpc, system: aws, repo: {repo.path}}}\n"
    )

    async def check(client: Client) -> None:
        result = await client.call_tool("search_modules", {"module_query": "vpc"})
        assert (result.structured_content or {})["total"] == 1

    with RegistryServer(load_catalog(tmp_path / "registry.yaml")) as server:
        _with(server, None, check)
        foreign = httpx.post(
            f"{server.url}/mcp", json=_INITIALIZE, headers={"Host": "example.org"}, timeout=30
        )
        assert foreign.status_code == 421


def test_mcp_waits_for_a_restart(tmp_path: Path) -> None:
    """/mcp and the hosts it answers are fixed when the app is built: a reload keeps them."""
    path = mcp_catalog(tmp_path)
    catalog = load_catalog(path)
    path.write_text(path.read_text().replace("mcp: {enabled: true}", "mcp: {enabled: false}"))
    assert read_at_restart(catalog).mcp.enabled


def test_the_mcp_package_is_imported_only_for_a_catalog_that_turns_mcp_on() -> None:
    """It takes about a second to import: `serve` without MCP, the default, does not pay it."""
    code = (
        "import sys\n"
        "import gitreg.commands.cli, gitreg.commands.serve, gitreg.web.app\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
