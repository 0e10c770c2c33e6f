"""Download counts where people look, over real HTTP against the real app: a module's page shows
its total and each version's count, and who downloaded to an ops token alone; the MCP module
details carry the same counts; a token of another namespace sees none of it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gitreg.catalog.load import load_catalog
from tests.support.counted_registry import (
    OPS,
    OTHER,
    READER,
    TERRAFORM,
    bearer,
    write_counted_registry,
)
from tests.support.mcp_checks import ok, text
from tests.support.servers import RegistryServer

SECRET = "/v1/modules/secret/single/generic"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    path = write_counted_registry(tmp_path_factory.mktemp("shown"))
    path.write_text(path.read_text() + "mcp: {enabled: true}\n")
    with RegistryServer(load_catalog(path)) as running, httpx.Client(base_url=running.url) as http:
        for version in ("1.0.0", "1.0.0", "1.1.0"):
            answer = http.get(f"{SECRET}/{version}/download", headers=bearer(READER))
            assert answer.status_code == 200, answer.text
        running.state.downloads.write()
        yield running


def page(server: RegistryServer, token: str) -> httpx.Response:
    return httpx.get(
        f"{server.url}/modules/secret/single/generic", headers=bearer(token), timeout=20
    )


def test_the_page_shows_the_total_and_each_version_s_count(server: RegistryServer) -> None:
    shown = page(server, READER)
    assert shown.status_code == 200
    assert '<li id="downloads"><strong>3</strong> downloads</li>' in shown.text
    assert '<td class="count">2</td>' in shown.text and '<td class="count">1</td>' in shown.text
    assert "Downloaded by" not in shown.text


def test_the_page_shows_who_downloaded_to_an_ops_token(server: RegistryServer) -> None:
    shown = page(server, OPS)
    assert "Downloaded by" in shown.text
    assert "<td>reader</td><td>1.0.0</td><td>terraform 1.11.4</td>" in shown.text


def test_another_namespace_sees_no_page_and_no_count(server: RegistryServer) -> None:
    refused = page(server, OTHER)
    assert refused.status_code == 403
    assert 'id="downloads"' not in refused.text and "Downloaded by" not in refused.text


def _details(server: RegistryServer, token: str) -> tuple[str, dict[str, Any]]:
    async def run() -> tuple[str, dict[str, Any]]:
        async with (
            httpx2.AsyncClient(headers=bearer(token, TERRAFORM), timeout=30) as http,
            Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client,
        ):
            return await ok(client, "get_module_details", module_id="secret/single/generic/1.0.0")

    return asyncio.run(run())


def test_mcp_module_details_carry_the_counts(server: RegistryServer) -> None:
    said, data = _details(server, READER)
    assert "Downloads: 3 in all, 2 of 1.0.0." in said
    assert data["downloads"] == 3
    assert data["version_downloads"] == {"1.1.0": 1, "1.0.0": 2}
    assert "downloaded_by" not in data
    _, shown = _details(server, OPS)
    assert [p["principal"] for p in shown["downloaded_by"]] == ["reader", "reader"]


def test_mcp_tells_another_namespace_nothing(server: RegistryServer) -> None:
    async def run() -> str:
        async with (
            httpx2.AsyncClient(headers=bearer(OTHER), timeout=30) as http,
            Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client,
        ):
            result = await client.call_tool(
                "get_module_details", {"module_id": "secret/single/generic/1.0.0"}
            )
            assert result.is_error
            return text(result)

    said = asyncio.run(run())
    assert "Downloads" not in said and "reader" not in said
