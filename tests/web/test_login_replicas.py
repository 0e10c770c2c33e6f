"""auth.login on two replicas sharing PostgreSQL (state.postgres) and one signing key: the code
one replica gives is exchanged on the other, once across both; the token opens both, and
`gitreg token revoke` with either's catalog ends it on both at once."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.login_registry import SECRET_ENV
from tests.support.oidc_provider import oidc_provider, sign_in_as
from tests.support.servers import RegistryServer, free_port, run_gitreg
from tests.web.test_login import CATALOG, exchange, pkce
from tests.web.test_login import Served as One


@dataclass
class Replicas:
    one: One
    two: One


@pytest.fixture
def replicas(tmp_path: Path, tls: TlsMaterial, database_url: str) -> Iterator[Replicas]:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "url.key").write_text("the-signing-key-both-replicas-share\n")
    with pytest.MonkeyPatch.context() as env, oidc_provider(tls) as provider:
        env.setenv(SECRET_ENV, "replicas-client-secret")
        env.setenv("GITREG_TEST_LOGIN_DSN", database_url)
        provider.person(
            "alice", email="alice@acme.example", email_verified=True, groups=["platform"]
        )
        served = []
        for name in ("one", "two"):
            root = tmp_path / name
            root.mkdir()
            port = free_port()
            path = CATALOG.write(root, provider.url, port, tls.ca_cert, repo.path)
            path.write_text(
                path.read_text()
                + f"  signing_key_file: {tmp_path / 'url.key'}\n"
                + "state:\n  postgres: {dsn_env: GITREG_TEST_LOGIN_DSN}\n"
            )
            served.append((load_catalog(path), port, root))
        (c1, p1, r1), (c2, p2, r2) = served
        files = TlsFiles(tls.certfile, tls.keyfile)
        with (
            RegistryServer(c1, files, port=p1) as one,
            RegistryServer(c2, files, port=p2) as two,
        ):
            yield Replicas(
                One(one.url, provider, provider.verify, r1),
                One(two.url, provider, provider.verify, r2),
            )


def status(served: One, token: str) -> int:
    return httpx.get(
        f"{served.url}/v1/modules/platform/net/aws/versions",
        headers={"Authorization": f"Bearer {token}"},
        verify=served.verify,
        timeout=15,
    ).status_code


def test_a_token_issued_on_one_replica_is_revoked_on_both(replicas: Replicas) -> None:
    one, two = replicas.one, replicas.two
    verifier, challenge = pkce()
    url = (
        f"{one.url}/oauth/authorize?client_id=terraform-cli&response_type=code"
        f"&code_challenge={challenge}&code_challenge_method=S256&state=s"
        "&redirect_uri=http%3A%2F%2F127.0.0.1%3A10000%2Flogin"
    )
    with one.browser() as browser:
        journey = sign_in_as(browser, url, "alice")
    assert journey.leads_to is not None, journey.last.text
    code = journey.leads_to.split("code=", 1)[1].split("&", 1)[0]
    redirect = {"redirect_uri": "http://127.0.0.1:10000/login"}
    answer = exchange(two, code, verifier, **redirect)  # the code, given by one, spent on two
    assert answer.status_code == 200, answer.text
    assert exchange(one, code, verifier, **redirect).json()["error"] == "invalid_grant"
    token = answer.json()["access_token"]
    assert status(one, token) == 200 and status(two, token) == 200
    token_id = hashlib.sha256(token.encode()).hexdigest()[:16]
    revoked = run_gitreg("token", "revoke", token_id, "--config", str(two.root / "registry.yaml"))
    assert revoked.returncode == 0, revoked.stderr
    assert status(one, token) == 401 and status(two, token) == 401
