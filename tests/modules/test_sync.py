"""How a new tag reaches the registry: polling, watching, webhooks, and a client's miss, each
against real Git repositories and servers on 127.0.0.1, through the real app over HTTP (fresh
reads have tests of their own, in tests/freshness/test_fresh_reads.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import RegistryServer, bare_clone, git_daemon, public_cas, wait_until
from tests.support.webhook_payloads import FORGES

SECRET = "webhook-secret-for-tests"


@dataclass
class Setup:
    work: GitRepo
    bare: Path
    url: str
    root: Path

    def push_tag(self, tag: str) -> str:
        commit = self.work.release(tag, module_files(tag))
        git(self.work.path, "push", "-q", str(self.bare), f"refs/tags/{tag}")
        return commit

    def catalog(self, extra: str = "", module: str = "", refresh: str = "1h") -> Path:
        """Fresh reads off: the mechanism under test must be the only way a new tag arrives."""
        path = self.root / "registry.yaml"
        path.write_text(
            f"cache_dir: cache\nrefresh_interval: {refresh}\nfresh_reads: 0\n{extra}"
            f"modules:\n  - {{namespace: org, name: repo, system: x, repo: '{self.url}'{module}}}\n"
        )
        return path


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    bare = bare_clone(work.path, tmp_path / "server" / "org" / "repo.git")
    with git_daemon(tmp_path / "server") as base:
        yield Setup(work, bare, f"{base}/org/repo.git", tmp_path)


def versions(server: RegistryServer, address: str = "org/repo/x") -> list[str]:
    # polled: one SSL context, not one made for each request (see public_cas)
    response = httpx.get(f"{server.url}/v1/modules/{address}/versions", verify=public_cas())
    return (
        [v["version"] for v in response.json()["modules"][0]["versions"]]
        if response.status_code == 200
        else []
    )


def mechanism(server: RegistryServer) -> str | None:
    found: str | None = httpx.get(f"{server.url}/v1/status").json()["repositories"][0]["mechanism"]
    return found


def test_polling_finds_a_pushed_tag(setup: Setup) -> None:
    with RegistryServer(load_catalog(setup.catalog(refresh="300ms")), refresh=True) as server:
        setup.push_tag("v1.1.0")
        wait_until(lambda: "1.1.0" in versions(server))
        assert mechanism(server) == "poll"


def test_watching_finds_a_local_tag(tmp_path: Path) -> None:
    work = GitRepo(tmp_path / "local")
    work.release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nrefresh_interval: 1h\nfresh_reads: 0\nmodules:\n"
        f"  - {{namespace: org, name: repo, system: x, repo: {work.path}}}\n"
    )
    with RegistryServer(load_catalog(tmp_path / "registry.yaml"), refresh=True) as server:
        time.sleep(0.5)  # let the watch start (a tag made before it would be found by a poll only)
        work.release("v1.1.0", module_files("1.1.0"))
        wait_until(lambda: "1.1.0" in versions(server), timeout=20)
        assert mechanism(server) == "watch"
        git(work.path, "pack-refs", "--all")  # tags moved into packed-refs: still watched
        work.release("v1.2.0", module_files("1.2.0"))
        git(work.path, "pack-refs", "--all")
        wait_until(lambda: "1.2.0" in versions(server), timeout=20)


@pytest.mark.parametrize("forge", sorted(FORGES))
def test_webhook_refreshes_the_named_repository(
    setup: Setup, forge: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITREG_TEST_WEBHOOK_SECRET", SECRET)
    catalog = load_catalog(setup.catalog("webhooks: {secret_env: GITREG_TEST_WEBHOOK_SECRET}\n"))
    with RegistryServer(catalog) as server:  # no polling, no watching: only the webhook can tell
        setup.push_tag("v1.1.0")
        body, headers = FORGES[forge].request("127.0.0.1", "org/repo", "v1.1.0", SECRET)
        response = httpx.post(
            f"{server.url}/v1/webhooks/{FORGES[forge].name}", content=body, headers=headers
        )
        assert response.status_code == 202, response.text
        assert response.json()["refreshing"] == [setup.url]
        wait_until(lambda: "1.1.0" in versions(server))
        assert mechanism(server) == "webhook"
        metrics = httpx.get(f"{server.url}/metrics").text
        assert (
            f'gitreg_webhooks_total{{forge="{FORGES[forge].name}",result="accepted"}} 1.0'
            in metrics
        )
        assert 'gitreg_syncs_total{mechanism="webhook",result="ok"} 1.0' in metrics


@pytest.mark.parametrize("forge", sorted(FORGES))
def test_bad_or_missing_signature_is_refused(
    setup: Setup, forge: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITREG_TEST_WEBHOOK_SECRET", SECRET)
    catalog = load_catalog(setup.catalog("webhooks: {secret_env: GITREG_TEST_WEBHOOK_SECRET}\n"))
    with RegistryServer(catalog) as server:
        setup.push_tag("v1.1.0")
        body, headers = FORGES[forge].request("127.0.0.1", "org/repo", "v1.1.0", "not-the-secret")
        url = f"{server.url}/v1/webhooks/{FORGES[forge].name}"
        for sent in (headers, {"Content-Type": "application/json"}):
            response = httpx.post(url, content=body, headers=sent)
            assert response.status_code == 401, response.text
            assert "signature" in response.json()["errors"][0]
        assert not server.state.syncs.busy()
        time.sleep(0.3)
        assert "1.1.0" not in versions(server)


def test_a_repository_secret_overrides_the_global_one(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITREG_TEST_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("GITREG_TEST_REPO_SECRET", "repo-secret")
    catalog = load_catalog(
        setup.catalog(
            "webhooks: {secret_env: GITREG_TEST_WEBHOOK_SECRET}\n",
            ", webhook: {secret_env: GITREG_TEST_REPO_SECRET}",
        )
    )
    with RegistryServer(catalog) as server:
        setup.push_tag("v1.1.0")
        github = FORGES["github"]
        body, headers = github.request("127.0.0.1", "org/repo", "v1.1.0", SECRET)
        assert (
            httpx.post(
                f"{server.url}/v1/webhooks/github", content=body, headers=headers
            ).status_code
            == 401
        )
        body, headers = github.request("127.0.0.1", "org/repo", "v1.1.0", "repo-secret")
        assert (
            httpx.post(
                f"{server.url}/v1/webhooks/github", content=body, headers=headers
            ).status_code
            == 202
        )
        wait_until(lambda: "1.1.0" in versions(server))


def test_webhook_for_another_repository_refreshes_nothing(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITREG_TEST_WEBHOOK_SECRET", SECRET)
    with RegistryServer(
        load_catalog(setup.catalog("webhooks: {secret_env: GITREG_TEST_WEBHOOK_SECRET}\n"))
    ) as server:
        body, headers = FORGES["gitea"].request("127.0.0.1", "other/repo", "v9.0.0", SECRET)
        response = httpx.post(f"{server.url}/v1/webhooks/gitea", content=body, headers=headers)
        assert response.status_code == 200 and response.json()["refreshing"] == []


@pytest.mark.parametrize(
    ("path", "body", "headers", "status", "message"),
    [
        ("/v1/webhooks/github", b"not json", {"X-GitHub-Event": "push"}, 400, "not JSON"),
        ("/v1/webhooks/github", b"[1, 2]", {"X-GitHub-Event": "push"}, 400, "not a JSON object"),
        ("/v1/webhooks/generic", b"{}", {}, 400, "give the repository"),
        ("/v1/webhooks/sourcehut", b"{}", {}, 404, "no webhook for 'sourcehut'"),
        ("/v1/webhooks/github", b"x" * (2 << 20), {}, 413, "request body over"),
    ],
)
def test_malformed_webhooks(
    setup: Setup, path: str, body: bytes, headers: dict[str, str], status: int, message: str
) -> None:
    with RegistryServer(load_catalog(setup.catalog())) as server:
        response = httpx.post(f"{server.url}{path}", content=body, headers=headers)
    assert response.status_code == status and message in response.json()["errors"][0]


def test_webhooks_without_a_configured_secret_are_refused(setup: Setup) -> None:
    with RegistryServer(load_catalog(setup.catalog())) as server:
        body, headers = FORGES["github"].request("127.0.0.1", "org/repo", "v1.1.0", "")
        assert (
            httpx.post(
                f"{server.url}/v1/webhooks/github", content=body, headers=headers
            ).status_code
            == 401
        )


def test_a_version_asked_for_but_missing_triggers_a_refresh(setup: Setup) -> None:
    with RegistryServer(load_catalog(setup.catalog())) as server:
        commit = setup.push_tag("v1.1.0")
        response = httpx.get(f"{server.url}/v1/modules/org/repo/x/1.1.0/download", timeout=20)
        assert response.status_code == 200 and commit in response.json()["location"]
        assert mechanism(server) == "on-demand"
        # Rate-limited: a second miss right after does not fetch again.
        setup.push_tag("v1.2.0")
        assert httpx.get(f"{server.url}/v1/modules/org/repo/x/1.2.0/download").status_code == 404


def test_status_endpoint(setup: Setup) -> None:
    with RegistryServer(load_catalog(setup.catalog())) as server:
        report = httpx.get(f"{server.url}/v1/status").json()["repositories"]
    assert len(report) == 1
    assert report[0]["url"] == setup.url and report[0]["modules"] == ["org/repo/x"]
    assert report[0]["last_success"] and report[0]["last_error"] is None
    assert report[0]["mechanism"] == "startup" and report[0]["tag_changes"] == []
    json.dumps(report)
