"""`/v1/modules` at hundreds of modules in many namespaces: pages cut across namespaces, at
both ends and past them, with the namespace, name and system filters, and private modules
neither listed nor counted (a page's `next_offset` would count them)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from tests.support.many_modules import BIG, SECRET, TEAMS, TOKEN, big_system, write_many
from tests.support.servers import RegistryServer

PUBLIC = BIG + TEAMS


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    root = tmp_path_factory.mktemp("many-api")
    with RegistryServer(load_catalog(write_many(root))) as server:
        yield server


def _get(server: RegistryServer, path: str, token: str | None = None, **params: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answer = httpx.get(server.url + path, params=params, headers=headers, timeout=60)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _ids(body: Any) -> list[str]:
    return [m["id"].rsplit("/", 1)[0] for m in body["modules"]]


def _every(server: RegistryServer, path: str, token: str | None = None, **params: Any) -> list[str]:
    """Every page's modules, following next_url from the first."""
    found: list[str] = []
    url = path
    while True:
        body = httpx.get(
            server.url + url,
            params=params if url == path else None,
            headers={"Authorization": f"Bearer {token}"} if token else {},
            timeout=60,
        ).json()
        found += _ids(body)
        if "next_url" not in body["meta"]:
            return found
        url = body["meta"]["next_url"]


def _expected_public() -> list[str]:
    big = [f"big/mod{n:04d}/{big_system(n)}" for n in range(BIG)]
    return big + [f"team-{n:03d}/net/aws" for n in range(TEAMS)]


def test_the_first_page_and_the_last(many: RegistryServer) -> None:
    first = _get(many, "/v1/modules", limit=100)
    assert first["meta"] == {
        "limit": 100,
        "current_offset": 0,
        "next_offset": 100,
        "next_url": "/v1/modules?limit=100&offset=100",
    }
    assert _ids(first) == _expected_public()[:100]
    last = _get(many, "/v1/modules", limit=100, offset=300)
    assert _ids(last) == _expected_public()[300:]  # big's last and the teams: across namespaces
    assert last["meta"] == {
        "limit": 100,
        "current_offset": 300,
        "prev_offset": 200,
        "prev_url": "/v1/modules?limit=100&offset=200",
    }
    past = _get(many, "/v1/modules", limit=100, offset=1000)
    assert past["modules"] == [] and "next_offset" not in past["meta"]
    assert past["meta"]["prev_offset"] == PUBLIC - 100


def test_every_page_joined_is_the_whole_sorted_list(many: RegistryServer) -> None:
    assert _every(many, "/v1/modules", limit=37) == _expected_public()


def test_filters_cut_pages_as_well(many: RegistryServer) -> None:
    google = [f"big/mod{n:04d}/google" for n in range(1, BIG, 2)]
    assert _every(many, "/v1/modules/big", provider="google", limit=40) == google
    last = _get(many, "/v1/modules/big", provider="google", limit=100, offset=100)
    assert _ids(last) == google[100:] and "next_offset" not in last["meta"]
    assert _every(many, "/v1/modules", provider="aws", namespace="TEAM-005") == ["team-005/net/aws"]
    assert _ids(_get(many, "/v1/modules/big/mod0042")) == ["big/mod0042/aws"]
    assert _ids(_get(many, "/v1/modules/big/mod0042", provider="google")) == []
    assert _ids(_get(many, "/v1/modules/big/mod004")) == []  # a name, not a prefix


def test_private_modules_are_neither_listed_nor_counted(many: RegistryServer) -> None:
    assert not any(i.startswith("secret/") for i in _every(many, "/v1/modules", limit=100))
    private = _get(many, "/v1/modules/secret", limit=100)
    missing = _get(many, "/v1/modules/nosuch", limit=100)
    assert (
        private
        == missing
        == {
            "meta": {"limit": 100, "current_offset": 0},
            "modules": [],
        }
    )
    with_token = _every(many, "/v1/modules", TOKEN, limit=100)
    assert len(with_token) == PUBLIC + SECRET
    assert with_token[BIG : BIG + SECRET] == [f"secret/db{n:04d}/aws" for n in range(SECRET)]
