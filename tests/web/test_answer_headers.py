"""What every answer of a real `gitreg serve` over TLS says about itself: nosniff on JSON, static
files, archives, errors and redirects; Strict-Transport-Security as registry.yaml shapes it;
Cache-Control private on what was answered to a token, unless the answer says more; no Server
header naming the software; and redirects whose Location is a path, never the Host a client
sent."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from tests.support.private_registry import READER, bearer, write_private_registry
from tests.support.servers import RegistryServer, answers, free_port, start_serve, wait_until
from tests.support.tls_clients import served_over_tls, trusting

URL_KEYS = "  signing_key_file: new.key\n"
YEAR = "max-age=31536000"
IMMUTABLE = "max-age=31536000, immutable"


@dataclass
class Served:
    client: httpx.Client  # HTTP/2 over TLS, no token unless told
    plain: httpx.Client  # HTTP/1.1 over TLS: it sends the Host header as given
    log: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("answer-headers")
    catalog = write_private_registry(root, URL_KEYS)
    port = free_port()
    log = root / "gitreg.log"
    context = trusting(tls.ca_cert)
    url = f"https://127.0.0.1:{port}"
    with log.open("w") as output:
        process = start_serve(catalog, port, tls, output)
    try:
        wait_until(lambda: answers(f"{url}/readyz", context), 60, "gitreg ready")
        with (
            httpx.Client(base_url=url, verify=context, http2=True, timeout=10) as client,
            httpx.Client(base_url=url, verify=context, timeout=10) as plain,
        ):
            yield Served(client, plain, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def _one(response: httpx.Response, name: str) -> str | None:
    """The header's value, None when absent; sent twice, the test fails."""
    values = response.headers.get_list(name)
    assert len(values) <= 1, f"{name} sent {len(values)} times: {values}"
    return values[0] if values else None


def _archive(served: Served, download: str, headers: dict[str, str] | None = None) -> str:
    answer = served.client.get(download, headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.headers["x-terraform-get"].split("//")[0]  # the //folder is for Terraform


@pytest.mark.parametrize(
    ("what", "path", "status"),
    [
        ("discovery", "/.well-known/terraform.json", 200),
        ("JSON", "/v1/modules/open/single/generic/versions", 200),
        ("a list", "/v1/modules", 200),
        ("a page", "/", 200),
        ("a static file", "/static/gitreg.css", 200),
        ("not found", "/v1/modules/open/nothing/generic/versions", 404),
        ("no route", "/no/such/route", 404),
        ("unauthorized", "/v1/modules/secret/single/generic/versions", 401),
        ("a bad request", "/v1/modules?limit=1000", 400),
        ("health", "/healthz", 200),
        ("a redirect", "/v1/modules/open/single/generic/download", 302),
        ("a slash redirect", "/v1/modules/", 307),
    ],
)
def test_every_answer_says_nosniff_and_hsts(
    served: Served, what: str, path: str, status: int
) -> None:
    response = served.client.get(path)
    assert response.status_code == status, (what, response.text)
    assert _one(response, "x-content-type-options") == "nosniff"
    assert _one(response, "strict-transport-security") == YEAR
    assert "server" not in response.headers  # what serves it is no one's business


def test_archives_say_nosniff_and_hsts_and_keep_their_own_caching(served: Served) -> None:
    public = served.client.get(_archive(served, "/v1/modules/open/single/generic/1.0.0/download"))
    assert public.status_code == 200
    assert _one(public, "cache-control") == f"public, {IMMUTABLE}"
    signed = _archive(served, "/v1/modules/secret/single/generic/1.0.0/download", bearer(READER))
    private = served.client.get(signed)  # no token: the signature opens it
    assert private.status_code == 200
    assert _one(private, "cache-control") == f"private, {IMMUTABLE}"
    for response in (public, private):
        assert _one(response, "x-content-type-options") == "nosniff"
        assert _one(response, "strict-transport-security") == YEAR


@pytest.mark.parametrize(
    ("path", "token", "caching"),
    [
        ("/v1/modules/secret/single/generic/versions", True, "private"),
        ("/v1/modules/secret/single/generic/1.0.0/download", True, "private"),
        ("/v1/modules", True, "private"),  # it lists what the token reads
        ("/v1/modules/secret/single/generic", True, "private"),
        ("/v1/providers/secret/widget/versions", True, "private"),
        ("/v1/modules", False, None),
        ("/v1/modules/open/single/generic/versions", False, None),
        ("/v1/modules/open/single/generic/versions", True, None),  # public: the same for all
        ("/v1/modules/secret/single/generic/versions", False, None),  # a 401
    ],
)
def test_answers_to_a_token_are_private(
    served: Served, path: str, token: bool, caching: str | None
) -> None:
    response = served.client.get(path, headers=bearer(READER) if token else None)
    assert response.status_code in (200, 401)
    assert _one(response, "cache-control") == caching


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/v1/modules/", "/v1/modules"),
        ("/v1/modules/?limit=2&namespace=open", "/v1/modules?limit=2&namespace=open"),
        ("/modules/open/single/generic/", "/modules/open/single/generic"),
        ("/v1/modules/open%2Dx/", "/v1/modules/open%2Dx"),  # as sent, still escaped
        (
            "/v1/modules/open/single/generic/download",
            "/v1/modules/open/single/generic/1.0.0/download",
        ),
    ],
)
def test_redirects_name_a_path_never_the_host_a_client_sent(
    served: Served, path: str, location: str
) -> None:
    response = served.plain.get(path, headers={"Host": "evil.example"})
    assert response.status_code in (302, 307)
    assert response.headers["location"] == location
    assert _one(response, "x-content-type-options") == "nosniff"


@pytest.mark.parametrize("path", ["/nothing/", "//evil.example/", "//evil.example//", "/"])
def test_no_redirect_where_no_route_would_answer(served: Served, path: str) -> None:
    response = served.plain.get(path, headers={"Host": "evil.example"})
    assert "location" not in response.headers
    assert response.status_code in (200, 404)


@pytest.mark.parametrize(
    ("section", "header"),
    [
        ("hsts: {max_age: 2y, include_subdomains: true}\n", "max-age=63072000; includeSubDomains"),
        ("hsts: false\n", None),
    ],
)
def test_hsts_as_registry_yaml_says(
    tmp_path: Path, tls: TlsMaterial, section: str, header: str | None
) -> None:
    path = write_private_registry(tmp_path, URL_KEYS)
    path.write_text(section + path.read_text())
    with served_over_tls(path, tls) as (_, client):
        response = client.get("/healthz")
    assert _one(response, "strict-transport-security") == header
    assert _one(response, "x-content-type-options") == "nosniff"


def test_no_hsts_over_plain_http(tmp_path: Path) -> None:
    """Behind a proxy that terminates TLS, the proxy is the one to send it."""
    catalog = load_catalog(write_private_registry(tmp_path, URL_KEYS))
    with RegistryServer(catalog) as server, httpx.Client(base_url=server.url) as client:
        response = client.get("/healthz")
    assert _one(response, "strict-transport-security") is None
    assert _one(response, "x-content-type-options") == "nosniff"
