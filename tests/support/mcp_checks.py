"""What the MCP tests ask gitreg's tools, through the SDK's own client, whatever carries it
(streamable HTTP or stdio): every tool as a reader of `secret` sees it, what a token of another
namespace and no token see, and bad arguments. The registry is `tests/support/mcp_catalog.py`'s."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from tests.support.mcp_catalog import MODULE_REASON, PROVIDER_REASON, TAG_REASON

TOOLS = {
    "search_modules",
    "get_module_details",
    "list_module_versions",
    "get_module_usage",
    "get_module_dependents",
    "get_latest_module_version",
    "search_providers",
    "get_provider_details",
}


def over_http(url: str, token: str | None, check: Callable[[Client], Awaitable[None]]) -> None:
    """`check` run with an SDK client of the MCP endpoint of the registry at `url`, sending
    `token` (none: no Authorization header)."""

    async def run() -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
        ):
            await check(client)

    asyncio.run(run())


def text(result: CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


async def call(client: Client, tool: str, **arguments: Any) -> CallToolResult:
    return await client.call_tool(tool, arguments)


async def ok(client: Client, tool: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    result = await call(client, tool, **arguments)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return text(result), result.structured_content


async def until_read(client: Client, least: int, tries: int = 300) -> None:
    """Until a search lists `least` modules: a server reading its clones answers before. A
    bounded number of tries 0.2 s apart, as wait_until does: a deadline, not a measurement."""
    said = ""
    for _ in range(tries):
        result = await call(client, "search_modules", module_query="")
        found = (result.structured_content or {}).get("total", 0)
        if not result.is_error and found >= least:
            return
        said = f"still {found} modules: {text(result)}"
        await asyncio.sleep(0.2)
    raise AssertionError(said)


async def reader_sees_every_tool(client: Client) -> None:
    assert {t.name for t in (await client.list_tools()).tools} == TOOLS
    said, data = await ok(client, "search_modules", module_query="vpc")
    assert [m["module_id"] for m in data["modules"]] == ["secret/vpc/aws/2.0.0"]
    assert "`secret/vpc/aws/2.0.0`" in said  # its description once its docs are read
    said, data = await ok(client, "search_modules", module_query="'naming'")  # HashiCorp's quotes
    assert [m["module_id"] for m in data["modules"]] == ["open/naming/generic/0.1.0"]
    # Deprecated by its tag's own .gitreg.yaml: a search says so, as its details do.
    assert data["modules"][0]["deprecated"] == TAG_REASON, data
    assert f"(deprecated: {TAG_REASON})" in said, said

    said, data = await ok(client, "get_module_details", module_id="secret/vpc/aws/1.0.0")
    assert data["version"] == "1.0.0" and data["deprecated"] == MODULE_REASON
    assert f"**Deprecated**: {MODULE_REASON}" in said
    inputs = {i["name"]: i for i in data["root"]["inputs"]}
    assert inputs["cidr"]["type"] == "string" and inputs["cidr"]["required"]
    assert inputs["azs"]["default"] == '["eu-west-1a"]' and not inputs["azs"]["required"]
    assert inputs["legacy_name"]["deprecated"] == "Use name instead."
    assert "| `cidr` | `string` |  | yes | The VPC's CIDR block. |" in said
    assert "**Deprecated**: Use name instead." in said
    assert [o["name"] for o in data["root"]["outputs"]] == ["id"]
    assert data["root"]["resources"] == [{"name": "this", "type": "aws_vpc"}]
    assert data["root"]["provider_dependencies"][0]["source"] == "hashicorp/aws"
    assert [s["path"] for s in data["submodules"]] == ["modules/flow-logs"]
    assert [e["path"] for e in data["examples"]] == ["examples/basic"]
    assert "A VPC with subnets in every zone." in data["root"]["readme"]
    assert "## Submodules" in said and "### examples/basic" in said
    _, newest = await ok(client, "get_module_details", module_id="secret/vpc/aws")
    assert newest["version"] == "2.0.0" and "deprecated" not in newest

    said, data = await ok(client, "list_module_versions", module_id="secret/vpc/aws")
    assert [(v["version"], v["deprecated"]) for v in data["versions"]] == [
        ("2.0.0", None),
        ("1.0.0", MODULE_REASON),
    ]
    assert "- 2.0.0 (latest)" in said

    said, data = await ok(client, "get_module_usage", module_id="secret/vpc/aws")
    assert data["module_block"] == (
        'module "vpc" {\n  source  = "registry.example.test/secret/vpc/aws"\n'
        '  version = "~> 2.0"\n\n  cidr = "..."\n}'
    )
    assert data["required_inputs"] == ["cidr"] and "```hcl" in said
    _, data = await ok(client, "get_module_usage", module_id="secret/vpc/aws/1.0.0")
    assert 'version = "1.0.0"' in data["module_block"] and data["deprecated"] == MODULE_REASON

    said, data = await ok(
        client,
        "get_latest_module_version",
        module_publisher="secret",
        module_name="vpc",
        module_provider="aws",
    )
    assert data["version"] == "2.0.0" and "2.0.0" in said

    _, data = await ok(client, "search_providers", provider_query="widget")
    assert [p["provider_id"] for p in data["providers"]] == ["secret/widget"]
    said, data = await ok(client, "get_provider_details", provider_id="secret/widget/0.9.0")
    assert data["deprecated"] == PROVIDER_REASON and data["versions"] == ["1.0.0", "0.9.0"]
    assert data["warnings"] == [f"Version 0.9.0 is deprecated: {PROVIDER_REASON}"]
    assert 'source  = "registry.example.test/secret/widget"' in data["required_providers"]
    assert data["platforms"] == ["linux_amd64"] and "**Deprecated**" in said


async def outsider_sees_nothing_of_secret(client: Client) -> None:
    """A token of another namespace, or none: `secret` is not listed, not searched, and asked
    for by name is refused as for one that does not exist."""
    _, data = await ok(client, "search_modules", module_query="")
    assert [m["module_id"] for m in data["modules"]] == ["open/naming/generic/0.1.0"]
    _, data = await ok(client, "search_modules", module_query="vpc")
    assert data["modules"] == [] and data["total"] == 0
    _, data = await ok(client, "search_providers", provider_query="")
    assert data["providers"] == []
    refusals = []
    for tool, arguments in (
        ("get_module_details", {"module_id": "secret/vpc/aws/2.0.0"}),
        ("get_module_details", {"module_id": "secret/nothing/aws"}),
        ("list_module_versions", {"module_id": "secret/vpc/aws"}),
        ("get_module_usage", {"module_id": "secret/vpc/aws"}),
        ("get_module_dependents", {"module_id": "secret/vpc/aws"}),
        ("get_provider_details", {"provider_id": "secret/widget"}),
    ):
        result = await call(client, tool, **arguments)
        assert result.is_error, text(result)
        assert "vpc/aws/2.0.0" not in text(result) and "MODULE" not in text(result)
        refusals.append(text(result).replace("nothing", "vpc"))
    # Whether it exists or not, the same words.
    assert refusals[0].replace("/2.0.0", "") == refusals[1], refusals


async def bad_arguments_are_tool_errors(client: Client) -> None:
    for tool, arguments, said in (
        ("get_module_details", {"module_id": "vpc"}, "module_id must be NAMESPACE/NAME/SYSTEM"),
        (
            "get_module_details",
            {"module_id": "secret/vpc/aws/not-a-version"},
            "is not a Semantic Version",
        ),
        ("get_module_details", {"module_id": "open/naming/generic/9.9.9"}, "has no version 9.9.9"),
        ("get_module_details", {"module_id": "b@d/x/y"}, "namespace"),
        ("search_modules", {"module_query": "x" * 5000}, "characters"),
        ("search_modules", {"module_query": "vpc", "current_offset": -1}, "current_offset"),
        ("get_latest_module_version", {"module_publisher": "open"}, "module_name"),
        ("get_provider_details", {"provider_id": "a"}, "provider_id must be"),
        ("list_module_versions", {"module_id": 7}, "module_id"),
    ):
        result = await call(client, tool, **arguments)
        assert result.is_error, (tool, arguments, text(result))
        assert said in text(result), (tool, text(result))
        assert "Traceback" not in text(result)
