"""/readyz over real HTTP with readiness.max_staleness: a Git server that goes away makes the
registry unready once its last sync is older than the bound, saying which and why; with auth:,
/healthz and /readyz say nothing private (the details are under /v1/status)."""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

import httpx

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, bare_clone, free_port, git_daemon, wait_until
from tests.support.tls_clients import served_over_tls


def test_readyz_turns_503_with_reasons_when_the_git_server_stays_away(tmp_path: Path) -> None:
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    bare_clone(work.path, tmp_path / "server" / "org" / "repo.git")
    with contextlib.ExitStack() as git_server:
        url = f"{git_server.enter_context(git_daemon(tmp_path / 'server'))}/org/repo.git"
        (tmp_path / "registry.yaml").write_text(
            "cache_dir: cache\nrefresh_interval: 1s\nfresh_reads: 0\n"
            "readiness: {max_staleness: 2s}\n"
            f"modules:\n  - {{namespace: org, name: repo, system: x, repo: '{url}'}}\n"
        )
        with RegistryServer(load_catalog(tmp_path / "registry.yaml"), refresh=True) as server:
            ready = httpx.get(f"{server.url}/readyz")
            assert ready.status_code == 200, ready.text
            assert ready.json()["max_staleness"] == 2
            git_server.close()  # the Git server goes away: polls fail, the last success ages
            wait_until(
                lambda: httpx.get(f"{server.url}/readyz").status_code == 503,
                30,
                "readyz answering 503",
            )
            body = httpx.get(f"{server.url}/readyz").json()
            versions = httpx.get(f"{server.url}/v1/modules/org/repo/x/versions")
    assert body["ready"] is False and body["waiting"] == []
    (outdated,) = body["outdated"]
    assert outdated["repository"] == url
    assert "longer than max_staleness (2 s); last error:" in outdated["reason"]
    assert [s["repository"] for s in body["stale"]] == [url]
    assert versions.status_code == 200  # unready, yet serving what the clone holds


def test_with_auth_healthz_and_readyz_show_counts_and_codes_only(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    """A private module whose Git server cannot be reached: /readyz says 503 and why, as codes,
    with no URL, module name or Git's words; /healthz no count; /v1/status (ops) the details."""
    refused = free_port()  # nothing listens there: every fetch fails at once
    url = f"git://127.0.0.1:{refused}/hidden/terraform-aws-classified.git"
    ops = "ops-token-for-the-details"
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nfresh_reads: 0\n"
        f"modules:\n  - {{namespace: hidden, name: classified, system: aws, repo: '{url}'}}\n"
        "auth:\n  tokens:\n"
        f"    - {{name: ops, token_sha256: {hashlib.sha256(ops.encode()).hexdigest()}, ops: true}}\n"
    )
    catalog = load_catalog(tmp_path / "registry.yaml")
    with served_over_tls(catalog, tls) as (_, client):
        health = client.get("/healthz")
        ready = client.get("/readyz")
        status = client.get("/v1/status", headers={"Authorization": f"Bearer {ops}"})
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert ready.status_code == 503
    body = ready.json()
    assert body["ready"] is False and body["waiting"] == 1
    assert body["reasons"] == ["versions_unknown"]
    for secret in (str(refused), "hidden", "classified", "127.0.0.1", "git://", "fatal"):
        assert secret not in health.text and secret not in ready.text, secret
    assert status.status_code == 200
    (waiting,) = status.json()["readiness"]["waiting"]
    assert waiting["repository"] == url and waiting["reason"]
