"""No request a client can make gets a 5xx or a non-JSON error: property-based, on the real app."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from urllib.parse import quote, urlencode

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitreg.catalog.load import load_catalog
from tests.support.asgi import in_process, without_wrong_token_delays
from tests.support.gitrepo import GitRepo, module_files
from tests.support.provider_releases import new_key, provider_zip, write_key, write_release
from tests.support.state import serving_state

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
            "acme",
            "widget",
            "linux",
            "amd64",
            "registry.example.test",
            "example.com",
            "index.json",
            "1.0.0.json",
            "terraform-provider-widget_1.0.0_linux_amd64.zip",
            "terraform-provider-widget_1.0.0_SHA256SUMS",
            "terraform-provider-widget_1.0.0_SHA256SUMS.sig",
        ]
    ),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=80).map(
        lambda s: quote(s, safe="")
    ),
)


TOKEN = "fuzz-token-0123456789"
_AUTH = f"""auth:
  tokens: [{{name: fuzz, token_sha256: "{hashlib.sha256(TOKEN.encode()).hexdigest()}",
             read: [infra, acme], mirror: true, ops: true}}]
"""


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> httpx.AsyncClient:
    return _app(tmp_path_factory, "")


@pytest.fixture(scope="module")
def private_client(tmp_path_factory: pytest.TempPathFactory) -> httpx.AsyncClient:
    return _app(tmp_path_factory, _AUTH)


def _app(tmp_path_factory: pytest.TempPathFactory, auth: str) -> httpx.AsyncClient:
    root = tmp_path_factory.mktemp("fuzz")
    repo = GitRepo(root / "repo")
    repo.release("v1.0.0", module_files("1.0.0", "modules/vpc"))
    write_key(key := new_key("fuzz"), root / "key.asc")
    write_release(root / "releases" / "1.0.0", "widget", "1.0.0", ("linux_amd64",), signer=key)
    folder = root / "mirror" / "example.com" / "acme" / "widget"
    folder.mkdir(parents=True)
    (folder / "terraform-provider-widget_1.0.0_linux_amd64.zip").write_bytes(
        provider_zip("widget", "1.0.0")
    )
    # Read-through stays off: a fuzzed hostname must never become a request to the outside.
    (root / "registry.yaml").write_text(
        f"hostname: registry.example.test\ncache_dir: cache\nmodules:\n  - {{namespace: infra, name: vpc, system: aws, repo: {repo.path}, path: modules/vpc}}\n"
        "signing: {keys: [key.asc]}\nproviders:\n  - {namespace: acme, type: widget, artifacts: releases}\n"
        "mirror: {folders: [mirror], read_through: false}\noci: {enabled: true}\n" + auth
    )
    catalog = load_catalog(root / "registry.yaml")
    app = in_process(without_wrong_token_delays(serving_state(catalog)))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gitreg.test")


@settings(
    max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    prefix=st.sampled_from(
        [
            "/v1/modules",
            "/v1/archives",
            "/v1/providers",
            "/v1/provider-files",
            "/v1/mirror",
            "/.well-known",
            "",
            "/v1",
            "/v2",
            "/v2/infra/vpc/aws",
            "/v2/providers/acme/widget",
            "/v2/mirror/example.com/acme/widget",
        ]
    ),
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


_printable = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60)
_b64 = st.binary(max_size=60).map(lambda b: base64.urlsafe_b64encode(b).decode().rstrip("="))
_authorization = st.one_of(
    st.none(),
    st.just(f"Bearer {TOKEN}"),
    _printable,
    _printable.map(lambda t: f"Bearer {t}"),
    _printable.map(lambda t: f"bearer  {t}"),
    st.tuples(_b64, _b64, _b64).map(lambda p: "Bearer " + ".".join(p)),  # JWT-shaped
    st.binary(max_size=60).map(lambda b: "Basic " + base64.b64encode(b).decode()),
    _printable.map(lambda t: "Basic " + base64.b64encode(f"u:{t}".encode()).decode()),
    st.just("Bearer " + "x" * 20_000),
)
_signature_query = st.one_of(
    st.just(""),
    st.fixed_dictionaries(
        {"expires": _printable, "by": _printable, "signature": _printable | _b64}
    ).map(lambda q: "?" + urlencode(q)),
    _printable.map(lambda t: "?" + quote(t, safe="=&")),
)


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    path=st.sampled_from(
        [
            "/v1/modules/infra/vpc/aws/versions",
            "/v1/modules/infra/vpc/aws/1.0.0/download",
            "/v1/modules/other/vpc/aws/versions",
            "/v1/archives/infra/vpc/aws/" + "0" * 40 + ".tar.gz",
            "/v1/providers/acme/widget/versions",
            "/v1/providers/acme/widget/1.0.0/download/linux/amd64",
            "/v1/provider-files/acme/widget/1.0.0/terraform-provider-widget_1.0.0_SHA256SUMS",
            "/v1/mirror/example.com/acme/widget/index.json",
            "/v1/mirror/example.com/acme/widget/1.0.0.json",
            "/v1/mirror/example.com/acme/widget/terraform-provider-widget_1.0.0_linux_amd64.zip",
            "/v1/status",
            "/metrics",
            "/v2/",
            "/v2/token",
            "/v2/infra/vpc/aws/tags/list",
            "/v2/infra/vpc/aws/manifests/1.0.0",
            "/v2/other/vpc/aws/manifests/1.0.0",
            "/v2/providers/acme/widget/manifests/1.0.0",
            "/v2/mirror/example.com/acme/widget/tags/list",
        ]
    ),
    authorization=_authorization,
    query=_signature_query,
    method=st.sampled_from(["GET", "HEAD"]),
)
def test_no_credentials_of_any_shape_get_a_server_error(
    private_client: httpx.AsyncClient,
    path: str,
    authorization: str | None,
    query: str,
    method: str,
) -> None:
    headers = {"Authorization": authorization} if authorization is not None else {}
    response = asyncio.run(private_client.request(method, path + query, headers=headers))
    assert response.status_code < 500, (path, authorization, query, response.text)
    if response.status_code in (401, 403) and method != "HEAD":
        assert response.headers["content-type"] == "application/json"
        assert response.json()["errors"]
    if response.status_code == 401:
        # The Bearer realm asks for what it trades: Basic, a gitreg token as the password.
        scheme = "Basic" if path == "/v2/token" else "Bearer"
        assert response.headers["www-authenticate"].startswith(scheme)
    if path != "/v2/token":  # the realm hands a client back the token it sent, and only there
        assert TOKEN not in response.text


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


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/v1/providers/acme/widget/versions", 200),
        ("/v1/providers/acme/widget/1.0.0/download/linux/amd64", 200),
        ("/v1/providers/acme/widget/%2e%2e/download/linux/amd64", 400),
        ("/v1/providers/acme/widget/1.0.0/download/linux/%2e%2e", 400),
        ("/v1/provider-files/acme/widget/1.0.0/terraform-provider-widget_1.0.0_SHA256SUMS", 200),
        ("/v1/provider-files/acme/widget/1.0.0/..%2F..%2F..%2Fregistry.yaml", 404),
        ("/v1/provider-files/acme/widget/1.0.0/%2E%2E", 404),
        ("/v1/mirror/example.com/acme/widget/index.json", 200),
        ("/v1/mirror/example.com/acme/widget/terraform-provider-widget_1.0.0_linux_amd64.zip", 200),
        ("/v1/mirror/example.com/acme/widget/..%2F..%2F..%2F..%2Fregistry.yaml", 404),
        ("/v1/mirror/example.com/acme/widget/..%2F..%2F..%2Fkey.zip", 404),
        ("/v1/mirror/..%2F..%2Fcache/acme/widget/index.json", 404),  # no route once decoded
        ("/v1/mirror/example.com/acme/widget/1.0.0+x.json", 404),
        ("/v1/mirror/example.com/acme/widget/%00.json", 400),
    ],
)
def test_provider_and_mirror_paths_near_the_real_ones(
    client: httpx.AsyncClient, path: str, status: int
) -> None:
    response = asyncio.run(client.get(path))
    assert response.status_code == status, (path, response.text)
