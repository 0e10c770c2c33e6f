"""The registry API with auth: lists show what the sender may read (never a 401 for sending
no token, always one for a bad token), a module's own routes go through the gate, and with
auth.git a list shows the repositories whose Git server accepts the token, and no others."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.private_registry import OTHER, READER, bearer, write_private_registry
from tests.support.servers import RegistryServer, bare_clone, git_http_server


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    path = write_private_registry(tmp_path_factory.mktemp("api-private"), "")
    with (
        RegistryServer(load_catalog(path)) as server,
        httpx.Client(base_url=server.url, timeout=20) as http,
    ):
        yield http


def ids(client: httpx.Client, path: str, token: str | None = None, **params: str) -> list[str]:
    headers = bearer(token) if token else {}
    response = client.get(path, params=params, headers=headers)
    assert response.status_code == 200, response.text
    return [m["id"] for m in response.json()["modules"]]


def test_without_a_token_a_list_shows_the_public_namespaces(client: httpx.Client) -> None:
    assert ids(client, "/v1/modules") == ["open/single/generic/1.0.0"]
    assert ids(client, "/v1/modules/search", q="single") == ["open/single/generic/1.0.0"]
    assert ids(client, "/v1/modules/secret") == []
    assert ids(client, "/v1/modules/secret/single") == []


def test_a_token_adds_its_namespaces(client: httpx.Client) -> None:
    assert ids(client, "/v1/modules", READER) == [
        "open/single/generic/1.0.0",
        "secret/single/generic/1.0.0",
        "secret/vpc/generic/1.0.0",
        "secret/vpcgit/generic/1.0.0",
    ]
    assert ids(client, "/v1/modules/search", READER, q="single") == [
        "open/single/generic/1.0.0",
        "secret/single/generic/1.0.0",
    ]
    assert ids(client, "/v1/modules", OTHER) == ["open/single/generic/1.0.0"]


def test_a_bad_token_is_refused_not_read_as_none(client: httpx.Client) -> None:
    for path in ("/v1/modules", "/v1/modules/search?q=x", "/v1/modules/open"):
        response = client.get(path, headers=bearer("not-a-token-of-ours"))
        assert response.status_code == 401, path
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert "not-a-token-of-ours" not in response.text


def test_a_modules_own_routes_go_through_the_gate(client: httpx.Client) -> None:
    secret = "/v1/modules/secret/single/generic"
    assert client.get(secret).status_code == 401
    assert client.get(f"{secret}/1.0.0").status_code == 401
    assert client.get(f"{secret}/1.0.0", headers=bearer(OTHER)).status_code == 403
    # Outside the token's namespaces, a module that does not exist is the same 403.
    for path in (
        secret,
        "/v1/modules/secret/absent/generic",
        "/v1/modules/secret/absent/generic/9.9.9",
    ):
        refused = client.get(path, headers=bearer(OTHER))
        assert refused.status_code == 403, path
        assert "may not read module" in refused.json()["errors"][0]
    assert client.get(f"{secret}/download", headers=bearer(OTHER)).status_code == 403
    allowed = client.get(f"{secret}/1.0.0", headers=bearer(READER))
    assert allowed.status_code == 200 and allowed.json()["providers"] == ["generic"]
    assert client.get("/v1/modules/open/single/generic").status_code == 200


def test_auth_git_lists_what_each_git_server_accepts(
    tls: TlsMaterial, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token, stranger = "glpat-team-token-0123456789", "glpat-someone-else-0123456789a"
    for name in ("net", "dns"):
        work = GitRepo(tmp_path / name)
        work.release("v1.0.0", module_files(name))
        bare_clone(work.path, tmp_path / name / "server" / "team" / f"{name}.git")
    monkeypatch.setenv("GITREG_TEST_NET_TOKEN", token)
    monkeypatch.setenv("GITREG_TEST_DNS_TOKEN", "glpat-dns-only-0123456789abcdef")
    public = GitRepo(tmp_path / "public")
    public.release("v1.0.0", module_files("public"))
    with contextlib.ExitStack() as git_servers, contextlib.ExitStack() as stack:
        net = git_servers.enter_context(
            git_http_server(tmp_path / "net" / "server", token=token, tls=tls, username="oauth2")
        )
        dns = git_servers.enter_context(
            git_http_server(
                tmp_path / "dns" / "server",
                token="glpat-dns-only-0123456789abcdef",
                tls=tls,
                username="oauth2",
            )
        )
        (tmp_path / "registry.yaml").write_text(f"""
cache_dir: cache
mirror: {{read_through: false}}
credentials:
  - {{url: "{net}/", token_env: GITREG_TEST_NET_TOKEN, ca_file: {tls.ca_cert}}}
  - {{url: "{dns}/", token_env: GITREG_TEST_DNS_TOKEN, ca_file: {tls.ca_cert}}}
modules:
  - {{namespace: team, name: net, system: aws, repo: "{net}/team/net.git"}}
  - {{namespace: team, name: dns, system: aws, repo: "{dns}/team/dns.git"}}
  - {{namespace: docs, name: public, system: generic, repo: {public.path}}}
auth:
  public: [docs]
  git: {{cache: 5m}}
""")
        server = stack.enter_context(RegistryServer(load_catalog(tmp_path / "registry.yaml")))
        client = stack.enter_context(httpx.Client(base_url=server.url, timeout=20))
        assert ids(client, "/v1/modules") == ["docs/public/generic/1.0.0"]
        assert ids(client, "/v1/modules", token) == [
            "docs/public/generic/1.0.0",
            "team/net/aws/1.0.0",
        ]
        assert ids(client, "/v1/modules/search", token, q="aws") == ["team/net/aws/1.0.0"]
        assert ids(client, "/v1/modules", stranger) == ["docs/public/generic/1.0.0"]
        net_details = client.get("/v1/modules/team/net/aws", headers=bearer(token))
        # Let in by its repository, not the namespace: the module's other systems are not shown.
        assert net_details.status_code == 200 and net_details.json()["providers"] == ["aws"]
        assert client.get("/v1/modules/team/dns/aws", headers=bearer(token)).status_code == 403

        git_servers.close()  # the Git servers go away
        # Answers already known still count; a token never asked about sees the public
        # namespaces, and its list is no error (a module page would be a 503).
        assert ids(client, "/v1/modules", token) == [
            "docs/public/generic/1.0.0",
            "team/net/aws/1.0.0",
        ]
        assert ids(client, "/v1/modules", "glpat-new-token-0123456789abcd") == [
            "docs/public/generic/1.0.0"
        ]
