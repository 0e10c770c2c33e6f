"""The MCP tool get_module_dependents, with the SDK's own client against the real app: a reader
of every namespace sees every caller; another token or none sees the others counted, and a
module of a namespace it cannot read refused as one that does not exist."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp import Client

from gitreg.catalog.load import load_catalog
from tests.support.dependents_world import OTHER, READER, write_world
from tests.support.mcp_checks import call, ok, over_http, text
from tests.support.servers import RegistryServer, wait_until


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    catalog = load_catalog(write_world(tmp_path_factory.mktemp("mcp"), mcp=True))
    with RegistryServer(catalog) as served:
        index = served.state.dependents
        wait_until(lambda: index.current.pending == 0 and len(index.current) == 5, 60)
        yield served


def test_a_reader_of_every_namespace_sees_every_caller(server: RegistryServer) -> None:
    async def check(client: Client) -> None:
        said, data = await ok(client, "get_module_dependents", module_id="platform/vpc/aws/1.1.0")
        names = [d["caller"]["name"] for d in data["dependents"]]
        assert names[2:] == ["platform/app/aws", "platform/dns/aws", "secret/team/aws"]
        assert data["hidden"] == {"count": 0, "deprecated": 0} and data["on_deprecated"] == 3
        assert "secret/team/aws 2.0.0: module 'vpc' by constraint >= 1.1.0 -> 1.1.0" in said

    over_http(server.url, READER, check)


@pytest.mark.parametrize("token", [OTHER, None], ids=["another-namespace", "no-token"])
def test_others_see_callers_they_cannot_read_counted(
    server: RegistryServer, token: str | None
) -> None:
    async def check(client: Client) -> None:
        said, data = await ok(client, "get_module_dependents", module_id="platform/vpc/aws")
        assert len(data["dependents"]) == 3
        assert data["hidden"] == {"count": 2, "deprecated": 1}
        assert "2 more in namespaces you may not read, 1 of them" in said
        for secret in ("secret", "hush", "team"):
            assert secret not in said and secret not in str(data)
        refused = []
        for module_id in ("secret/team/aws", "secret/absent/aws"):
            result = await call(client, "get_module_dependents", module_id=module_id)
            assert result.is_error
            refused.append(text(result).replace("absent", "team"))
        assert refused[0] == refused[1]

    over_http(server.url, token, check)
