"""Dependents over real HTTPS against the real app: a monorepo's modules calling each other by
registry address and by `git::…//folder?ref=`, a module in another namespace calling by
constraint, consumers with a committed modules.json and a file that does not parse; and a
dependent in a namespace the reader cannot read counted, never named, on every route."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.dependents_client import answered, served_until_indexed
from tests.support.dependents_world import OTHER, READER, write_world
from tests.support.private_registry import bearer
from tests.support.servers import RegistryServer

VPC = "/v1/modules/platform/vpc/aws/dependents"


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial
) -> Iterator[tuple[RegistryServer, httpx.Client]]:
    path = write_world(tmp_path_factory.mktemp("dependents"))
    with served_until_indexed(path, tls, VPC, READER, 5) as served:
        yield served


def _calls(body: dict[str, Any]) -> list[tuple[str, str, str, str | None, bool]]:
    return [
        (
            d["caller"]["name"],
            d["caller"]["path"],
            d["constraint"],
            d["resolves_to"],
            d["deprecated"] is not None,
        )
        for d in body["dependents"]
    ]


def test_a_reader_of_every_namespace_sees_every_caller(
    served: tuple[RegistryServer, httpx.Client],
) -> None:
    _, client = served
    body = answered(client, VPC, READER)
    root = Path(served[0].state.current.world.catalog.source).parent
    assert _calls(body) == [
        (str(root / "hush"), "main.tf", "= 1.0.0", "1.0.0", True),
        # The version its committed modules.json recorded, not the newest `~> 1.0` admits.
        (str(root / "live"), "prod/main.tf", "~> 1.0", "1.0.0", True),
        ("platform/app/aws", "", "~> 1.0", "1.1.0", False),
        ("platform/dns/aws", "", "vpc/v1.0.0", "1.0.0", True),
        ("secret/team/aws", "", ">= 1.1.0", "1.1.0", False),
    ]
    assert [d["via"] for d in body["dependents"]] == [
        *("constraint", "modules.json", "constraint", "ref", "constraint")
    ]
    assert body["dependents"][3]["source"].startswith("git::file://")
    assert body["dependents"][3]["deprecated"] == "1.0 leaks routes: take 1.1"
    assert body["hidden"] == {"count": 0, "deprecated": 0}
    assert body["on_deprecated"] == 3


def test_callers_in_namespaces_the_reader_cannot_read_are_counted_never_named(
    served: tuple[RegistryServer, httpx.Client],
) -> None:
    _, client = served
    for token in (None, OTHER):
        answer = client.get(VPC, headers=bearer(token) if token else {})
        assert answer.status_code == 200
        body = answer.json()
        assert [d["caller"]["name"] for d in body["dependents"]][1:] == [
            "platform/app/aws",
            "platform/dns/aws",
        ]
        assert body["dependents"][0]["caller"]["name"].endswith("/live")
        # `hush` and `secret/team/aws`: counted, one of them on a deprecated version.
        assert body["hidden"] == {"count": 2, "deprecated": 1}
        assert body["on_deprecated"] == 3
        for secret in ("secret", "hush", "team", ">= 1.1.0", "= 1.0.0"):
            assert secret not in answer.text, (token, secret)


def test_a_module_the_reader_cannot_read_answers_as_one_that_does_not_exist(
    served: tuple[RegistryServer, httpx.Client],
) -> None:
    _, client = served
    team, absent = "/v1/modules/secret/team/aws", "/v1/modules/secret/absent/aws"
    assert client.get(f"{team}/dependents", headers=bearer(READER)).status_code == 200
    for token in (None, OTHER):
        headers = bearer(token) if token else {}
        there = client.get(f"{team}/dependents", headers=headers)
        missing = client.get(f"{absent}/dependents", headers=headers)
        assert there.status_code == missing.status_code == (401 if token is None else 403)
        assert there.text == missing.text.replace("absent", "team")
    gone = client.get("/v1/modules/platform/absent/aws/dependents")
    assert gone.status_code == 404 and "no module platform/absent/aws" in gone.text


def test_the_module_page_shows_who_uses_it_as_the_reader_may_see_them(
    served: tuple[RegistryServer, httpx.Client],
) -> None:
    _, client = served
    page = client.get("/modules/platform/vpc/aws", headers=bearer(READER))
    assert page.status_code == 200
    assert 'data-tab="used-by">Used by <span class="count">5</span>' in page.text
    assert '<a href="/modules/secret/team/aws">secret/team/aws</a> 2.0.0' in page.text
    assert '<a href="/modules/platform/dns/aws">platform/dns/aws</a> 1.0.0' in page.text
    assert "<code>vpc/v1.0.0</code>" in page.text and "used-by-hidden" not in page.text
    for token in (None, OTHER):
        page = client.get("/modules/platform/vpc/aws", headers=bearer(token) if token else {})
        assert page.status_code == 200
        assert 'data-tab="used-by">Used by <span class="count">5</span>' in page.text
        assert "/live</code>" in page.text
        assert (
            "And 2 callers in namespaces you may not read, 1 of them on a deprecated version."
            in page.text
        )
        for secret in ("secret", "hush", "team", "&gt;= 1.1.0", "= 1.0.0"):
            assert secret not in page.text, (token, secret)
    refused = client.get("/modules/secret/team/aws", headers=bearer(OTHER))
    assert refused.status_code == 403
