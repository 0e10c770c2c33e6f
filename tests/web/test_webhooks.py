"""Webhook deliveries over real HTTP, in each forge's shape: what the forge's delivery log shows,
what the server's log says (never a secret or a signature), and what /metrics counts."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, bare_clone, git_daemon, wait_until
from tests.support.webhook_payloads import FORGES

SECRET = "global-webhook-secret-for-tests"
REPO_SECRET = "repository-webhook-secret-for-tests"


@dataclass
class Site:
    root: Path
    module_url: str  # git://127.0.0.1:PORT/org/repo.git: payloads for 127.0.0.1, org/repo
    provider_url: str  # .../acme/terraform-provider-widget.git, gating a hosted provider

    def catalog(
        self,
        webhooks: str = "webhooks: {secret_env: GITREG_TEST_WEBHOOK_SECRET}\n",
        module: str = "",
    ) -> Path:
        (self.root / "releases").mkdir(exist_ok=True)
        path = self.root / "registry.yaml"
        path.write_text(
            f"cache_dir: cache\nrefresh_interval: 1h\n{webhooks}"
            f"modules:\n  - {{namespace: org, name: repo, system: x, repo: '{self.module_url}'{module}}}\n"
            "providers:\n"
            f"  - {{namespace: acme, type: widget, artifacts: releases, repo: '{self.provider_url}'}}\n"
        )
        return path


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    monkeypatch.setenv("GITREG_TEST_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("GITREG_TEST_REPO_SECRET", REPO_SECRET)
    for name, path in (
        ("module", "org/repo.git"),
        ("provider", "acme/terraform-provider-widget.git"),
    ):
        work = GitRepo(tmp_path / "work" / name)
        work.release("v1.0.0", module_files("1.0.0"))
        bare_clone(work.path, tmp_path / "server" / path)
    with git_daemon(tmp_path / "server") as base:
        yield Site(tmp_path, f"{base}/org/repo.git", f"{base}/acme/terraform-provider-widget.git")


def deliver(server: RegistryServer, forge: str, path: str, secret: str) -> httpx.Response:
    body, headers = FORGES[forge].request("127.0.0.1", path, "v1.1.0", secret)
    return httpx.post(
        f"{server.url}/v1/webhooks/{FORGES[forge].name}", content=body, headers=headers
    )


def counted(server: RegistryServer, forge: str, outcome: str) -> float:
    line = f'gitreg_webhooks_total{{forge="{forge}",result="{outcome}"}} '
    text = httpx.get(f"{server.url}/metrics").text
    return float(next(t for t in text.splitlines() if t.startswith(line)).split()[-1])


def webhook_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "webhook" in r.getMessage()]


@pytest.mark.parametrize("forge", sorted(FORGES))
def test_a_push_for_a_repository_not_in_the_catalog_is_answered_and_logged(
    site: Site, forge: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with RegistryServer(load_catalog(site.catalog())) as server:
        response = deliver(server, forge, "other/repo", SECRET)
        # 2xx: an organisation-wide hook delivers these for every repository; a 4xx would mark
        # each one failed, and GitLab disables a hook after a few failures.
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["refreshing"] == [] and "in the registry's catalog" in answer["warning"]
        assert any("other/repo" in url for url in answer["named"]), answer
        assert not server.state.syncs.busy()
        assert counted(server, FORGES[forge].name, "no_repository") == 1.0
        assert counted(server, FORGES[forge].name, "accepted") == 0.0
    (line,) = [r for r in webhook_lines(caplog) if r.levelno == logging.WARNING]
    message = line.getMessage()
    assert message.startswith(f"{FORGES[forge].name} webhook ('")
    assert "names no repository in the catalog" in message and "other/repo" in message
    assert SECRET not in caplog.text


@pytest.mark.parametrize("forge", sorted(FORGES))
def test_a_refused_delivery_is_logged_without_its_secret_or_signature(
    site: Site, forge: str, caplog: pytest.LogCaptureFixture
) -> None:
    with RegistryServer(load_catalog(site.catalog())) as server:
        body, headers = FORGES[forge].request("127.0.0.1", "org/repo", "v1.1.0", "wrong-secret")
        response = httpx.post(
            f"{server.url}/v1/webhooks/{FORGES[forge].name}", content=body, headers=headers
        )
        assert response.status_code == 401
        assert "the server's log says which secret applies" in response.json()["errors"][0]
        assert counted(server, FORGES[forge].name, "unauthorized") == 1.0
    (line,) = [r for r in webhook_lines(caplog) if r.levelno == logging.WARNING]
    message = line.getMessage()
    event = next((v for k, v in headers.items() if k.endswith(("-Event", "-Event-Key"))), "push")
    assert message.startswith(f"{FORGES[forge].name} webhook ({event!r}) for ")
    assert "org/repo" in message and "refused with 401" in message
    assert "the global `webhooks:` secret" in message
    signatures = [v.split("=")[-1] for k, v in headers.items() if "signature" in k.lower()]
    assert len(signatures) == (0 if forge in ("gitlab", "generic-bearer") else 1)
    for secret in ["wrong-secret", SECRET, *signatures]:
        assert secret not in caplog.text


def test_the_log_says_which_secret_applies(site: Site, caplog: pytest.LogCaptureFixture) -> None:
    own = ", webhook: {secret_env: GITREG_TEST_REPO_SECRET}"
    with RegistryServer(load_catalog(site.catalog(module=own))) as server:
        assert deliver(server, "github", "org/repo", SECRET).status_code == 401
    assert "its own `webhook:` secret" in caplog.text
    caplog.clear()
    with RegistryServer(load_catalog(site.catalog(webhooks=""))) as server:
        assert deliver(server, "github", "other/repo", SECRET).status_code == 401
    assert "only the global `webhooks:` secret could apply, and none is configured" in caplog.text


def test_a_push_for_a_repository_in_the_catalog_says_what_it_named(site: Site) -> None:
    with RegistryServer(load_catalog(site.catalog())) as server:
        response = deliver(server, "gitlab", "org/repo", SECRET)
        assert response.status_code == 202
        assert response.json()["refreshing"] == [site.module_url]
        assert "https://127.0.0.1/org/repo.git" in response.json()["named"]
        wait_until(lambda: not server.state.syncs.busy())


def test_a_push_for_a_provider_repository_refreshes_it(site: Site) -> None:
    with RegistryServer(load_catalog(site.catalog())) as server:
        response = deliver(server, "gitea", "acme/terraform-provider-widget", SECRET)
        assert response.status_code == 202, response.text
        assert response.json()["refreshing"] == [site.provider_url]

        synced = 'gitreg_syncs_total{mechanism="webhook",result="ok"} 1.0'
        wait_until(lambda: synced in httpx.get(f"{server.url}/metrics").text)


def test_an_event_that_is_no_push_is_answered_with_what_it_named(site: Site) -> None:
    with RegistryServer(load_catalog(site.catalog())) as server:
        body = json.dumps(
            {
                "zen": "Design for failure.",
                "hook_id": 1,
                "repository": {"clone_url": "https://127.0.0.1/other/repo.git"},
            }
        ).encode()
        signature = FORGES["github"].headers(SECRET, body)["X-Hub-Signature-256"]
        response = httpx.post(
            f"{server.url}/v1/webhooks/github",
            content=body,
            headers={"X-GitHub-Event": "ping", "X-Hub-Signature-256": signature},
        )
        assert response.status_code == 200
        assert response.json() == {
            "refreshing": [],
            "named": ["https://127.0.0.1/other/repo.git"],
            "ignored": "event 'ping' refreshes nothing",
        }
        assert counted(server, "github", "ignored_event") == 1.0


def test_a_form_encoded_github_hook_is_told_to_send_json(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    with RegistryServer(load_catalog(site.catalog())) as server:
        response = httpx.post(
            f"{server.url}/v1/webhooks/github",
            content=b"payload=%7B%22ref%22%3A%22refs%2Ftags%2Fv1%22%7D",
            headers={"X-GitHub-Event": "push", "Content-Type": "application/x-www-form-urlencoded"},
        )
        assert response.status_code == 400
        assert "content type to application/json" in response.json()["errors"][0]
        assert counted(server, "github", "bad_request") == 1.0
    assert "github webhook ('push')" in caplog.text and "refused with 400" in caplog.text


def test_credentials_in_named_urls_are_neither_logged_nor_echoed(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    token = "glcbt-64_e2d1aSecretTokenValue"
    payload = {
        "repositories": [
            f"https://gitlab-ci-token:{token}@127.0.0.1/other/repo.git",
            f"https://{token}@127.0.0.1/third/repo.git",
        ]
    }
    with RegistryServer(load_catalog(site.catalog())) as server:
        response = httpx.post(
            f"{server.url}/v1/webhooks/generic",
            content=json.dumps(payload).encode(),
            headers={"Authorization": f"Bearer {SECRET}"},
        )
        assert response.status_code == 200
        assert response.json()["named"] == [
            "https://***@127.0.0.1/other/repo.git",
            "https://***@127.0.0.1/third/repo.git",
        ]
    assert token not in caplog.text and "other/repo" in caplog.text


def test_every_forge_and_outcome_is_counted_from_zero(site: Site) -> None:
    with RegistryServer(load_catalog(site.catalog())) as server:
        for forge in ("github", "gitlab", "gitea", "bitbucket", "generic"):
            for outcome in (
                "accepted",
                "unauthorized",
                "no_repository",
                "ignored_event",
                "bad_request",
            ):
                assert counted(server, forge, outcome) == 0.0


def test_a_repository_event_of_a_repository_with_its_own_secret_is_ignored_not_refused(
    site: Site,
) -> None:
    """No source lists its organization: judged as any event that is no push, so a repository
    hook signed with the repository's own secret is answered 200, as before sources."""
    own = ", webhook: {secret_env: GITREG_TEST_REPO_SECRET}"
    with RegistryServer(load_catalog(site.catalog(module=own))) as server:
        body = json.dumps(
            {
                "action": "renamed",
                "repository": {"full_name": "org/repo", "clone_url": site.module_url},
                "organization": {"login": "org"},
            }
        ).encode()
        signature = FORGES["github"].headers(REPO_SECRET, body)["X-Hub-Signature-256"]
        response = httpx.post(
            f"{server.url}/v1/webhooks/github",
            content=body,
            headers={"X-GitHub-Event": "repository", "X-Hub-Signature-256": signature},
        )
        assert response.status_code == 200, response.text
        assert response.json()["ignored"] == "event 'repository' refreshes nothing"
        assert counted(server, "github", "ignored_event") == 1.0
