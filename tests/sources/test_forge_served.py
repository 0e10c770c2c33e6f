"""A GitLab group's repositories served by the real app over HTTPS, as a team runs it: a stand-in
GitLab over HTTPS lists them a few a page, and a real `git http-backend` serves their clones over
HTTPS with the token of registry.yaml's `credentials` entry. Topics choose them, a `.gitreg.yaml`
declares a monorepo's modules, two claims of one address serve neither, a new repository
appears within the interval; one removed keeps its versions, a forge that rate-limits or fails
leaves the last survey serving, and a drop of most of the group is held.

(A new repository by webhook: tests/freshness/test_source_webhooks.py; a token the forge does
not take: tests/sources/test_forge_sources.py; a forge that cannot be reached at all, a silent
one, and every forge's faults: tests/sources/test_forge_faults.py, which clone nothing, since
those faults are the API's alone.)"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.conftest import WriteCatalog
from tests.support.forge_git import ForgeGit, forge_git
from tests.support.forge_shapes import ForgeRepository
from tests.support.forges import Fault, StandInForge
from tests.support.gitrepo import module_files
from tests.support.servers import GitHttpTap, RegistryServer, wait_until
from tests.support.tls_clients import served_over_tls

TOKEN = "glpat-https-s3cret"
MONOREPO = """modules:
  - {name: dns, system: aws, path: modules/dns}
  - {name: lb, system: aws, path: modules/lb}
"""


@dataclass
class Running:
    served: ForgeGit
    forge: StandInForge
    server: RegistryServer
    client: httpx.Client
    tap: GitHttpTap
    last_seen: dict[str, Any] = field(default_factory=dict)

    def versions(self, address: str) -> list[str]:
        answer = self.client.get(f"/v1/modules/{address}/versions")
        if answer.status_code != 200:
            return []
        return sorted(v["version"] for v in answer.json()["modules"][0]["versions"])

    def source(self) -> dict[str, Any]:
        (source,) = self.client.get("/v1/status").json()["sources"]
        assert isinstance(source, dict)
        return source

    def seen(self, state: str) -> bool:
        """Whether the source's status is in `state` now; what it said kept as `last_seen`."""
        self.last_seen = self.source()
        return bool(self.last_seen["state"] == state)

    def failing_with(self, error: str) -> bool:
        return error in (self.source()["error"] or "")

    def cloned(self) -> set[str]:
        """The repositories the Git server was asked for."""
        return {r.split()[1].split(".git/")[0].lstrip("/") for r in self.tap.requests}


def named(served: ForgeGit, path: str, version: str = "1.0.0") -> ForgeRepository:
    return served.publish(path, [(f"v{version}", module_files(version))], topics=["terraform"])


@contextmanager
def running(
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
    listed: Callable[[ForgeGit], list[ForgeRepository]],
) -> Iterator[Running]:
    """gitreg serving a GitLab group, `platform`, whose repositories `listed` publishes."""
    monkeypatch.setenv("GITLAB_TOKEN", TOKEN)  # the API's and the clones' token, as GitLab takes
    tap = GitHttpTap()
    with forge_git(tmp_path, TOKEN, tls, tap) as served:
        repositories = listed(served)
        with StandInForge("gitlab", repositories, token=TOKEN, tls=tls, page_size=2) as forge:
            catalog = write_catalog(
                served.credentials(forge.url, "GITLAB_TOKEN")
                + f"sources:\n  - gitlab: {{url: '{forge.url}', group: platform, namespace: infra,"
                f" token_env: GITLAB_TOKEN, topics: [terraform], interval: 300ms, {served.clone_hosts}}}\n"
            )
            with served_over_tls(catalog, tls, refresh=True) as (server, client):
                yield Running(served, forge, server, client, tap)
                status = client.get("/v1/status").text
                assert TOKEN not in status and TOKEN not in client.get("/metrics").text


def test_a_groups_repositories_are_served_and_a_new_one_appears_within_the_interval(
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def listed(served: ForgeGit) -> list[ForgeRepository]:
        monorepo = {
            ".gitreg.yaml": MONOREPO,
            **module_files("2.0.0", "modules/dns"),
            **module_files("2.0.0", "modules/lb"),
        }
        return [
            named(served, "platform/net/terraform-aws-vpc"),  # a subgroup's
            served.publish("platform/modules", [("v2.0.0", monorepo)], topics=["Terraform"]),
            named(served, "platform/terraform-aws-lb"),  # claims what the monorepo claims
            # Without the topic: skipped on its listing, never cloned (the Git server lacks it).
            ForgeRepository("platform/terraform-aws-sandbox", topics=("sandbox",)),
        ]

    with running(tmp_path, tls, write_catalog, monkeypatch, listed) as run:
        wait_until(
            lambda: (
                run.versions("infra/dns/aws") == ["2.0.0"]
                and run.versions("infra/vpc/aws") == ["1.0.0"]
            ),
            30,
            "the monorepo's dns and the subgroup's vpc",
        )
        assert run.versions("infra/lb/aws") == []  # claimed twice: neither serves
        source = run.source()
        assert source["state"] == "ok", source
        assert source["modules"] == ["infra/vpc/aws", "infra/dns/aws"]
        assert source["conflicts"] == [
            "module infra/lb/aws is claimed by sources[0] platform/modules and by"
            " sources[0] platform/terraform-aws-lb: neither is served until one of them"
            " stops claiming it"
        ]
        assert source["skipped"] == [
            {
                "repository": "platform/terraform-aws-sandbox",
                "why": "it does not carry the topics terraform",
            }
        ]
        assert source["api_calls"] >= 2  # the listing's two pages
        assert run.cloned() == {
            "platform/net/terraform-aws-vpc",
            "platform/modules",
            "platform/terraform-aws-lb",
        }

        # A new repository: served within the interval, no webhook, no edit of registry.yaml.
        nat = named(run.served, "platform/terraform-aws-nat", "3.0.0")
        run.forge.repositories = [*run.forge.repositories, nat]
        wait_until(lambda: run.versions("infra/nat/aws") == ["3.0.0"], 30, "the new nat")


def test_a_drop_is_held_faults_keep_the_last_survey_and_a_removed_repository_serves(
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def listed(served: ForgeGit) -> list[ForgeRepository]:
        return [named(served, f"platform/terraform-aws-{name}") for name in ("vpc", "dns", "nat")]

    addresses = ("infra/vpc/aws", "infra/dns/aws", "infra/nat/aws")

    def all_served() -> bool:
        return all(run.versions(a) == ["1.0.0"] for a in addresses)

    with running(tmp_path, tls, write_catalog, monkeypatch, listed) as run:
        wait_until(all_served, 30, "the three modules")
        vpc, dns, nat = run.forge.repositories

        # Two of the three repositories gone at once: held, not applied; all still serve.
        # (Read as the status said it then: the third survey in a row would apply it.)
        run.forge.repositories = [vpc]
        wait_until(lambda: run.seen(state="held"), 30, "the drop held")
        held = run.last_seen
        assert held["held"].startswith("would drop 2 of its 3 repositories at once: held"), held
        assert held["removed"] == [] and all_served()

        # A forge that rate-limits, then one that fails (its proxy's 503 while it is down):
        # the last survey keeps serving, and the status says why it is not renewed.
        for fault, said in (
            (Fault(429, b'{"message": "slow down"}'), "rate-limited (HTTP 429)"),
            (Fault(503, b"<html>Service Unavailable</html>"), "the forge fails (HTTP 503)"),
        ):
            run.forge.faults = [fault]
            wait_until(partial(run.failing_with, said), 30, said)
            assert run.source()["state"] == "failing (serving its last discovery)"
            assert all_served()
        assert run.source()["rate_limit_waits"] >= 1

        # The forge back, one repository deleted from it and from its Git server: its
        # published versions still serve, marked removed.
        run.served.delete(nat)
        run.forge.repositories = [vpc, dns]
        run.forge.faults = []
        wait_until(lambda: run.source()["removed"] == [nat.path], 30, "nat removed")
        assert run.source()["state"] == "ok"
        # The status says what was surveyed; the module API, once the world that serves it
        # is swapped in, a moment later.
        module = "/v1/modules/infra/nat/aws"
        wait_until(lambda: run.client.get(module).json().get("removed") is True, 30, "marked")
        assert all_served()
