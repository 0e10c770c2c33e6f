"""`gitreg serve` as a real process over HTTPS, with MCP on: the SDK's own client reads every
tool through it, with a reader's token, and the log never shows the token."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gitreg.process.tlscert import TlsMaterial
from tests.support.mcp_catalog import READER, mcp_catalog
from tests.support.mcp_checks import reader_sees_every_tool, until_read
from tests.support.servers import answers, free_port, start_serve, wait_until
from tests.support.tls_clients import trusting


def test_gitreg_serve_answers_mcp_over_https(tmp_path: Path, tls: TlsMaterial) -> None:
    config = mcp_catalog(tmp_path)
    port = free_port()
    log = tmp_path / "gitreg.log"
    context = trusting(tls.ca_cert)
    with log.open("w") as output:
        process = start_serve(config, port, tls, output)
    try:
        base = f"https://127.0.0.1:{port}"
        wait_until(
            lambda: process.poll() is not None or answers(f"{base}/readyz", context),
            60,
            "gitreg to be ready",
        )
        assert process.poll() is None, log.read_text()

        async def run() -> None:
            headers = {"Authorization": f"Bearer {READER}"}
            async with (
                httpx2.AsyncClient(headers=headers, verify=context, timeout=30) as http,
                Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
            ):
                await until_read(client, 2)
                await reader_sees_every_tool(client)

        asyncio.run(run())
    finally:
        process.terminate()
        assert process.wait(timeout=15) == 0, log.read_text()
    assert READER not in log.read_text()
