"""No request a client can make gets a 5xx or a non-JSON error: property-based, on the real app."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitreg.archive_cache import ArchiveCache
from gitreg.catalog_loader import load_catalog
from gitreg.registry import Registry
from gitreg.web.app import create_app
from tests.gitrepo import GitRepo, module_files

_segment = st.one_of(
    st.sampled_from(
        [
            "infra",
            "vpc",
            "aws",
            "1.0.0",
            "v1.0.0",
            "versions",
            "download",
            "..",
            ".",
            "%2e%2e",
            "%00",
            "%2F",
            "+",
            "1.0.0+x",
        ]
    ),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=80).map(
        lambda s: quote(s, safe="")
    ),
)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> httpx.AsyncClient:
    root = tmp_path_factory.mktemp("fuzz")
    repo = GitRepo(root / "repo")
    repo.release("v1.0.0", module_files("1.0.0", "modules/vpc"))
    (root / "registry.yaml").write_text(
        f"cache_dir: cache\nmodules:\n  - {{namespace: infra, name: vpc, system: aws, repo: {repo.path}, path: modules/vpc}}\n"
    )
    registry = Registry(load_catalog(root / "registry.yaml"))
    registry.refresh()
    app = create_app(registry, ArchiveCache(root / "cache"), background=False)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gitreg.test")


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    prefix=st.sampled_from(["/v1/modules", "/v1/archives", "/.well-known", "", "/v1"]),
    segments=st.lists(_segment, min_size=0, max_size=6),
    method=st.sampled_from(["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"]),
)
def test_no_client_request_gets_a_server_error(
    client: httpx.AsyncClient, prefix: str, segments: list[str], method: str
) -> None:
    path = prefix + "/" + "/".join(segments)
    response = asyncio.run(client.request(method, path))
    assert response.status_code < 500, (path, response.text)
    if response.status_code >= 400 and method != "HEAD":
        assert response.headers["content-type"] == "application/json"
        assert response.json()["errors"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    forge=st.sampled_from(["github", "gitlab", "gitea", "bitbucket", "generic", "nope"]),
    payload=st.one_of(
        _json.map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=200),
        st.fixed_dictionaries({"repository": _json, "ref": _json}).map(
            lambda v: json.dumps(v).encode()
        ),
    ),
    headers=st.dictionaries(
        st.sampled_from(
            [
                "X-GitHub-Event",
                "X-Gitlab-Event",
                "X-Gitea-Event",
                "X-Event-Key",
                "X-Hub-Signature-256",
                "X-Gitlab-Token",
                "X-Gitea-Signature",
                "X-Hub-Signature",
                "Authorization",
            ]
        ),
        st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
        max_size=3,
    ),
)
def test_no_webhook_body_gets_a_server_error(
    client: httpx.AsyncClient, forge: str, payload: bytes, headers: dict[str, str]
) -> None:
    response = asyncio.run(client.post(f"/v1/webhooks/{forge}", content=payload, headers=headers))
    assert response.status_code in (400, 401, 404), (payload, response.text)
    assert response.json()["errors"]


def test_deeply_nested_json_is_a_client_error(client: httpx.AsyncClient) -> None:
    response = asyncio.run(
        client.post("/v1/webhooks/generic", content=b"[" * 100_000 + b"]" * 100_000)
    )
    assert response.status_code == 400 and "not JSON" in response.json()["errors"][0]
