"""A private registry over real HTTP: who gets what with which token, signed download URLs,
and what status, metrics and logs show of it (names, never tokens)."""

from __future__ import annotations

import base64
import hashlib
import io
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.auth import tokens
from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer

PLATFORM = "platform-token-0123456789"
OPS = "ops-token-0123456789"
MIRROR = "mirror-token-0123456789"
ROTATED = "rotated-token-0123456789"


@dataclass
class Served:
    client: httpx.Client
    token_file: Path


def sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("private")
    repo = GitRepo(root / "repo")
    repo.release("v1.0.0", module_files("1.0.0"))
    mono = GitRepo(root / "mono")
    mono.release("vpc/v1.0.0", module_files("vpc", "modules/vpc"))
    token_file = root / "rotated.token"
    token_file.write_text(ROTATED + "\n")
    (root / "registry.yaml").write_text(f"""
cache_dir: cache
hostname: registry.example.test
modules:
  - {{namespace: platform, name: net, system: aws, repo: {repo.path}}}
  - {{namespace: platform, name: vpc, system: aws, repo: {mono.path}, path: modules/vpc,
      tags: "vpc/v{{version}}"}}
  - {{namespace: platform, name: netgit, system: aws, repo: {repo.path}, download: git}}
  - {{namespace: team-a, name: net, system: aws, repo: {repo.path}}}
  - {{namespace: examples, name: net, system: aws, repo: {repo.path}}}
mirror: {{read_through: false}}
auth:
  public: [examples]
  tokens:
    - {{name: ci-platform, token_sha256: "{sha(PLATFORM)}", read: ["platform"]}}
    - {{name: ops, token_sha256: "{sha(OPS)}", ops: true}}
    - {{name: mirror-user, token_sha256: "{sha(MIRROR)}", mirror: true}}
    - {{name: rotated, token_file: {token_file}, read: ["team-*"]}}
""")
    catalog = load_catalog(root / "registry.yaml")
    with (
        RegistryServer(catalog) as server,
        httpx.Client(base_url=server.url, timeout=10) as client,
    ):
        yield Served(client, token_file)


def test_discovery_and_health_stay_open(served: Served) -> None:
    for path in ("/.well-known/terraform.json", "/healthz", "/readyz"):
        assert served.client.get(path).status_code == 200, path


@pytest.mark.parametrize(
    "headers",
    [
        {},
        bearer("nobody-issued-this"),
        {"Authorization": "Bearer"},
        {"Authorization": "Token abc"},
        {"Authorization": "Basic !!!"},
    ],
)
def test_no_token_or_an_unknown_one_is_401_asking_for_a_bearer_token(
    served: Served, headers: dict[str, str]
) -> None:
    response = served.client.get("/v1/modules/platform/net/aws/versions", headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.headers["content-type"] == "application/json"
    assert response.json()["errors"]


def test_a_token_reads_its_namespaces(served: Served) -> None:
    response = served.client.get("/v1/modules/platform/net/aws/versions", headers=bearer(PLATFORM))
    assert response.status_code == 200
    assert response.json()["modules"][0]["versions"] == [{"version": "1.0.0"}]
    missing = served.client.get(
        "/v1/modules/platform/absent/aws/versions", headers=bearer(PLATFORM)
    )
    assert missing.status_code == 404  # inside its namespaces, a token may learn what is absent


def test_outside_its_namespaces_a_token_learns_nothing(served: Served) -> None:
    """403 for a module that exists and for one that does not, said the same way."""
    there = served.client.get("/v1/modules/team-a/net/aws/versions", headers=bearer(PLATFORM))
    absent = served.client.get("/v1/modules/team-a/absent/aws/versions", headers=bearer(PLATFORM))
    assert there.status_code == absent.status_code == 403
    assert there.json()["errors"][0].replace("net", "X") == absent.json()["errors"][0].replace(
        "absent", "X"
    )
    assert "ci-platform" in there.json()["errors"][0]  # its name says which token it was


def test_public_namespaces_need_no_token(served: Served) -> None:
    assert served.client.get("/v1/modules/examples/net/aws/versions").status_code == 200
    assert served.client.get("/v1/modules/Examples/net/aws/versions").status_code == 200
    download = served.client.get("/v1/modules/examples/net/aws/1.0.0/download")
    assert download.status_code == 200
    location = download.headers["x-terraform-get"]
    assert "signature" not in location and "use_registry_credentials" not in download.json()
    archive = served.client.get(location)
    assert archive.status_code == 200
    assert archive.headers["cache-control"].startswith("public")
    assert served.client.get("/v1/modules/examples/absent/aws/versions").status_code == 404


def test_a_private_download_is_a_signed_url_that_needs_no_token(served: Served) -> None:
    download = served.client.get(
        "/v1/modules/platform/net/aws/1.0.0/download", headers=bearer(PLATFORM)
    )
    assert download.status_code == 200
    location = download.headers["x-terraform-get"]
    body = download.json()
    assert body == {"location": location}
    path, _, query = location.partition("?")
    assert path.endswith(".tar.gz") and "signature=" in query and "by=ci-platform" in query
    archive = served.client.get(location)  # Terraform sends no token here
    assert archive.status_code == 200
    # A shared cache must not hand a private archive to others.
    assert archive.headers["cache-control"].startswith("private")
    unsigned = served.client.get(path)
    assert unsigned.status_code == 403 and "signed URL" in unsigned.json()["errors"][0]
    # The registry's token opens it too.
    with_token = served.client.get(path, headers=bearer(PLATFORM))
    assert with_token.status_code == 200 and with_token.content == archive.content
    outsider = served.client.get(path, headers=bearer(ROTATED))
    assert outsider.status_code == 403


def test_a_signed_url_for_a_folder_keeps_the_folder_before_the_query(served: Served) -> None:
    download = served.client.get(
        "/v1/modules/platform/vpc/aws/1.0.0/download", headers=bearer(PLATFORM)
    )
    location = download.headers["x-terraform-get"]
    archive, _, rest = location.partition(".tar.gz")
    # The folder, then the checksum go-getter verifies, then the signature (go-getter splits
    # the folder off before the first `?`).
    assert re.match(r"//modules/vpc\?checksum=sha256:[0-9a-f]{64}&expires=", rest)
    query = rest.partition("?")[2]
    response = served.client.get(f"{archive}.tar.gz?{query}")
    assert response.status_code == 200
    with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as tar:
        assert "modules/vpc/main.tf" in tar.getnames()


@pytest.mark.parametrize(
    ("field", "value"),
    [("signature", "AAAA"), ("expires", "1"), ("expires", "99999999999"), ("by", "someone-else")],
)
def test_a_tampered_signed_url_is_403(served: Served, field: str, value: str) -> None:
    download = served.client.get(
        "/v1/modules/platform/net/aws/1.0.0/download", headers=bearer(PLATFORM)
    )
    url = httpx.URL(download.headers["x-terraform-get"])
    tampered = url.copy_set_param(field, value)
    response = served.client.get(str(tampered))
    assert response.status_code == 403
    assert response.json()["errors"]


def test_git_downloads_are_not_signed(served: Served) -> None:
    """git:: locations go to the Git server, which has its own credentials; and tofu must not
    send the registry's token there."""
    download = served.client.get(
        "/v1/modules/platform/netgit/aws/1.0.0/download", headers=bearer(PLATFORM)
    )
    assert download.headers["x-terraform-get"].startswith("git::")
    assert "use_registry_credentials" not in download.json()
    assert "signature" not in download.headers["x-terraform-get"]


def test_basic_credentials_carry_a_token_as_their_password(served: Served) -> None:
    basic = base64.b64encode(f"anyone:{PLATFORM}".encode()).decode()
    response = served.client.get(
        "/v1/modules/platform/net/aws/versions", headers={"Authorization": f"Basic {basic}"}
    )
    assert response.status_code == 200


def test_ops_pages_need_an_ops_token(served: Served) -> None:
    for path in ("/v1/status", "/metrics"):
        assert served.client.get(path).status_code == 401
        assert served.client.get(path, headers=bearer(PLATFORM)).status_code == 403
        assert served.client.get(path, headers=bearer(OPS)).status_code == 200


def test_status_and_metrics_count_by_token_name_and_never_show_a_token(served: Served) -> None:
    served.client.get("/v1/modules/platform/net/aws/versions", headers=bearer(PLATFORM))
    served.client.get("/v1/modules/team-a/net/aws/versions", headers=bearer(PLATFORM))
    served.client.get("/v1/modules/platform/net/aws/versions", headers=bearer("nobody"))
    status = served.client.get("/v1/status", headers=bearer(OPS))
    counts = {(r["principal"], r["outcome"]): r["count"] for r in status.json()["auth"]["requests"]}
    assert counts[("ci-platform", "allowed")] >= 1
    assert counts[("ci-platform", "refused")] >= 1
    assert counts[("unknown", "unknown_token")] >= 1
    metrics = served.client.get("/metrics", headers=bearer(OPS)).text
    assert 'gitreg_auth_requests_total{outcome="allowed",principal="ci-platform"}' in metrics
    for secret in (PLATFORM, OPS, MIRROR, ROTATED, "nobody"):
        assert secret not in status.text and secret not in metrics


def test_the_network_mirror_needs_a_mirror_token(served: Served) -> None:
    path = "/v1/mirror/registry.terraform.io/hashicorp/null/index.json"
    assert served.client.get(path).status_code == 401
    assert served.client.get(path, headers=bearer(PLATFORM)).status_code == 403
    assert served.client.get(path, headers=bearer(MIRROR)).status_code == 404  # admitted; absent


def test_the_mirror_opens_no_hosted_namespace_that_providers_v1_keeps_closed(
    served: Served,
) -> None:
    """The registry's own providers through the mirror: the token must read their namespace."""
    path = "/v1/mirror/registry.example.test/platform/widget/index.json"
    refused = served.client.get(path, headers=bearer(MIRROR))
    assert refused.status_code == 403 and "platform" in refused.json()["errors"][0]
    public = "/v1/mirror/registry.example.test/examples/widget/index.json"
    assert served.client.get(public, headers=bearer(MIRROR)).status_code == 404


def test_a_token_file_is_read_again_when_it_changes(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tokens, "RECHECK_FILES", 0.0)
    path = "/v1/modules/team-a/net/aws/versions"
    assert served.client.get(path, headers=bearer(ROTATED)).status_code == 200
    download = served.client.get(
        "/v1/modules/team-a/net/aws/1.0.0/download", headers=bearer(ROTATED)
    )
    signed = download.headers["x-terraform-get"]
    assert served.client.get(signed).status_code == 200
    served.token_file.write_text("the-next-token-0123456789\n")
    try:
        assert served.client.get(path, headers=bearer(ROTATED)).status_code == 401
        # A URL signed for the token before stops opening: it was bound to the old one.
        refused = served.client.get(signed)
        assert refused.status_code == 403 and "changed" in refused.json()["errors"][0]
        assert (
            served.client.get(path, headers=bearer("the-next-token-0123456789")).status_code == 200
        )
    finally:
        served.token_file.write_text(ROTATED + "\n")


def test_no_token_reaches_the_log(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    for token in (PLATFORM, "nobody-issued-this"):
        served.client.get("/v1/modules/team-a/net/aws/versions", headers=bearer(token))
        served.client.get("/v1/status", headers=bearer(token))
    assert all(t not in caplog.text for t in (PLATFORM, "nobody-issued-this"))
