"""auth.git through the app: a client's token that the module's own Git server (`git
http-backend` behind a real HTTPS server checking Basic credentials) accepts opens the module;
one it refuses does not; the Git server stopped mid-test is a 503, never an open door."""

from __future__ import annotations

import contextlib
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, bare_clone, git_http_server

TOKEN = "glpat-team-token-0123456789"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_the_git_server_decides_who_reads_its_module(
    tls: TlsMaterial, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    bare_clone(work.path, tmp_path / "server" / "team" / "net.git")
    monkeypatch.setenv("GITREG_TEST_GIT_TOKEN", TOKEN)  # the registry's own, for fetching
    with contextlib.ExitStack() as git_server:
        base = git_server.enter_context(
            git_http_server(tmp_path / "server", token=TOKEN, tls=tls, username="oauth2")
        )
        (tmp_path / "registry.yaml").write_text(f"""
cache_dir: cache
credentials:
  - {{url: "{base}/", token_env: GITREG_TEST_GIT_TOKEN, ca_file: {tls.ca_cert}}}
modules:
  - {{namespace: team, name: net, system: aws, repo: "{base}/team/net.git"}}
auth:
  git: {{cache: 5m}}
""")
        with (
            RegistryServer(load_catalog(tmp_path / "registry.yaml")) as server,
            httpx.Client(base_url=server.url, timeout=20) as client,
        ):
            versions = "/v1/modules/team/net/aws/versions"
            assert client.get(versions).status_code == 401
            assert client.get(versions, headers=bearer(TOKEN)).status_code == 200
            refused = client.get(versions, headers=bearer("glpat-someone-else-0123456789a"))
            assert refused.status_code == 403
            assert "Git server did not accept" in refused.json()["errors"][0]
            # A module that is not there is asked at its namespace's stand-in (team/net): a
            # token that Git server takes learns it is missing; another gets the same 403.
            absent = "/v1/modules/team/absent/aws/versions"
            assert client.get(absent, headers=bearer(TOKEN)).status_code == 404
            other = client.get(absent, headers=bearer("glpat-someone-else-0123456789a"))
            assert other.status_code == 403
            download = client.get("/v1/modules/team/net/aws/1.0.0/download", headers=bearer(TOKEN))
            location = download.headers["x-terraform-get"]
            assert "by=git" in location
            assert client.get(location).status_code == 200

            git_server.close()  # the Git server goes away mid-test
            # Answers already known keep answering for their cache time ...
            assert client.get(versions, headers=bearer(TOKEN)).status_code == 200
            assert (
                client.get(versions, headers=bearer("glpat-someone-else-0123456789a")).status_code
                == 403
            )
            # ... and a token never asked about is neither let in nor turned away for good.
            unknown = client.get(versions, headers=bearer("glpat-new-token-0123456789abcd"))
            assert unknown.status_code == 503 and unknown.headers["retry-after"]
            assert "glpat-new-token-0123456789abcd" not in unknown.text
