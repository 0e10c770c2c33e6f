"""No query a client can send to the registry API gets a 5xx: property-based, on the real app,
with and without auth. What is malformed is a 400 with a message; what is fine is a page whose
`meta` agrees with what was asked."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from urllib.parse import quote, urlencode

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitreg.catalog.load import load_catalog
from tests.support.asgi import in_process, without_wrong_token_delays
from tests.support.gitrepo import GitRepo, module_files
from tests.support.state import serving_state

TOKEN = "fuzz-api-token-0123456789"
_AUTH = f"""auth:
  public: [open]
  tokens: [{{name: fuzz, token_sha256: "{hashlib.sha256(TOKEN.encode()).hexdigest()}", read: [infra]}}]
"""


def _app(root: Path, auth: str) -> httpx.AsyncClient:
    repo = GitRepo(root / "repo")
    repo.release("v1.0.0", module_files("1.0.0", "modules/vpc"))
    modules = "".join(
        f"  - {{namespace: {ns}, name: {name}, system: aws, repo: {repo.path}, path: modules/vpc}}\n"
        for ns in ("infra", "open", "search")
        for name in ("vpc", "dns", "naming")
    )
    (root / "registry.yaml").write_text(
        f"hostname: registry.example.test\ncache_dir: cache\nmirror: {{read_through: false}}\n"
        f"modules:\n{modules}{auth}"
    )
    catalog = load_catalog(root / "registry.yaml")
    state = serving_state(catalog)
    transport = httpx.ASGITransport(app=in_process(without_wrong_token_delays(state)))
    return httpx.AsyncClient(transport=transport, base_url="http://gitreg.test")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> httpx.AsyncClient:
    return _app(tmp_path_factory.mktemp("fuzz-api"), "")


@pytest.fixture(scope="module")
def private_client(tmp_path_factory: pytest.TempPathFactory) -> httpx.AsyncClient:
    return _app(tmp_path_factory.mktemp("fuzz-api-private"), _AUTH)


_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)
_value = st.one_of(
    st.sampled_from(["0", "1", "15", "100", "101", "-1", "+3", "1_0", "0x10", " 5", "1e2", ""]),
    st.sampled_from(["vpc", "infra", "aws", "AWS", "true", "false", "infra/vpc", "*", "%"]),
    st.integers(min_value=-(10**12), max_value=10**12).map(str),
    _text,
    st.just("x" * 5000),
)
_params = st.lists(
    st.tuples(
        st.sampled_from(["q", "offset", "limit", "namespace", "provider", "verified"]) | _text,
        _value,
    ),
    max_size=6,
)
_path = st.sampled_from(
    [
        "/v1/modules",
        "/v1/modules/search",
        "/v1/modules/infra",
        "/v1/modules/search/vpc",
        "/v1/modules/infra/vpc",
        "/v1/modules/infra/vpc/aws",
        "/v1/modules/infra/vpc/aws/1.0.0",
        "/v1/modules/infra/vpc/aws/download",
        "/v1/modules/open/vpc/aws",
    ]
) | st.lists(_text.filter(bool).map(lambda s: quote(s, safe="")), min_size=1, max_size=5).map(
    lambda parts: "/v1/modules/" + "/".join(parts)
)


def _check(response: httpx.Response, params: list[tuple[str, str]]) -> None:
    assert response.status_code < 500, (response.request.url, response.text)
    if response.status_code in (301, 302, 307, 308):
        return
    assert response.headers["content-type"] == "application/json", response.request.url
    body = response.json()
    if response.status_code >= 400:
        assert body["errors"] and body["errors"][0]
        return
    if "meta" in body:
        asked = dict(params)
        meta = body["meta"]
        assert 1 <= meta["limit"] <= 100 and len(body["modules"]) <= meta["limit"]
        assert meta["limit"] == int(asked.get("limit", "15"))
        assert meta["current_offset"] == int(asked.get("offset", "0"))


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(path=_path, params=_params)
def test_no_query_gets_a_server_error(
    client: httpx.AsyncClient, path: str, params: list[tuple[str, str]]
) -> None:
    response = asyncio.run(client.get(f"{path}?{urlencode(params)}"))
    _check(response, params)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    path=_path,
    params=_params,
    authorization=st.one_of(
        st.none(),
        st.just(f"Bearer {TOKEN}"),
        _text.map(lambda t: f"Bearer {t}"),
        st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
    ),
)
def test_no_query_nor_credential_gets_a_server_error_or_a_hidden_module(
    private_client: httpx.AsyncClient,
    path: str,
    params: list[tuple[str, str]],
    authorization: str | None,
) -> None:
    # As bytes: a client may send any of them; the server must cope.
    headers: dict[bytes, bytes] = {}
    if authorization is not None:
        headers[b"Authorization"] = authorization.encode()
    try:
        response = asyncio.run(private_client.get(f"{path}?{urlencode(params)}", headers=headers))
    except httpx.LocalProtocolError:
        return  # a header value httpx itself will not send
    _check(response, params)
    if response.status_code == 200 and "modules" in response.json():
        namespaces = {m["namespace"] for m in response.json()["modules"]}
        allowed = {"open", "infra"} if authorization == f"Bearer {TOKEN}" else {"open"}
        assert namespaces <= allowed
    assert TOKEN not in response.text
