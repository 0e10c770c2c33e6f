"""`gitreg mcp` over stdio, started by the SDK's own client as an assistant starts it: every
tool for the token in GITREG_TOKEN, nothing of a namespace another token does not read, bad
arguments as tool errors, and stdout kept to MCP messages (logs go to stderr)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.support.mcp_catalog import OTHER, READER, mcp_catalog
from tests.support.mcp_checks import (
    bad_arguments_are_tool_errors,
    outsider_sees_nothing_of_secret,
    reader_sees_every_tool,
    until_read,
)

TOP = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mcp_catalog(tmp_path_factory.mktemp("mcp-stdio"))


def _over_stdio(
    config: Path, token: str | None, *checks: Callable[[Client], Awaitable[None]]
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "GITREG_TOKEN"}
    env["PYTHONPATH"] = str(TOP)
    if token:
        env["GITREG_TOKEN"] = token
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gitreg", "mcp", "--config", str(config)],
        env=env,
        cwd=str(config.parent),
    )

    async def run() -> None:
        async with Client(parameters) as client:
            await until_read(client, 1)
            for check in checks:
                await check(client)

    asyncio.run(run())


def test_every_tool_for_the_token_given(config: Path) -> None:
    async def both_read(client: Client) -> None:
        await until_read(client, 2)

    _over_stdio(config, READER, both_read, reader_sees_every_tool, bad_arguments_are_tool_errors)


def test_another_namespace_s_token_sees_nothing_of_it(config: Path) -> None:
    _over_stdio(config, OTHER, outsider_sees_nothing_of_secret)
