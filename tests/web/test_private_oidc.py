"""CI identity tokens over real HTTP: a job's JWT opens its own namespace, an expired one is a
401 saying so, an issuer that cannot be asked is a 503, and no token reaches a log line."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.oidc_issuer import AUDIENCE, Clock, Issuer
from tests.support.origin_server import ScriptedOrigin
from tests.support.servers import RegistryServer


@dataclass
class Served:
    client: httpx.Client
    issuer: Issuer


def registry_yaml(root: Path, repo: GitRepo, issuer: str, ca: Path) -> Path:
    path = root / "registry.yaml"
    path.write_text(
        f"""
cache_dir: cache
hostname: registry.example.test
modules:
  - {{namespace: platform, name: net, system: aws, repo: {repo.path}}}
  - {{namespace: team-a, name: net, system: aws, repo: {repo.path}}}
mirror: {{read_through: false}}
auth:
  oidc:
    - name: gitlab-ci
      issuer: {issuer}
      audience: {AUDIENCE}
      read: ["{{namespace_path}}"]
"""
        + f"      ca_file: {ca}\n"
    )
    return path


@pytest.fixture
def served(tmp_path: Path, tls: TlsMaterial) -> Iterator[Served]:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", module_files("1.0.0"))
    with ScriptedOrigin(tls) as origin:
        issuer = Issuer(origin, Clock())
        catalog = load_catalog(registry_yaml(tmp_path, repo, issuer.url, tls.ca_cert))
        with (
            RegistryServer(catalog) as server,
            httpx.Client(base_url=server.url, timeout=10) as client,
        ):
            yield Served(client, issuer)


def versions(served: Served, namespace: str, token: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"}
    return served.client.get(f"/v1/modules/{namespace}/net/aws/versions", headers=headers)


def test_a_job_reads_its_own_namespace(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    token = served.issuer.token(namespace_path="platform")
    assert versions(served, "platform", token).status_code == 200
    other = versions(served, "team-a", token)
    assert other.status_code == 403 and "gitlab-ci" in other.text
    expired = served.issuer.token(exp=int(served.issuer.clock.now) - 3600)
    refused = versions(served, "platform", expired)
    assert refused.status_code == 401 and "expired" in refused.text
    assert token not in caplog.text and expired not in caplog.text


def test_an_issuer_that_cannot_be_asked_is_a_503(served: Served) -> None:
    served.issuer.origin.down = True
    answer = versions(served, "platform", served.issuer.token())
    assert answer.status_code == 503 and "cannot be fetched now" in answer.text
