"""A forge's event about a repository's being (GitHub's and Gitea's `repository`, GitLab's
`project_create`) surveys the source it names at once, against the real app over HTTPS: the new
repository, cloned from a real `git http-backend` over HTTPS with its token, is served right
after the delivery, long before the source's interval; a delivery signed with another secret is
refused as a push's is, and surveys nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from gitreg.freshness.webhooks import PARSERS, matching_sources
from gitreg.process.tlscert import TlsMaterial
from tests.conftest import WriteCatalog
from tests.support.forge_git import forge_git
from tests.support.forge_shapes import ForgeKind
from tests.support.forges import StandInForge
from tests.support.gitrepo import module_files
from tests.support.repository_events import repository_created, signed
from tests.support.servers import wait_until
from tests.support.tls_clients import served_over_tls

TOKEN = "forge-t0ken-s3cret"
SECRET = "hook-s3cret"


def _versions(client: httpx.Client, address: str) -> list[str]:
    answer = client.get(f"/v1/modules/{address}/versions")
    if answer.status_code != 200:
        return []
    return sorted(v["version"] for v in answer.json()["modules"][0]["versions"])


def _source(client: httpx.Client) -> dict[str, Any]:
    (source,) = client.get("/v1/status").json()["sources"]
    assert isinstance(source, dict)
    return source


@pytest.mark.parametrize("kind", ["gitea", "github", "gitlab"])
def test_a_repository_event_surveys_its_source_at_once(
    kind: ForgeKind,
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FORGE_TOKEN", TOKEN)  # the forge's API and its Git take one token
    monkeypatch.setenv("HOOK_SECRET", SECRET)
    with forge_git(tmp_path, TOKEN, tls) as served:
        vpc = served.publish("platform/terraform-aws-vpc", [("v1.0.0", module_files("1.0.0"))])
        dns = served.publish("platform/terraform-aws-dns", [("v2.0.0", module_files("2.0.0"))])
        with StandInForge(kind, [vpc], token=TOKEN, tls=tls) as forge:
            where = "api_url" if kind == "github" else "url"
            scope = "group" if kind == "gitlab" else "org"
            catalog = write_catalog(
                served.credentials(forge.url, "FORGE_TOKEN")
                + f"sources:\n  - {kind}: {{{where}: '{forge.url}', {scope}: platform,"
                " namespace: infra, token_env: FORGE_TOKEN, interval: 1h,"
                f" webhook: {{secret_env: HOOK_SECRET}}, {served.clone_hosts}}}\n"
            )
            with served_over_tls(catalog, tls, refresh=True) as (server, client):
                wait_until(lambda: _versions(client, "infra/vpc/aws") == ["1.0.0"], 30, "vpc")
                forge.repositories = [vpc, dns]
                payload, headers = repository_created(kind, "127.0.0.1", dns.path)
                body = json.dumps(payload).encode()
                endpoint = f"/v1/webhooks/{kind}"

                queue = server.state.background.surveys
                wait_until(lambda: not queue.busy(), 30, "the start's discovery done")
                asked = len(forge.asked)
                assert _source(client)["discoveries"]["ok"] == 1

                refused = client.post(
                    endpoint, content=body, headers={**headers, **signed(kind, "wrong", body)}
                )
                assert refused.status_code == 401, refused.text
                # A group no source lists, signed with the source's secret: judged as any event
                # of a repository gitreg does not serve, which only the global secret could
                # sign, and there is none. Refused as a push would be.
                other, _ = repository_created(kind, "127.0.0.1", "elsewhere/terraform-aws-dns")
                stray = json.dumps(other).encode()
                signed_stray = {**headers, **signed(kind, SECRET, stray)}
                answer = client.post(endpoint, content=stray, headers=signed_stray)
                assert answer.status_code == 401, answer.text
                # The refusals started nothing: no survey queued, none counted, none asked.
                assert not queue.busy()
                assert _source(client)["discoveries"]["ok"] == 1
                assert len(forge.asked) == asked

                accepted = client.post(
                    endpoint, content=body, headers={**headers, **signed(kind, SECRET, body)}
                )
                assert accepted.status_code == 202, accepted.text
                assert accepted.json()["discovering"] == ["sources[0]"]
                wait_until(lambda: _versions(client, "infra/dns/aws") == ["2.0.0"], 30, "dns")
                assert _versions(client, "infra/vpc/aws") == ["1.0.0"]
                wait_until(lambda: not queue.busy(), 30, "the webhook's discovery done")
                source = _source(client)
                assert source["discoveries"] == {"ok": 2, "unavailable": 0, "refused": 0, "held": 0}
                assert source["api_calls"] == len(forge.asked) and source["errors"] == 0

                # A flood of deliveries while a listing is under way: it, and one after it.
                flooding = {**headers, **signed(kind, SECRET, body)}
                with forge.held():
                    for _ in range(20):
                        answer = client.post(endpoint, content=body, headers=flooding)
                        assert answer.status_code == 202
                wait_until(lambda: not queue.busy(), 30, "the flood's discoveries done")
                assert _source(client)["discoveries"]["ok"] == 4
                metrics = client.get("/metrics").text
                ok = _source(client)["discoveries"]["ok"]
                line = f'gitreg_source_discoveries_total{{outcome="ok",source="sources[0]"}} {ok}.0'
                assert line in metrics.splitlines()
                assert TOKEN not in metrics and forge.url not in metrics


def test_a_repository_event_for_a_group_no_source_lists_surveys_nothing(
    write_catalog: WriteCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK_SECRET", SECRET)
    catalog = write_catalog(
        "webhooks: {secret_env: HOOK_SECRET}\n"
        "sources:\n"
        "  - gitlab: {url: 'https://gitlab.example.com', group: platform/terraform,"
        " namespace: infra}\n"
        "  - github: {org: acme}\n"
        "  - bitbucket: {url: 'https://bb.example.com', project: TF, namespace: tf}\n"
    )
    gitlab, github, bitbucket = catalog.sources

    def sources(forge: str, headers: dict[str, str], payload: dict[str, object]) -> list[str]:
        push = PARSERS[forge]({k.lower(): v for k, v in headers.items()}, payload)
        assert push.asks_survey
        return [s.key_path for s in matching_sources(catalog, forge, push)]

    table = [
        ("platform/terraform/net/terraform-aws-vpc", [gitlab.key_path]),  # a subgroup
        ("platform/terraform/terraform-aws-vpc", [gitlab.key_path]),
        ("platform/terraform-aws-vpc", []),  # the parent group
        ("platform/terraformx/terraform-aws-vpc", []),
    ]
    for path, expected in table:
        payload, headers = repository_created("gitlab", "", path)
        assert sources("gitlab", headers, payload) == expected, path
    group_hook: dict[str, object] = {  # a group hook's project event
        "object_kind": "project",
        "event_name": "project_created",
        "name": "terraform-aws-dns",
        "path_with_namespace": "platform/terraform/terraform-aws-dns",
    }
    assert sources("gitlab", {"X-Gitlab-Event": "Project Hook"}, group_hook) == [gitlab.key_path]
    payload, headers = repository_created("github", "github.com", "acme/terraform-aws-vpc")
    assert sources("github", headers, payload) == [github.key_path]
    payload, headers = repository_created("github", "github.example.com", "acme/terraform-aws-vpc")
    assert sources("github", headers, payload) == []  # another host's acme
    payload, headers = repository_created("gitea", "github.com", "acme/terraform-aws-vpc")
    assert sources("gitea", headers, payload) == []  # no gitea source
    modified: dict[str, object] = {
        "old": {"slug": "old-name", "project": {"key": "TF"}},
        "new": {
            "slug": "terraform-aws-vpc",
            "project": {"key": "TF"},
            "links": {"clone": [{"href": "https://bb.example.com/scm/tf/terraform-aws-vpc.git"}]},
        },
    }
    assert sources("bitbucket", {"X-Event-Key": "repo:modified"}, modified) == [bitbucket.key_path]
