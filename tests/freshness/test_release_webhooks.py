"""A forge's release event (GitHub's and Gitea's/Forgejo's `release`, GitLab's Release Hook), or
a tag push, for the repository a provider's releases are read from reads that provider's release
list at once, against the real app over HTTPS and stand-in forges on 127.0.0.1: the new release
serves right after the delivery, long before the hour's interval; a flood of deliveries costs one
read under way and one after it; an unknown repository or a wrong secret is answered as a push's
delivery is."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pgpy
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from tests.support.forge_providers import (
    PROJECT,
    SECRET,
    TOKEN,
    list_reads,
    released,
    write_registry,
)
from tests.support.forges import StandInForge
from tests.support.provider_releases import new_key, write_key
from tests.support.servers import RegistryServer, wait_until
from tests.support.site_snippets import claimed
from tests.support.tls_clients import served_over_tls
from tests.support.webhook_payloads import FORGES, RELEASE_FORGES


@pytest.fixture
def key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> pgpy.PGPKey:
    monkeypatch.setenv("WIDGET_FORGE_TOKEN", TOKEN)
    monkeypatch.setenv("HOOK_SECRET", SECRET)
    signer = new_key("ci")
    write_key(signer, tmp_path / "ci.asc", public=True)
    return signer


def _versions(client: httpx.Client) -> list[str]:
    answer = client.get("/v1/providers/acme/widget/versions")
    return [v["version"] for v in answer.json().get("versions", [])]


class Served:
    """A stand-in forge holding acme/widget 1.0.0, and gitreg serving it, read once."""

    def __init__(self, forge: StandInForge, server: RegistryServer, client: httpx.Client) -> None:
        self.forge = forge
        self.server = server
        self.client = client
        self.host = urlsplit(forge.url).netloc  # where the forge's repositories are

    def deliver(self, forge: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
        return self.client.post(f"/v1/webhooks/{forge}", content=body, headers=headers)

    def settled(self) -> None:
        reads = self.server.state.background.release_reads
        wait_until(lambda: not reads.busy(), 30, "the release reads done")


@contextmanager
def _served(
    kind: str, tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey, own: bool = False
) -> Iterator[Served]:
    """`own`: the releases entry has a `webhook:` secret of its own, in $WIDGET_HOOK_SECRET."""
    prefix = "/api/v3" if kind == "github" else ""  # a GitHub Enterprise Server's API
    with StandInForge(
        kind,  # type: ignore[arg-type]
        token=TOKEN,
        tls=tls,
        prefix=prefix,
        releases=[released(tmp_path, key, "1.0.0")],
    ) as forge:
        registry = write_registry(tmp_path, forge, tls)
        if own:
            text = registry.read_text().replace(
                "token_env: WIDGET_FORGE_TOKEN",
                "token_env: WIDGET_FORGE_TOKEN, webhook: {secret_env: WIDGET_HOOK_SECRET}",
            )
            registry.write_text(text)
        catalog = load_catalog(registry)
        with served_over_tls(catalog, tls) as (server, client):
            assert _versions(client) == ["1.0.0"]
            yield Served(forge, server, client)


@pytest.mark.parametrize("name", list(RELEASE_FORGES))
def test_a_release_event_reads_the_release_list_at_once(
    name: str, tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    hook = RELEASE_FORGES[name]
    with _served(hook.name, tmp_path, tls, key) as served:
        served.forge.releases = [*served.forge.releases, released(tmp_path, key, "1.1.0")]
        body, headers = hook.request(served.host, PROJECT, "v1.1.0", SECRET)
        answer = served.deliver(hook.name, body, headers)
        assert answer.status_code == 202, answer.text
        assert answer.json()["releases"] == ["acme/widget"]
        wait_until(lambda: _versions(served.client) == ["1.1.0", "1.0.0"], 30, "1.1.0 served")


@pytest.mark.parametrize("name", ["github", "gitlab", "gitea"])
def test_a_tag_push_reads_the_release_list_too(
    name: str, tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    hook = FORGES[name]
    with _served(hook.name, tmp_path, tls, key) as served:
        before = list_reads(served.forge)
        served.forge.releases = [*served.forge.releases, released(tmp_path, key, "1.1.0")]
        body, headers = hook.request(served.host, PROJECT, "v1.1.0", SECRET)
        answer = served.deliver(hook.name, body, headers)
        assert answer.status_code == 202, answer.text
        assert answer.json() == {
            "refreshing": [],
            "releases": ["acme/widget"],
            "named": answer.json()["named"],
        }
        wait_until(lambda: _versions(served.client) == ["1.1.0", "1.0.0"], 30, "1.1.0 served")
        served.settled()
        assert list_reads(served.forge) == before + 1


def test_a_flood_of_deliveries_costs_one_read_under_way_and_one_after(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    hook = RELEASE_FORGES["gitea"]
    with _served("gitea", tmp_path, tls, key) as served:
        before = list_reads(served.forge)
        reads = served.server.state.background.release_reads
        with served.forge.held():  # the first read waits on the forge while the others arrive
            for _ in range(10):
                body, headers = hook.request(served.host, PROJECT, "v1.1.0", SECRET)
                assert served.deliver("gitea", body, headers).status_code == 202
            assert reads.busy() and reads.coalesced == 8  # the first runs, the second waits
        served.settled()
        assert list_reads(served.forge) == before + 2


def test_an_unknown_repository_or_a_wrong_secret_is_answered_as_a_push_is(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    hook = RELEASE_FORGES["github"]
    with _served("github", tmp_path, tls, key) as served:
        before = list_reads(served.forge)
        body, headers = hook.request(served.host, "acme/terraform-provider-other", "v1", SECRET)
        answer = served.deliver("github", body, headers)
        assert answer.status_code == 200
        assert answer.json()["refreshing"] == [] and "warning" in answer.json()

        body, headers = hook.request(served.host, PROJECT, "v1.1.0", "not-the-secret")
        refused = served.deliver("github", body, headers)
        assert refused.status_code == 401
        assert "acme" not in refused.text  # the sender learns nothing of the catalog
        served.settled()
        assert list_reads(served.forge) == before
        assert _versions(served.client) == ["1.0.0"]
        metrics = served.client.get("/metrics").text
        assert 'gitreg_webhooks_total{forge="github",result="no_repository"} 1.0' in metrics
        assert 'gitreg_webhooks_total{forge="github",result="unauthorized"} 1.0' in metrics


def test_a_releases_entry_with_its_own_secret_takes_only_that_one(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = RELEASE_FORGES["gitlab"]
    monkeypatch.setenv("WIDGET_HOOK_SECRET", "widget-hook-s3cret")
    with _served("gitlab", tmp_path, tls, key, own=True) as served:
        served.forge.releases = [*served.forge.releases, released(tmp_path, key, "1.1.0")]
        body, headers = hook.request(served.host, PROJECT, "v1.1.0", SECRET)  # the global one
        assert served.deliver("gitlab", body, headers).status_code == 401
        body, headers = hook.request(served.host, PROJECT, "v1.1.0", "widget-hook-s3cret")
        answer = served.deliver("gitlab", body, headers)
        assert answer.status_code == 202 and answer.json()["releases"] == ["acme/widget"]
        wait_until(lambda: _versions(served.client) == ["1.1.0", "1.0.0"], 30, "1.1.0 served")


def test_the_release_webhook_recipe(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/providers.md's webhook setting, as written, with GitHub's release event."""
    monkeypatch.setenv("GITREG_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    with (
        claimed("providers.md", "test_the_release_webhook_recipe") as page,
        StandInForge(
            "github", token=TOKEN, tls=tls, releases=[released(tmp_path, key, "1.0.0")]
        ) as forge,
    ):
        recipe = page.take("yaml", "webhooks:")
        assert "        repo: acme/terraform-provider-widget\n" in recipe
        recipe = recipe.replace(
            "        repo: acme/terraform-provider-widget\n",
            f"        repo: acme/terraform-provider-widget\n        api_url: '{forge.url}'\n",
        )
        (tmp_path / "registry.yaml").write_text(
            "hostname: registry.example.test\ncache_dir: cache\n"
            "signing: {verify_keys: [ci.asc]}\nmirror: {read_through: false}\n"
            f"credentials:\n  - {{url: '{forge.url}', ca_file: '{tls.ca_cert}'}}\n" + recipe
        )
        catalog = load_catalog(tmp_path / "registry.yaml")
        with served_over_tls(catalog, tls) as (_, client):
            assert _versions(client) == ["1.0.0"]
            forge.releases = [*forge.releases, released(tmp_path, key, "1.1.0")]
            hook = RELEASE_FORGES["github"]
            body, headers = hook.request(urlsplit(forge.url).netloc, PROJECT, "v1.1.0", SECRET)
            answer = client.post("/v1/webhooks/github", content=body, headers=headers)
            assert answer.status_code == 202, answer.text
            assert answer.json()["refreshing"] == [] and answer.json()["releases"] == [
                "acme/widget"
            ]
            wait_until(lambda: _versions(client) == ["1.1.0", "1.0.0"], 30, "1.1.0 served")
