"""/readyz over real HTTP with readiness.max_staleness: a Git server that goes away makes the
registry unready once its last sync is older than the bound, saying which and why."""

from __future__ import annotations

import contextlib
from pathlib import Path

import httpx

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, bare_clone, git_daemon, wait_until


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
